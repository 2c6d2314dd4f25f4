"""Single-item requests, as verl's reward loop and OpenRLHF send them, against batched
`/v1/grade` (the anchor): items/s through a real `rlvr serve`, in one run.

    python -m bench.single_items [--items 4000] [--concurrency 64] [--batch 500] [--workers N]

Items are distinct `format` items (cheap to verify, cache off), so what differs between
the paths is the cost of a request, not of grading. Single items go over
`--concurrency` keep-alive connections at once; OpenRLHF opens a new connection per
request, so that path is measured too. The client is a few lines of asyncio (a full
Python HTTP client costs more per request than the server); it runs on the same
machine, and its CPU counts against every path alike. Wall time on a loaded machine is
noisy: the API process's CPU time per item is printed too, beside that of
`GET /healthz`, the least a request costs in this HTTP stack.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.services import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[1]
Send = Callable[["Connection", int, bool], Awaitable[None]]


def response(i: int) -> str:
    # Distinct responses so that neither the cache nor dedupe hides any work.
    return f"<think>step {i}</think><answer>{i}</answer>" if i % 3 else f"no tags {i}"


def item(i: int) -> dict[str, Any]:
    return {"id": str(i), "response": response(i), "verifier": "format"}


class Connection:
    """A minimal HTTP/1.1 client on one keep-alive connection: a Python HTTP client costs
    more per request than the server does, which would measure the client."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: dict[str, Any] | None, keep_alive: bool = True) -> bytes:
        """POST `body` (GET without one); the answer's body, which must come with 200."""
        if self.streams is None:
            self.streams = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self.streams
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{'GET' if body is None else 'POST'} {path} HTTP/1.1\r\nhost: bench\r\n"
        head += f"content-type: application/json\r\ncontent-length: {len(data)}\r\n"
        writer.write(head.encode() + (b"" if keep_alive else b"connection: close\r\n") + b"\r\n" + data)
        status_line = await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        payload = await reader.readexactly(length)
        if b" 200 " not in status_line:
            raise RuntimeError(f"{path}: {status_line!r} {payload[:300]!r}")
        if not keep_alive:
            writer.close()
            self.streams = None
        return payload


async def grade_one(conn: Connection, i: int, keep_alive: bool) -> None:
    await conn.post("/v1/grade", {"items": [item(i)]}, keep_alive)


async def healthz(conn: Connection, i: int, keep_alive: bool) -> None:
    await conn.post("/healthz", None, keep_alive)


async def get_reward_one(conn: Connection, i: int, keep_alive: bool) -> None:
    await conn.post("/get_reward?verifier=format", {"query": [response(i)], "prompts": [""]}, keep_alive)


async def singles(port: int, send: Send, n: int, concurrency: int, keep_alive: bool, offset: int) -> float:
    """Seconds to send `n` single-item requests over `concurrency` connections at once."""
    queue = iter(range(offset, offset + n))

    async def worker() -> None:
        conn = Connection(port)
        for i in queue:
            await send(conn, i, keep_alive)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


async def batched(port: int, n: int, batch: int, offset: int) -> float:
    conn = Connection(port)
    started = time.perf_counter()
    for start in range(offset, offset + n, batch):
        await conn.post("/v1/grade", {"items": [item(i) for i in range(start, min(start + batch, offset + n))]})
    return time.perf_counter() - started


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process has used: what a request costs the API
    process, which the machine's load does not inflate as it does wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(port: int, pid: int, args: argparse.Namespace) -> list[tuple[str, float, float]]:
    """(path, wall seconds, API-process CPU seconds) for `args.items` items each way."""
    n, c = args.items, args.concurrency
    await batched(port, 500, args.batch, 10**7)  # warm-up
    await singles(port, grade_one, 500, c, True, 2 * 10**7)
    paths: list[tuple[str, Callable[[int], Awaitable[float]]]] = [
        ("anchor", lambda at: batched(port, n, args.batch, at)),
        ("/v1/grade, 1 item, keep-alive", lambda at: singles(port, grade_one, n, c, True, at)),
        ("/get_reward, 1 item, keep-alive", lambda at: singles(port, get_reward_one, n, c, True, at)),
        ("/get_reward, 1 item, new connection", lambda at: singles(port, get_reward_one, n, c, False, at)),
        ("GET /healthz (the HTTP stack's floor)", lambda at: singles(port, healthz, n, c, True, at)),
    ]
    rows = []
    for index, (name, run) in enumerate(paths):
        before = cpu_s(pid)
        wall = await run(index * n)
        rows.append((name, wall, cpu_s(pid) - before))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=4000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    n = args.items
    port = free_port()
    env = {**os.environ, "RLVR_CACHE_ENTRIES": "0", "RLVR_LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "rlvr", "serve", "--port", str(port), "--workers", str(args.workers)]
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, server)
        rows = asyncio.run(measure(port, server.pid, args))
    finally:
        server.terminate()
        server.wait(timeout=30)

    anchor = rows[0][1]
    rows[0] = (f"/v1/grade, batches of {args.batch} (anchor)", *rows[0][1:])
    print(f"items: {n} distinct format items, cache off, {args.workers} worker processes")
    print(f"{'path':<48}{'items/s':>9}{'vs batched':>12}{'API CPU µs/item':>17}")
    for index, (name, wall, cpu) in enumerate(rows):
        label = name if index == 0 else f"{name} x{args.concurrency}"
        print(f"{label:<48}{n / wall:>9,.0f}{anchor / wall:>12.2f}{cpu / n * 1e6:>17.0f}")


if __name__ == "__main__":
    main()
