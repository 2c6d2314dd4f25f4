"""Math grading end to end: `POST /v1/grade` on a real `rlvr serve` against Math-Verify
in a process pool of the same size, in one run, on the same items.

The items are `bench.math_grading`'s GRPO mix (G=8 responses per prompt sharing a
ground truth), every one distinct and sent once, in batches of `--batch` with the
group named, the service's verdict cache off: what is measured is decoding,
planning, the hand-off to workers, extraction, comparison and encoding, as a
trainer's step pays for them. `--in-flight` batches are outstanding at once, as a
trainer sends a step's batch while the last one is graded. Math-Verify runs as TRL
and open-r1 call it (`parse` the gold, `parse` the response, `verify`) in a pool of
`--workers` processes, fed in chunks. Both sides warm up on other items first.

    python -m bench.math_http [--items 8192] [--batch 256] [--workers 2]
    python -m bench.math_grading --http     # the same
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from bench.math_grading import G, Item, make_items
from tests.services import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[1]
MV_CHUNK = 64


def _bodies(items: list[Item], batch: int, seed: int) -> list[bytes]:
    out = []
    for start in range(0, len(items), batch):
        rows = [
            {
                "prompt": it.prompt,
                "response": it.response,
                "ground_truth": it.gold,
                "verifier": "math",
                "group": f"{seed}:{(start + i) // G}",
            }
            for i, it in enumerate(items[start : start + batch])
        ]
        out.append(json.dumps({"items": rows}).encode())
    return out


def _post(client: httpx.Client, body: bytes) -> list[bool]:
    r = client.post("/v1/grade", content=body, headers={"content-type": "application/json"})
    r.raise_for_status()
    return [res["reward"] == 1.0 for res in r.json()["results"]]


def run_http(items: list[Item], warm: list[Item], args: argparse.Namespace) -> tuple[list[bool], float]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLVR_")}
    env |= {"RLVR_CACHE_ENTRIES": "0", "RLVR_LOG_LEVEL": "warning"}
    cmd = [sys.executable, "-m", "rlvr", "serve", "--port", str(port), "--workers", str(args.workers)]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, server)
        bodies = _bodies(items, args.batch, args.seed)
        with httpx.Client(base_url=url, timeout=600) as client, ThreadPoolExecutor(args.in_flight) as pool:
            list(pool.map(lambda b: _post(client, b), _bodies(warm, args.batch, args.seed + 1)))
            start = time.perf_counter()
            graded = list(pool.map(lambda b: _post(client, b), bodies))
            elapsed = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(timeout=30)
    return [ok for batch in graded for ok in batch], elapsed


def _math_verify_chunk(chunk: list[tuple[str, str]]) -> list[bool]:
    from math_verify import parse, verify

    logging.disable(logging.WARNING)  # Math-Verify logs every timeout and parse failure
    return [bool(verify(parse(f"${gold}$"), parse(response))) for gold, response in chunk]


def run_math_verify_pool(items: list[Item], warm: list[Item], workers: int) -> tuple[list[bool], float]:
    def chunks(its: list[Item]) -> list[list[tuple[str, str]]]:
        pairs = [(it.gold, it.response) for it in its]
        return [pairs[i : i + MV_CHUNK] for i in range(0, len(pairs), MV_CHUNK)]

    with multiprocessing.get_context("fork").Pool(workers) as pool:
        pool.map(_math_verify_chunk, chunks(warm))
        start = time.perf_counter()
        graded = pool.map(_math_verify_chunk, chunks(items))
        elapsed = time.perf_counter() - start
    return [ok for chunk in graded for ok in chunk], elapsed


def _accuracy(graded: list[bool], items: list[Item]) -> float:
    return sum(g == it.label for g, it in zip(graded, items, strict=True)) / len(items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--in-flight", type=int, default=4)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    items = make_items(args.items, args.seed)
    warm = make_items(4 * args.batch, args.seed + 1)
    rlvr, t_rlvr = run_http(items, warm, args)
    mv, t_mv = run_math_verify_pool(items, warm, args.workers)
    n = len(items)
    rows: list[tuple[str, Any, Any, Any]] = [
        (f"rlvr, POST /v1/grade ({args.workers} workers)", n / t_rlvr, t_rlvr, _accuracy(rlvr, items)),
        (f"Math-Verify, pool of {args.workers} (anchor)", n / t_mv, t_mv, _accuracy(mv, items)),
    ]
    print(f"items: {n} distinct ({n // G} prompts x G={G}), batches of {args.batch}, cache off")
    print(f"{'grader':<40}{'items/s':>10}{'seconds':>10}{'accuracy':>10}")
    for name, rate, secs, acc in rows:
        print(f"{name:<40}{rate:>10,.0f}{secs:>10.2f}{acc:>10.1%}")
    print(f"ratio rlvr / Math-Verify: {t_mv / t_rlvr:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
