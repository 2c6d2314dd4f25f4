"""Sandbox throughput: isolated runs/s of a trivial Python test against a fresh
`python -c` per run, then HumanEval graded end to end through HTTP.

    .venv/bin/python -m bench.sandbox [--runs 2000] [--procs 2] [--skip-http]

Isolated runs use one client process per core, each with its own zygote (as verifier
workers do), submitting jobs concurrently.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

ROOT = Path(__file__).resolve().parent.parent

CODE = "def add(a, b):\n    return a + b\n"
EXPR = "add(1, 2)"


def _client(runs: int) -> None:
    from rlvr.sandboxes import RunSpec
    from rlvr.sandboxes.local.client import get_local_sandbox

    box = get_local_sandbox()
    box.isolation()  # start the zygote outside the timed part
    job = {"mode": "values", "code": CODE, "exprs": [EXPR], "timeout_s": 2}
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.perf_counter()
    results = box.run_many([RunSpec(dict(job)) for _ in range(runs)])
    elapsed = time.perf_counter() - started
    ok = sum(r.records[-1:] == [{"i": 0, "s": "ok", "v": 3}] for r in results)
    print(json.dumps({"ok": ok, "elapsed": elapsed, "isolation": box.isolation()["isolation"]}), flush=True)


def isolated(runs: int, procs: int) -> tuple[float, int, str]:
    per = runs // procs
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.sandbox", "--client", str(per)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(procs)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    reports = [json.loads(child.communicate()[0].strip().splitlines()[-1]) for child in children]
    elapsed = time.perf_counter() - started
    return per * procs / elapsed, sum(r["ok"] for r in reports), reports[0]["isolation"]


def fresh_interpreter(runs: int, procs: int) -> float:
    program = CODE + f"assert {EXPR} == 3\n"

    def one(_: int) -> int:
        return subprocess.run([sys.executable, "-c", program], check=False).returncode

    started = time.perf_counter()
    with ThreadPoolExecutor(procs) as pool:
        codes = list(pool.map(one, range(runs)))
    assert not any(codes)
    return runs / (time.perf_counter() - started)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def humaneval_http(batch: int) -> tuple[float, int, int]:
    import httpx

    from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems

    items = [
        {
            "prompt": p["prompt"],
            "response": f"```python\n{canonical(p)}\n```",
            "verifier": "code",
            "ground_truth": ground_truth(p),
            "params": {},
        }
        for p in load_problems()
    ]
    port = _free_port()
    server = _start_server(port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            _wait_ready(client, server)
            # Warm-up (items not in the timed set, so no cache hits): every worker starts its zygote.
            client.post("/v1/grade", json={"items": _warm_up_items()})
            started = time.perf_counter()
            rewards: list[float] = []
            for i in range(0, len(items), batch):
                r = client.post("/v1/grade", json={"items": items[i : i + batch]})
                if r.status_code != 200:
                    raise RuntimeError(f"/v1/grade answered {r.status_code}: {r.text[:500]}")
                rewards += [x["reward"] for x in r.json()["results"]]
            elapsed = time.perf_counter() - started
        return len(items) / elapsed, sum(x == 1.0 for x in rewards), len(items)
    finally:
        server.terminate()
        server.wait(timeout=15)


def _start_server(port: int) -> subprocess.Popen[bytes]:
    rlvr = ROOT / ".venv" / "bin" / "rlvr"
    cmd = [str(rlvr)] if rlvr.exists() else [sys.executable, "-m", "rlvr"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.Popen(
        [*cmd, "serve", "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _wait_ready(client: httpx.Client, server: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 90
    while True:
        try:
            if client.get("/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise RuntimeError("rlvr serve did not become ready")
        time.sleep(0.2)


def _warm_up_items() -> list[dict[str, Any]]:
    return [
        {
            "prompt": "",
            "response": CODE,
            "verifier": "code",
            "params": {},
            "ground_truth": {"tests": [f"assert add({i}, 1) == {i + 1}"]},
        }
        for i in range(16)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--batch", type=int, default=164, help="HumanEval items per HTTP request")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--client", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        _client(args.client)
        return
    rate, ok, level = isolated(args.runs, args.procs)
    fresh = fresh_interpreter(max(200, args.runs // 5), args.procs)
    print(f"trivial Python test on {args.procs} cores ({args.runs} runs)")
    print(f"  isolated sandbox (zygote fork, isolation={level}): {rate:8.0f} runs/s  ({ok} correct)")
    print(f"  fresh `python -c` subprocess per run, no isolation: {fresh:8.0f} runs/s")
    print(f"  ratio: {rate / fresh:.2f}x")
    if not args.skip_http:
        items_s, passed, total = humaneval_http(args.batch)
        print(
            f"HumanEval end to end through HTTP (/v1/grade, canonical solutions): {items_s:.1f} items/s, "
            f"{passed}/{total} reward 1"
        )


if __name__ == "__main__":
    main()
