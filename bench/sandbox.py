"""Sandbox throughput: isolated runs/s of a trivial Python test against a fresh
`python -c` per run, then the `code` verifier end to end through HTTP: trivial
call-based items in batches of 500, and HumanEval.

    .venv/bin/python -m bench.sandbox [--runs 2000] [--procs 2] [--skip-http] [--against DIR]

Isolated runs use one client process per core, each with its own zygote (as verifier
workers do), submitting jobs concurrently. Through HTTP, every item's response is
distinct (a numbered comment), so no verdict comes from the cache.

Items through HTTP are set beside two anchors: a fresh `python -c` per item (what a
grader without a zygote pays), and a warm interpreter per core that forks one child
per item and runs the same program in it, with no isolation, no channel, no HTTP and
no grading: the floor of any design that gives each item its own process, as this
machine measures it in the same run.

`--against DIR` measures the same items through a server started from another checkout
(a `git worktree` of an earlier commit, sharing this venv), in turns with this one, so
that a speedup is a ratio of one run rather than of two days on a machine whose speed
drifts. Issue 10's baseline (HumanEval at 239 items/s, trivial items at about 370) is
c6153bb, the commit before the batch path:

    git worktree add ../rlvr-c6153bb c6153bb && .venv/bin/python -m bench.sandbox --against ../rlvr-c6153bb
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.sandboxes.jobs import ValuesJob

if TYPE_CHECKING:
    import httpx

ROOT = Path(__file__).resolve().parent.parent

CODE = "def add(a, b):\n    return a + b\n"
EXPR = "add(1, 2)"


def _client(runs: int) -> None:
    from rlvr.sandboxes import RunSpec
    from rlvr.sandboxes.local.sandbox import get_local_sandbox

    box = get_local_sandbox()
    box.isolation()  # start the zygote outside the timed part
    job = ValuesJob(code=CODE, exprs=[EXPR], timeout_s=2)
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.perf_counter()
    results = box.run_many([RunSpec(job) for _ in range(runs)])
    elapsed = time.perf_counter() - started
    ok = sum(r.records[-1:] == [{"i": 0, "s": "ok", "v": 3}] for r in results)
    print(json.dumps({"ok": ok, "elapsed": elapsed, "isolation": box.isolation()["isolation"]}), flush=True)


def _timed_clients(args: list[str], inputs: list[str]) -> tuple[float, list[dict[str, Any]]]:
    """Start one `python -m bench.sandbox ARGS` per input line, wait until each says
    `ready`, then start them together: wall seconds until all finished, and the JSON
    report each printed last."""
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.sandbox", *args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in inputs
    ]
    for child, line in zip(children, inputs, strict=True):
        assert child.stdin is not None and child.stdout is not None
        if line:
            child.stdin.write(line + "\n")
            child.stdin.flush()
        assert child.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    reports = [json.loads(child.communicate()[0].strip().splitlines()[-1]) for child in children]
    return time.perf_counter() - started, reports


def isolated(runs: int, procs: int) -> tuple[float, int, str]:
    per = runs // procs
    elapsed, reports = _timed_clients(["--client", str(per)], [""] * procs)
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


def trivial_items(n: int, tag: str) -> list[dict[str, Any]]:
    return [
        {
            "prompt": "",
            "response": f"```python\n{CODE}# {tag} {i}\n```",
            "verifier": "code",
            "ground_truth": {"fn_name": "add", "inputs": [[i, 1]], "outputs": [i + 1]},
        }
        for i in range(n)
    ]


def humaneval_items(tag: str) -> list[dict[str, Any]]:
    from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems

    return [
        {
            "prompt": p["prompt"],
            "response": f"```python\n{canonical(p)}\n# {tag}\n```",
            "verifier": "code",
            "ground_truth": ground_truth(p),
        }
        for p in load_problems()
    ]


def http_rate(rounds: list[list[dict[str, Any]]], root: Path = ROOT) -> tuple[float, int, int]:
    """Items/s through `POST /v1/grade` of a fresh `rlvr serve` of the checkout at `root`,
    one request per round, and how many of the items got reward 1."""
    import httpx

    port = _free_port()
    server = _start_server(port, root)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            _wait_ready(client, server)
            # Warm-up (items not in the timed set, so no cache hits): every worker starts its zygote.
            client.post("/v1/grade", json={"items": _warm_up_items()})
            started = time.perf_counter()
            rewards: list[float] = []
            for items in rounds:
                r = client.post("/v1/grade", json={"items": items})
                if r.status_code != 200:
                    raise RuntimeError(f"/v1/grade answered {r.status_code}: {r.text[:500]}")
                rewards += [x["reward"] for x in r.json()["results"]]
            elapsed = time.perf_counter() - started
        return len(rewards) / elapsed, sum(x == 1.0 for x in rewards), len(rewards)
    finally:
        server.terminate()
        server.wait(timeout=15)


def _program(item: dict[str, Any]) -> str:
    """An item's program and its tests as one script, for the anchors."""
    code = item["response"].split("```python\n", 1)[1].rsplit("```", 1)[0]
    gt = item["ground_truth"]
    if "fn_name" in gt:
        checks = [
            f"assert {gt['fn_name']}(*{args!r}) == {out!r}"
            for args, out in zip(gt["inputs"], gt["outputs"], strict=True)
        ]
        return code + "\n" + "\n".join(checks) + "\n"
    return code + "\n" + gt["test"] + f"\ncheck({gt['entry_point']})\n"


