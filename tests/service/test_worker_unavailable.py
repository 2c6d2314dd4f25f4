"""A Redis worker whose verifier processes stop starting takes no entries: it leaves
them on the stream for the workers that can verify them, instead of failing each one
until it is dead-lettered."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
import redis

from rlvr.service import redis_keys
from rlvr.service.dispatch import worker_handle
from rlvr.service.settings import Settings
from rlvr.service.worker import Worker
from tests.service.test_lost_workers import format_units
from tests.services import RedisServer

REPLY = "rlvr:test:reply"
RECLAIM_IDLE_S = 1.0
SETTLE_S = 3.0
WAIT_S = 60.0


async def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.05)


def test_a_worker_that_cannot_start_processes_leaves_entries_to_others(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = redis.Redis.from_url(redis_server.url)

    async def scene() -> tuple[int, int, int]:
        settings = Settings(redis_url=redis_server.url, redis_reclaim_idle_s=RECLAIM_IDLE_S)
        worker = Worker(settings, processes=1)
        running = asyncio.create_task(worker.run())
        await wait_until(lambda: bool(worker.pool.handles) and all(h.thread.is_alive() for h in worker.pool.handles))
        monkeypatch.setattr(worker_handle, "worker_main", sys.exit)  # no worker starts again
        process = worker.pool.handles[0].process
        assert process is not None
        os.kill(process.pid, signal.SIGKILL)
        await wait_until(lambda: worker.pool.unavailable() is not None)
        units = json.dumps([u.to_dict() for u in format_units(2, "left")])
        client.xadd(redis_keys.JOB_STREAM, {"chunk": "c1", "reply": REPLY, "units": units})
        await asyncio.sleep(SETTLE_S)  # past its reclaim period: it would have taken it again
        delivered = _times_delivered(client)
        dead = client.xlen(redis_keys.DEAD_LETTER_STREAM)
        healthy = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rlvr",
                "worker",
                "--redis-url",
                redis_server.url,
                "--processes",
                "1",
                "--redis-reclaim-idle-s",
                str(RECLAIM_IDLE_S),
            ]
        )
        try:
            await wait_until(lambda: client.llen(REPLY) == 1)  # verified, answered, acknowledged
        finally:
            healthy.terminate()
            healthy.wait(timeout=30)
        worker.stopping.set()
        await asyncio.wait_for(running, 30)
        return delivered, dead, client.xlen(redis_keys.DEAD_LETTER_STREAM)

    delivered, dead_before, dead_after = asyncio.run(scene())
    # Read at most once by the broken worker (it may have been waiting on the stream when
    # its processes stopped starting), never acknowledged nor dead-lettered by it; then
    # taken and verified by the healthy one.
    assert delivered <= 1 and dead_before == 0 and dead_after == 0
    assert client.xlen(redis_keys.JOB_STREAM) == 0
    [answer] = client.lrange(REPLY, 0, -1)
    results = json.loads(answer)["results"]
    assert len(results) == 2 and not any(result["mask"] for result in results.values())


def _times_delivered(client: redis.Redis) -> int:
    entries = client.xpending_range(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, min="-", max="+", count=10)
    return max((int(e["times_delivered"]) for e in entries), default=0)
