"""Service overhead: 10,000 `format` items in batches of 1,000 through HTTP.

Prints items/s through a real `rlvr serve`, beside the same items verified in one
process with no service at all (the anchor), and the API overhead per item in µs.

    python -m bench.service [--items 10000] [--batch 1000] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.format import FormatParams, FormatVerifier
from tests.services import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[1]


def make_items(n: int) -> list[dict[str, object]]:
    # Distinct responses so that neither the cache nor batch dedupe hides any work.
    items: list[dict[str, object]] = []
    for i in range(n):
        good = i % 3 != 0
        body = f"<think>step {i}: {'reasoning ' * 20}</think>\n<answer>{i}</answer>"
        items.append({"id": str(i), "response": body if good else f"no tags {i}", "verifier": "format"})
    return items


def in_process(items: list[dict[str, object]]) -> float:
    verifier, params = FormatVerifier(), FormatParams()
    start = time.perf_counter()
    for item in items:
        verifier.verify(GradeInput("", str(item["response"])), params, None)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=1_000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    items = make_items(args.items)

    port = free_port()
    env = {**os.environ, "RLVR_CACHE_ENTRIES": "0", "RLVR_LOG_LEVEL": "warning"}
    server = subprocess.Popen(
        [sys.executable, "-m", "rlvr", "serve", "--port", str(port), "--workers", str(args.workers)],
        cwd=ROOT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, server)
        with httpx.Client(base_url=url, timeout=300) as client:
            client.post("/v1/grade", json={"items": make_items(200)})  # warm-up
            verify_ms = 0.0
            start = time.perf_counter()
            for i in range(0, len(items), args.batch):
                r = client.post("/v1/grade", json={"items": items[i : i + args.batch]})
                r.raise_for_status()
                verify_ms += sum(res["elapsed_ms"] for res in r.json()["results"])
            http_s = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(timeout=30)

    local_s = in_process(items)
    n = len(items)
    per_item_http_us = http_s / n * 1e6
    # Time the workers spent verifying, spread over the pool, is not API overhead.
    overhead_us = per_item_http_us - verify_ms * 1000.0 / n / args.workers
    print(f"items: {n} in batches of {args.batch}, {args.workers} worker processes, cache off")
    print(f"{'path':<34}{'items/s':>12}{'µs/item':>12}")
    print(f"{'rlvr over HTTP':<34}{n / http_s:>12,.0f}{per_item_http_us:>12.1f}")
    print(f"{'in-process verify (anchor)':<34}{n / local_s:>12,.0f}{local_s / n * 1e6:>12.1f}")
    print(f"API overhead per item: {overhead_us:.1f} µs (HTTP wall time per item less verifier time per worker)")
    print(f"ratio HTTP / in-process throughput: {(n / http_s) / (n / local_s):.2f}")


if __name__ == "__main__":
    main()
