"""Verifier workers lost between chunks, and the pool's health read while workers come
and go: neither may mask a unit that never ran, nor fail a health check."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from rlvr.service.dispatch.pool import PoolDispatcher
from rlvr.service.dispatch.worker_handle import WorkerHandle
from rlvr.service.work import Unit
from rlvr.verifiers.config import BuiltinConfig


def format_units(n: int, tag: str) -> list[Unit]:
    return [
        Unit(f"{tag}-{i}", "p", "format", {}, None, "", f"<think>t</think><answer>{tag} {i}</answer>", 10.0)
        for i in range(n)
    ]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("size", [1, 3, 8, 40])
def test_units_sent_to_a_worker_that_died_idle_are_verified(workers: int, size: int) -> None:
    # The worker died (the OOM killer, a crash after its last results) before its thread
    # noticed: the send fails, or the worker is gone before it starts a unit. No unit
    # had started, so none is to blame.
    async def scene() -> list[list[Any]]:
        pool = PoolDispatcher(
            config=BuiltinConfig(),
            workers=workers,
            chunk_size=16,
            max_rss_mb=2048,
            stall_wall_factor=3.0,
            stall_retries=1,
        )
        await pool.start()
        try:
            outcomes = []
            for trial in range(4):
                await pool.run(format_units(workers, f"warm {trial}"))
                for pid in pool.health()["pids"]:
                    os.kill(pid, signal.SIGKILL)
                results = await pool.run(format_units(size, f"trial {trial}"))
                outcomes.append([(r.verdict, r.mask) for r in results])
            return outcomes
        finally:
            await pool.close()

    for outcome in asyncio.run(scene()):
        assert outcome == [("correct", False)] * size


class _Flickering:
    """A worker's process slot that the worker's thread clears between two reads."""

    def __init__(self, process: Any) -> None:
        self.reads = 0
        self.process_value = process

    def __get__(self, obj: Any, owner: Any) -> Any:
        self.reads += 1
        return self.process_value if self.reads % 2 else None

    def __set__(self, obj: Any, value: Any) -> None:
        self.process_value = value


class _Alive:
    pid = 12345

    def is_alive(self) -> bool:
        return True


@pytest.mark.parametrize("reads_before", [0, 1])
def test_health_reads_each_workers_process_once(monkeypatch: pytest.MonkeyPatch, reads_before: int) -> None:
    flicker = _Flickering(None)
    flicker.reads = reads_before
    monkeypatch.setattr(WorkerHandle, "process", flicker, raising=False)
    pool = PoolDispatcher(
        config=BuiltinConfig(), workers=2, chunk_size=16, max_rss_mb=2048, stall_wall_factor=3.0, stall_retries=1
    )
    pool.handles = [WorkerHandle(pool, 0), WorkerHandle(pool, 1)]
    flicker.process_value = _Alive()  # after __init__, which sets it to None
    for _ in range(6):
        health = pool.health()  # raised AttributeError when a second read found None
        assert health["workers_alive"] <= 2 and set(health["pids"]) <= {12345}


def test_a_worker_waits_for_its_sandbox_longer_than_the_sandbox_may_take() -> None:
    # A zygote that does not come up makes the worker's sandbox start give up after the
    # client's START_TIMEOUT_S; the worker then says it is ready and verifies the rest.
    # Killed before, it was respawned for ever, verifying nothing.
    from rlvr.sandboxes.local.sandbox import START_TIMEOUT_S
    from rlvr.service.dispatch.worker_handle import WORKER_START_TIMEOUT_S

    assert WORKER_START_TIMEOUT_S >= 2 * START_TIMEOUT_S


def test_no_worker_is_started_once_the_pool_closes() -> None:
    from rlvr.service.dispatch.worker_handle import PoolClosing

    pool = PoolDispatcher(
        config=BuiltinConfig(), workers=1, chunk_size=16, max_rss_mb=2048, stall_wall_factor=3.0, stall_retries=1
    )
    pool.closing = True
    worker = WorkerHandle(pool, 0)
    with pytest.raises(PoolClosing):
        worker._ensure()
    assert worker.process is None