def fresh_interpreter_items(items: list[dict[str, Any]], procs: int) -> float:
    """The anchor: each item's program and its tests in a fresh `python -c`, no isolation."""

    def one(item: dict[str, Any]) -> int:
        return subprocess.run([sys.executable, "-c", _program(item)], check=False, capture_output=True).returncode

    started = time.perf_counter()
    with ThreadPoolExecutor(procs) as pool:
        codes = list(pool.map(one, items))
    assert not any(codes), "a fresh interpreter failed an item the sandbox passes"
    return len(items) / (time.perf_counter() - started)


def _fork_client() -> None:
    """One core's share of the fork-per-item floor: programs on stdin (JSON), one
    forked child each, which runs it and exits. The parent holds what a zygote holds."""
    import gc

    from rlvr.sandboxes.local.zygote import PRELOAD

    for name in PRELOAD:
        __import__(name)
    programs = [compile(text, "<item>", "exec") for text in json.loads(sys.stdin.readline())]
    gc.collect()
    gc.freeze()
    print("ready", flush=True)
    sys.stdin.readline()
    failed = 0
    started = time.perf_counter()
    for code in programs:
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                exec(code, {"__name__": "__main__"})
                status = 0
            finally:
                os._exit(status)
        failed += os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0
    print(json.dumps({"failed": failed, "elapsed": time.perf_counter() - started}), flush=True)


def fork_floor_items(items: list[dict[str, Any]], procs: int) -> float:
    """The floor: items/s of a warm interpreter per core forking a child per item."""
    shares = [json.dumps([_program(item) for item in items[i::procs]]) for i in range(procs)]
    elapsed, reports = _timed_clients(["--fork-client"], shares)
    assert not any(r["failed"] for r in reports), "a forked child failed an item the sandbox passes"
    return len(items) / elapsed


