"""Scale-out over Redis: items/s with 1, 2 and 4 `rlvr worker` processes, and the
per-item cost of the Redis path against embedded mode on the same items.

    python bench/scale.py [--items 6000] [--batch 1000]

Starts its own redis-server (must be on PATH), API and workers on free ports.
"""

from __future__ import annotations

import sys

# bench/math.py would shadow the stdlib `math` for scripts run from this folder.
sys.path[:] = [p for p in sys.path if not p.rstrip("/").endswith("bench")]

import argparse
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def items(n: int, tag: str) -> list[dict[str, object]]:
    return [
        {"response": f"<think>{tag} {i} {'x' * 50}</think><answer>{i}</answer>", "verifier": "format"} for i in range(n)
    ]


def wait_ready(url: str) -> None:
    for _ in range(600):
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} not ready")


def measure(url: str, batch: list[dict[str, object]], size: int) -> float:
    with httpx.Client(base_url=url, timeout=600) as client:
        client.post("/v1/grade", json={"items": items(100, "warm" + url)}).raise_for_status()
        start = time.perf_counter()
        for i in range(0, len(batch), size):
            client.post("/v1/grade", json={"items": batch[i : i + size]}).raise_for_status()
        return len(batch) / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=1000)
    args = ap.parse_args()
    env = {**os.environ, "RLVR_LOG_LEVEL": "warning", "RLVR_CACHE_ENTRIES": "0", "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen[bytes]] = []
    rport = free_port()
    tmp = tempfile.mkdtemp()
    procs.append(
        subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--dir", tmp], stdout=subprocess.DEVNULL)
    )
    redis_url = f"redis://127.0.0.1:{rport}/0"
    rows: list[tuple[str, float]] = []
    try:
        port = free_port()
        emb = subprocess.Popen(
            [sys.executable, "-m", "rlvr", "serve", "--port", str(port), "--workers", "2"], env=env, cwd=ROOT
        )
        wait_ready(f"http://127.0.0.1:{port}")
        embedded_rate = measure(f"http://127.0.0.1:{port}", items(args.items, "emb"), args.batch)
        emb.terminate()
        emb.wait()
        rows.append(("embedded, 2 processes", embedded_rate))

        port = free_port()
        api_url = f"http://127.0.0.1:{port}"
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "rlvr",
                    "serve",
                    "--port",
                    str(port),
                    "--workers",
                    "1",
                    "--redis-url",
                    redis_url,
                ],
                env=env,
                cwd=ROOT,
            )
        )
        wait_ready(api_url)
        for n in (1, 2, 4):
            worker = subprocess.Popen(
                [sys.executable, "-m", "rlvr", "worker", "--redis-url", redis_url, "--processes", str(n)],
                env=env,
                cwd=ROOT,
            )
            time.sleep(3)  # the worker's forkserver imports the verifiers
            rows.append((f"redis, 1 worker x {n} processes", measure(api_url, items(args.items, f"r{n}"), args.batch)))
            worker.terminate()
            worker.wait()
    finally:
        for p in procs:
            p.terminate()
            p.wait()
    print(f"{args.items} format items in batches of {args.batch}, cache off (distinct responses), 2 cores")
    print(f"{'setup':<36}{'items/s':>10}{'µs/item':>10}")
    for name, rate in rows:
        print(f"{name:<36}{rate:>10,.0f}{1e6 / rate:>10.1f}")
    redis2 = dict(rows)["redis, 1 worker x 2 processes"]
    print(
        f"per-item cost of the Redis path vs embedded (2 processes each): {1e6 / redis2 - 1e6 / embedded_rate:.1f} µs"
    )


if __name__ == "__main__":
    main()
