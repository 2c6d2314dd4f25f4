"""`POST /run_code` against a plain subprocess per request, as SandboxFusion runs code
by default (its `isolation: none`: write the program to a temporary directory, start
`python main.py` through bash, collect stdout and stderr). A trivial Python program,
`--concurrency` requests at once, in one run.

    python -m bench.run_code [--runs 400] [--concurrency 8] [--workers N]

The anchor has no isolation at all; `/run_code` runs each program in the sandbox the
`code` verifier uses (namespaces, seccomp, rlimits: see README), through HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.single_items import Connection, cpu_s
from tests.services import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[1]
Run = Callable[[Connection, int], Awaitable[None]]
PROGRAM = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"


async def subprocess_run(i: int) -> None:
    """What SandboxFusion does per request without isolation."""
    with tempfile.TemporaryDirectory() as workdir:
        Path(workdir, "main.py").write_text(PROGRAM)
        proc = await asyncio.create_subprocess_shell(
            f"cd {shlex.quote(workdir)} && {shlex.quote(sys.executable)} main.py",
            executable="/bin/bash",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        out, _ = await proc.communicate(f"{i} 1".encode())
    if out != f"{i + 1}\n".encode():
        raise RuntimeError(f"subprocess run {i}: {out!r}")


async def concurrently(port: int, n: int, concurrency: int, run: Run) -> float:
    """Seconds for `n` runs, `concurrency` at a time (each with its own connection)."""
    queue = iter(range(n))

    async def worker() -> None:
        conn = Connection(port)
        for i in queue:
            await run(conn, i)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


async def via_rlvr(conn: Connection, i: int) -> None:
    body = await conn.post("/run_code", {"code": PROGRAM, "language": "python", "stdin": f"{i} 1"})
    if f'"stdout":"{i + 1}\\n"'.encode() not in body or b'"status":"Success"' not in body:
        raise RuntimeError(f"run_code {i}: {body[:300]!r}")


async def via_subprocess(conn: Connection, i: int) -> None:
    await subprocess_run(i)  # no connection: the anchor runs here


async def measure(args: argparse.Namespace, port: int, pid: int) -> list[tuple[str, float, float]]:
    """(path, wall seconds, API-process CPU seconds) of `args.runs` runs each way."""
    c = args.concurrency
    await concurrently(port, 40, c, via_rlvr)  # warm-up: the pool and its zygotes start
    await concurrently(port, 40, c, via_subprocess)
    anchor = await concurrently(port, args.runs, c, via_subprocess)
    before = cpu_s(pid)
    ours = await concurrently(port, args.runs, c, via_rlvr)
    return [
        ("subprocess per request (SandboxFusion default)", anchor, 0.0),
        ("rlvr /run_code", ours, cpu_s(pid) - before),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    port = free_port()
    env = {**os.environ, "RLVR_LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "rlvr", "serve", "--port", str(port), "--workers", str(args.workers)]
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        wait_ready(f"http://127.0.0.1:{port}", server)
        rows = asyncio.run(measure(args, port, server.pid))
    finally:
        server.terminate()
        server.wait(timeout=30)
    anchor = rows[0][1]
    print(f"runs: {args.runs} trivial Python programs, {args.concurrency} at once, {args.workers} run_code processes")
    print(f"{'path':<50}{'runs/s':>9}{'ms/run':>9}{'vs anchor':>11}")
    for name, wall, _ in rows:
        print(f"{name:<50}{args.runs / wall:>9,.0f}{wall / args.runs * 1e3:>9.1f}{anchor / wall:>11.2f}")
    print(f"API process CPU per /run_code request: {rows[1][2] / args.runs * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