def _start_server(port: int, root: Path = ROOT) -> subprocess.Popen[bytes]:
    rlvr = root / ".venv" / "bin" / "rlvr"
    cmd = [str(rlvr)] if rlvr.exists() else [sys.executable, "-m", "rlvr"]
    # A checkout before the src/ layout holds `rlvr` at its root.
    package_root = root / "src" if (root / "src" / "rlvr").is_dir() else root
    paths = (str(package_root), os.environ.get("PYTHONPATH"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    return subprocess.Popen(
        [*cmd, "serve", "--port", str(port)], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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
    parser.add_argument("--batch", type=int, default=500, help="trivial items per HTTP request")
    parser.add_argument("--http-items", type=int, default=5000, help="trivial items graded through HTTP")
    parser.add_argument("--humaneval-rounds", type=int, default=5, help="requests of all 164 HumanEval items")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument(
        "--against", type=Path, action="append", default=[], help="another checkout to measure through HTTP in turns"
    )
    parser.add_argument("--turns", type=int, default=3, help="turns of each checkout with --against")
    parser.add_argument("--client", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--fork-client", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    for other in args.against:
        if not any((other / where / "__init__.py").is_file() for where in ("src/rlvr", "rlvr")):
            parser.error(f"--against {other}: not a checkout of rlvr (no src/rlvr/__init__.py there)")
    if args.turns < 1:
        parser.error("--turns: at least 1")
    if args.client:
        _client(args.client)
        return
    if args.fork_client:
        _fork_client()
        return
    rate, ok, level = isolated(args.runs, args.procs)
    fresh = fresh_interpreter(max(200, args.runs // 5), args.procs)
    print(f"trivial Python test on {args.procs} cores ({args.runs} runs)")
    print(f"  isolated sandbox (zygote fork, isolation={level}): {rate:8.0f} runs/s  ({ok} correct)")
    print(f"  fresh `python -c` subprocess per run, no isolation: {fresh:8.0f} runs/s")
    print(f"  ratio: {rate / fresh:.2f}x")
    if not args.skip_http:
        _http_report(args.http_items, args.batch, args.humaneval_rounds, args.procs)
    if args.against:
        _against_report(args.against, args.turns, args.http_items, args.batch, args.humaneval_rounds)


def _http_report(n: int, batch: int, humaneval_rounds: int, procs: int) -> None:
    trivial = trivial_items(n, "run")
    rate, passed, total = http_rate([trivial[i : i + batch] for i in range(0, n, batch)])
    print(f"trivial call-based Python items through HTTP (/v1/grade, batches of {batch})")
    _print_anchored(rate, passed, total, trivial, procs)
    rounds = [humaneval_items(f"round {r}") for r in range(humaneval_rounds)]
    rate, passed, total = http_rate(rounds)
    print(f"HumanEval canonical solutions through HTTP ({humaneval_rounds} requests of {len(rounds[0])} items)")
    _print_anchored(rate, passed, total, [item for items in rounds for item in items], procs)


def _against_report(others: list[Path], turns: int, n: int, batch: int, humaneval_rounds: int) -> None:
    """This checkout and each of `others` through HTTP, in turns (A B A B ...): the
    median items/s of each, and this one's as a multiple of theirs."""
    kinds: dict[str, Callable[[str], list[list[dict[str, Any]]]]] = {
        f"trivial call-based items (batches of {batch})": lambda tag: _batched(trivial_items(n, tag), batch),
        f"HumanEval ({humaneval_rounds} requests of 164)": lambda tag: [
            humaneval_items(f"{tag} {r}") for r in range(humaneval_rounds)
        ],
    }
    roots = [ROOT, *(other.resolve() for other in others)]
    for label, make in kinds.items():
        rates: dict[Path, list[float]] = {root: [] for root in roots}
        for turn in range(turns):
            for root in roots:
                rate, passed, total = http_rate(make(f"{root.name} {turn}"), root)
                if passed != total:
                    raise RuntimeError(f"{root}: {total - passed} of {total} items did not get reward 1")
                rates[root].append(rate)
        ours = statistics.median(rates[ROOT])
        print(f"{label}, {turns} turns each, median items/s")
        for root in roots:
            theirs = statistics.median(rates[root])
            figures = " ".join(f"{r:.0f}" for r in rates[root])
            print(f"  {root!s:42} {theirs:8.0f} items/s  ({figures}; this checkout {ours / theirs:.2f}x)")


def _batched(items: list[dict[str, Any]], batch: int) -> list[list[dict[str, Any]]]:
    return [items[i : i + batch] for i in range(0, len(items), batch)]


def _print_anchored(rate: float, passed: int, total: int, items: list[dict[str, Any]], procs: int) -> None:
    fresh = fresh_interpreter_items(items[: max(200, len(items) // 10)], procs)
    floor = fork_floor_items(items, procs)
    print(f"  rlvr serve, code verifier:                 {rate:8.0f} items/s  ({passed}/{total} reward 1)")
    print(f"  fresh `python -c` per item, no isolation:  {fresh:8.0f} items/s  (rlvr {rate / fresh:.2f}x)")
    print(f"  warm fork per item, no isolation or HTTP:  {floor:8.0f} items/s  (rlvr at {rate / floor:.0%} of it)")


if __name__ == "__main__":
    main()
