"""A verifier worker starts its sandbox before it takes units: the sandbox's long-lived
helper (the local zygote) is never counted as a unit's program, neither its startup CPU
against a deadline nor its being alive as the program still running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from rlvr.service.dispatch.pool import PoolDispatcher
from rlvr.service.work import Unit, UnitResult
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.registry import Registry
from tests.service.test_pool import code_unit

SLEEP_THEN_ANSWER = "import time\n    time.sleep({s})\n    return x"


def _unit(sleep_s: float, deadline_s: float, tag: str) -> Unit:
    return code_unit(SLEEP_THEN_ANSWER.format(s=sleep_s) + f"  # {tag}", deadline_s=deadline_s)


async def _with_pool(scene: Callable[[PoolDispatcher], Coroutine[Any, Any, Any]]) -> Any:
    pool = PoolDispatcher(
        config=BuiltinConfig(), workers=1, chunk_size=8, max_rss_mb=2048, stall_wall_factor=3.0, stall_retries=1
    )
    await pool.start()
    try:
        return await scene(pool)
    finally:
        await pool.close()


def _sandbox_or_skip() -> None:
    from rlvr.sandboxes import isolation_report
    from tests.services import require

    require(isolation_report()["isolation"] == "full", "full isolation (run as root)")


def _zygotes_of(pid: int) -> list[int]:
    children = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            children += [int(c) for c in f.read().split()]
    return children


def test_a_ready_worker_has_its_sandbox_running() -> None:
    _sandbox_or_skip()

    async def scene(pool: PoolDispatcher) -> list[int]:
        [pid] = pool.health()["pids"]
        return _zygotes_of(pid)

    assert len(asyncio.run(_with_pool(scene))) == 1  # before any unit was sent


@pytest.mark.parametrize("restarts", [0, 1, 2])
@pytest.mark.parametrize("deadline_s", [0.1, 0.2])
def test_the_first_unit_of_a_fresh_worker_is_not_charged_for_the_sandbox(restarts: int, deadline_s: float) -> None:
    # The program sleeps past its CPU deadline in wall time, but under its wall limit
    # (3x): its own CPU is next to nothing, so it is correct. Counted, the zygote's
    # startup made it a timeout.
    _sandbox_or_skip()

    async def scene(pool: PoolDispatcher) -> list[UnitResult]:
        results = []
        for attempt in range(restarts + 1):
            if attempt:
                [pid] = pool.health()["pids"]
                os.kill(pid, signal.SIGKILL)
                await asyncio.sleep(0.2)
            results += await pool.run([_unit(deadline_s * 1.5, deadline_s, f"{restarts} {attempt}")])
        return results

    for result in asyncio.run(_with_pool(scene)):
        assert (result.verdict, result.mask) == ("correct", False), result


@pytest.mark.parametrize("fresh", [True, False])
def test_a_stalled_worker_on_its_first_unit_is_a_stall_not_a_timeout(fresh: bool) -> None:
    # Stopped by something else while its program sleeps: the grader's stall. The unit
    # runs again on a fresh worker and is correct; with the zygote counted as its
    # program still running, it was the item's timeout.
    _sandbox_or_skip()

    async def scene(pool: PoolDispatcher) -> tuple[UnitResult, dict[str, int]]:
        if not fresh:
            await pool.run([_unit(0.0, 2.0, "warm")])
        [pid] = pool.health()["pids"]
        task = asyncio.ensure_future(pool.run([_unit(1.0, 2.0, f"stall {fresh}")]))
        await asyncio.sleep(0.6)  # the job sleeps in f()
        os.kill(pid, signal.SIGSTOP)
        try:
            [result] = await task
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        return result, dict(pool.restarts)

    result, restarts = asyncio.run(_with_pool(scene))
    assert (result.verdict, result.mask) == ("correct", False), result
    assert restarts["stalled"] == 1 and restarts["deadline"] == 0


def test_a_worker_whose_sandbox_cannot_start_still_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    # No sandbox here (a docker backend without its image): the worker comes up, and the
    # code verifier says why, item by item; other verifiers are not held up.
    from rlvr.sandboxes.config import DockerConfig, SandboxConfig

    config = BuiltinConfig(SandboxConfig(backend="docker", docker=DockerConfig(image="rlvr-test-no-such-image:none")))
    version = Registry(use_entry_points=False).get("format").version
    fmt = Unit("k", f"format {version}", "format", {}, None, "", "<think>t</think><answer>a</answer>", 10.0)

    async def scene() -> list[UnitResult]:
        pool = PoolDispatcher(
            config=config, workers=1, chunk_size=8, max_rss_mb=2048, stall_wall_factor=3.0, stall_retries=1
        )
        await pool.start()
        try:
            return await pool.run([fmt, code_unit()])
        finally:
            await pool.close()

    fmt_result, code_result = asyncio.run(scene())
    assert fmt_result.verdict == "correct"
    assert code_result.mask and "sandbox unavailable" in code_result.reason, code_result
