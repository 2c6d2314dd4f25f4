"""A worker pool that cannot start its workers says so at once, with BackendUnavailable
(a 503 from the service), and never respawns them in a tight loop."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

import httpx
import pytest

from rlvr.in_process import InProcessTransport
from rlvr.service.dispatch import worker_handle
from rlvr.service.dispatch.fallback import FallbackDispatcher
from rlvr.service.dispatch.pool import PoolDispatcher
from rlvr.service.dispatch.worker_handle import FAILED_STARTS_BROKEN
from rlvr.service.errors import BackendUnavailable
from rlvr.service.settings import Settings
from rlvr.verifiers.config import BuiltinConfig
from tests.service.test_lost_workers import format_units


def _grade(n: int) -> dict[str, Any]:
    # Each request a new response: a cached verdict would answer without the pool.
    return {"items": [{"response": f"<think>a</think><answer>{n}</answer>", "verifier": "format"}]}


def _workers_die_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker target that exits before it says it is ready, as a broken install would:
    # `sys.exit` called with the worker's four arguments raises TypeError.
    monkeypatch.setattr(worker_handle, "worker_main", sys.exit)


def _pool(workers: int) -> PoolDispatcher:
    return PoolDispatcher(
        config=BuiltinConfig(), workers=workers, chunk_size=8, max_rss_mb=2048, stall_wall_factor=3.0, stall_retries=1
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_a_pool_whose_workers_never_start_fails_at_once(monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    _workers_die_at_start(monkeypatch)
    # A worker that died is noticed when it dies, not when its time to come up runs out:
    # with an hour for that, the test ends only if the death is seen at once.
    monkeypatch.setattr(worker_handle, "WORKER_START_TIMEOUT_S", 3600.0)
    pool = _pool(workers)
    with pytest.raises(BackendUnavailable, match=r"could not start any of its .* exited before it was ready"):
        asyncio.run(pool.start())
    assert all(not handle.alive() for handle in pool.handles)


def test_a_pool_whose_workers_stop_starting_answers_503_and_recovers(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scene() -> tuple[list[int], list[int], Any]:
        transport = InProcessTransport(Settings(workers=1))
        async with httpx.AsyncClient(transport=transport, base_url="http://rlvr.in-process") as http:
            ok = (await http.post("/v1/grade", json=_grade(0))).status_code
            _workers_die_at_start(monkeypatch)
            [pid] = (await http.get("/readyz")).json()["backends"]["dispatcher"]["pids"]
            os.kill(pid, signal.SIGKILL)
            statuses = []
            for n in range(1, FAILED_STARTS_BROKEN + 4):
                answer = await http.post("/v1/grade", json=_grade(n))
                statuses.append(answer.status_code)
                if answer.status_code == 503:
                    break
            broken = answer.json()
            monkeypatch.undo()
            for n in range(100, 200):  # the pool keeps trying, with backoff, and comes back
                await asyncio.sleep(0.2)
                if (await http.post("/v1/grade", json=_grade(n))).status_code == 200:
                    break
            after = (await http.post("/v1/grade", json=_grade(200))).status_code
        await transport.aclose()
        return [ok, after], statuses, broken

    (ok, after), statuses, broken = asyncio.run(scene())
    assert ok == 200
    assert statuses[-1] == 503, statuses
    assert broken["error"]["code"] == "backend_unavailable"
    assert "verifier workers do not start" in broken["error"]["message"]
    assert after == 200


def test_units_waiting_on_a_pool_that_cannot_start_workers_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scene() -> list[Any]:
        pool = _pool(1)
        await pool.start()
        try:
            _workers_die_at_start(monkeypatch)
            for handle in pool.handles:
                handle.kill()
            return await pool.run(format_units(3, "waiting"))
        finally:
            await pool.close()

    results = asyncio.run(scene())
    assert all(r.mask for r in results), results


def test_one_slot_that_cannot_start_a_worker_leaves_the_others_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scene() -> tuple[list[Any], list[Any], str | None, str | None]:
        pool = _pool(2)
        await pool.start()
        try:
            _workers_die_at_start(monkeypatch)
            first = pool.handles[0].process
            assert first is not None
            os.kill(first.pid, signal.SIGKILL)
            served = []
            for n in range(FAILED_STARTS_BROKEN + 3):  # the dead slot gives up; the other serves
                served += await pool.run(format_units(8, f"one-slot-{n}"))
            one_dead = pool.unavailable()
            second = pool.handles[1].process
            assert second is not None
            os.kill(second.pid, signal.SIGKILL)
            lost = []
            for n in range(FAILED_STARTS_BROKEN + 3):
                try:
                    lost += await pool.run(format_units(4, f"all-dead-{n}"))
                except BackendUnavailable:
                    break
            return served, lost, one_dead, pool.unavailable()
        finally:
            await pool.close()

    served, lost, one_dead, all_dead = asyncio.run(scene())
    assert served and not any(r.mask for r in served), [r.reason for r in served if r.mask]
    assert one_dead is None
    assert all_dead is not None and "do not start" in all_dead
    assert all(r.mask for r in lost)


def test_a_fallback_pool_that_cannot_start_leaves_redis_grading_up(monkeypatch: pytest.MonkeyPatch) -> None:
    class Down:
        """A primary whose backend is down for this request."""

        stores_verdicts = False

        async def start(self) -> None:
            return None

        async def close(self) -> None:
            return None

        async def run(self, units: Any) -> list[Any]:
            raise BackendUnavailable("Redis unavailable")

        def health(self) -> dict[str, Any]:
            return {"ready": True}

        async def stream_stats(self) -> None:
            return None

    async def scene() -> tuple[str | None, dict[str, Any]]:
        _workers_die_at_start(monkeypatch)
        both = FallbackDispatcher(Down(), _pool(1))
        await both.start()  # the primary serves alone
        try:
            with pytest.raises(BackendUnavailable, match="Redis unavailable"):
                await both.run(format_units(1, "fallback"))
            return both.fallback_error, both.health()
        finally:
            await both.close()

    error, health = asyncio.run(scene())
    assert error is not None and "could not start" in error
    assert health["ready"] is True and health["fallback"]["error"] == error
