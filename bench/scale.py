"""Scale-out over Redis: items/s with 1, 2 and 4 `rlvr worker` processes, and the
per-item cost of the Redis path against embedded mode on the same items.

    python -m bench.scale [--items 6000] [--batch 1000]

Starts its own redis-server (must be on PATH), API and workers on free ports.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.services import free_port, terminate, wait_ready

ROOT = Path(__file__).resolve().parents[1]


def items(n: int, tag: str) -> list[dict[str, object]]:
    return [
        {"response": f"<think>{tag} {i} {'x' * 50}</think><answer>{i}</answer>", "verifier": "format"} for i in range(n)
    ]


def measure(url: str, batch: list[dict[str, object]], size: int) -> float:
    with httpx.Client(base_url=url, timeout=600) as client:
        client.post("/v1/grade", json={"items": items(100, "warm" + url)}).raise_for_status()
        start = time.perf_counter()
        for i in range(0, len(batch), size):
            client.post("/v1/grade", json={"items": batch[i : i + size]}).raise_for_status()
        return len(batch) / (time.perf_counter() - start)


def rlvr(command: str, *args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "rlvr", command, *args], env=env, cwd=ROOT)


def embedded_rate(args: argparse.Namespace, env: dict[str, str]) -> float:
    port = free_port()
    server = rlvr("serve", "--port", str(port), "--workers", "2", env=env)
    try:
        wait_ready(f"http://127.0.0.1:{port}", server)
        return measure(f"http://127.0.0.1:{port}", items(args.items, "emb"), args.batch)
    finally:
        terminate(server)


def redis_rates(args: argparse.Namespace, env: dict[str, str], redis_url: str) -> list[tuple[str, float]]:
    port = free_port()
    api_url = f"http://127.0.0.1:{port}"
    api = rlvr("serve", "--port", str(port), "--workers", "1", "--redis-url", redis_url, env=env)
    rows: list[tuple[str, float]] = []
    try:
        wait_ready(api_url, api)
        for n in (1, 2, 4):
            worker = rlvr("worker", "--redis-url", redis_url, "--processes", str(n), env=env)
            try:
                time.sleep(3)  # the worker's forkserver imports the verifiers
                rate = measure(api_url, items(args.items, f"r{n}"), args.batch)
            finally:
                terminate(worker)
            rows.append((f"redis, 1 worker x {n} processes", rate))
    finally:
        terminate(api)
    return rows


def report(args: argparse.Namespace, rows: list[tuple[str, float]]) -> None:
    print(f"{args.items} format items in batches of {args.batch}, cache off (distinct responses), 2 cores")
    print(f"{'setup':<36}{'items/s':>10}{'µs/item':>10}")
    for name, rate in rows:
        print(f"{name:<36}{rate:>10,.0f}{1e6 / rate:>10.1f}")
    rates = dict(rows)
    extra_us = 1e6 / rates["redis, 1 worker x 2 processes"] - 1e6 / rates["embedded, 2 processes"]
    print(f"per-item cost of the Redis path vs embedded (2 processes each): {extra_us:.1f} µs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=1000)
    args = ap.parse_args()
    env = {**os.environ, "RLVR_LOG_LEVEL": "warning", "RLVR_CACHE_ENTRIES": "0", "PYTHONPATH": str(ROOT / "src")}
    rport = free_port()
    redis = subprocess.Popen(
        ["redis-server", "--port", str(rport), "--save", "", "--dir", tempfile.mkdtemp()], stdout=subprocess.DEVNULL
    )
    try:
        rows = [("embedded, 2 processes", embedded_rate(args, env))]
        rows += redis_rates(args, env, f"redis://127.0.0.1:{rport}/0")
    finally:
        terminate(redis)
    report(args, rows)


if __name__ == "__main__":
    main()
