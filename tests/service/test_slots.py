"""`dispatch.slots`, with real processes: a job's deadline runs from when a process takes
it, and a process that is lost or wedged costs its own job only."""

from __future__ import annotations

import asyncio
import operator
import os
import time

import pytest

from rlvr.service.dispatch.slots import EachCall, SlotLost, SlotPool

# Jobs are `operator.call(fn, *args)`: stdlib functions, which a slot's process imports by name.
Pool = SlotPool[object]


def test_time_in_the_queue_is_not_the_jobs() -> None:
    async def main() -> object:
        pool: Pool = SlotPool(1, EachCall(operator.call))
        try:
            first = asyncio.create_task(pool.run(time.sleep, 3, deadline_s=30))
            # Queued behind 3 s of sleep, with a deadline of 2 s of its own.
            second = asyncio.create_task(pool.run(os.getpid, deadline_s=2))
            await first
            return await second
        finally:
            pool.close()

    assert isinstance(asyncio.run(main()), int)


def test_a_wedged_job_is_killed_alone_and_its_slot_replaced() -> None:
    async def main() -> tuple[BaseException | object, ...]:
        pool: Pool = SlotPool(2, EachCall(operator.call))
        try:
            wedged = pool.run(time.sleep, 3600, deadline_s=1)
            beside = pool.run(time.sleep, 2, deadline_s=30)
            first = await asyncio.gather(wedged, beside, return_exceptions=True)
            after = await asyncio.gather(*(pool.run(os.getpid, deadline_s=30) for _ in range(4)))
            return (*first, *after)
        finally:
            pool.close()

    wedged, beside, *after = asyncio.run(main())
    assert isinstance(wedged, SlotLost) and "killed" in str(wedged)
    assert beside is None
    assert all(isinstance(pid, int) for pid in after)


def test_a_process_lost_mid_job_fails_that_job_only() -> None:
    async def main() -> tuple[object, object]:
        pool: Pool = SlotPool(1, EachCall(operator.call))
        try:
            before = await pool.run(os.getpid, deadline_s=30)
            with pytest.raises(SlotLost, match="lost"):
                await pool.run(os._exit, 3, deadline_s=30)
            return before, await pool.run(os.getpid, deadline_s=30)
        finally:
            pool.close()

    before, after = asyncio.run(main())
    assert isinstance(before, int) and isinstance(after, int) and after != before


def test_a_job_that_raises_is_its_own_failure_and_its_process_stays() -> None:
    async def main() -> tuple[object, object]:
        pool: Pool = SlotPool(1, EachCall(operator.call))
        try:
            before = await pool.run(os.getpid, deadline_s=30)
            with pytest.raises(RuntimeError, match="ValueError"):
                await pool.run(int, "x", deadline_s=30)
            return before, await pool.run(os.getpid, deadline_s=30)
        finally:
            pool.close()

    before, after = asyncio.run(main())
    assert before == after


async def _behind_a_running_job(pool: Pool, *jobs: tuple[tuple[object, ...], float]) -> list[object]:
    """Run `jobs` queued together while the pool's one slot is busy, so that they wait
    for it side by side."""
    first = asyncio.create_task(pool.run(time.sleep, 1, deadline_s=30))
    await asyncio.sleep(0.5)
    queued = [asyncio.create_task(pool.run(*args, deadline_s=deadline)) for args, deadline in jobs]
    await first
    return list(await asyncio.gather(*queued, return_exceptions=True))


def test_jobs_waiting_together_share_a_batch_and_fail_alone() -> None:
    async def main() -> list[object]:
        pool: Pool = SlotPool(1, EachCall(operator.call), max_batch=8)
        try:
            return await _behind_a_running_job(pool, ((int, "x"), 30), ((os.getpid,), 30), ((int, "7"), 30))
        finally:
            pool.close()

    failed, pid, seven = asyncio.run(main())
    assert isinstance(failed, RuntimeError) and "ValueError" in str(failed)
    assert isinstance(pid, int) and seven == 7


def test_a_wedged_batch_costs_its_own_jobs_and_no_more() -> None:
    async def main() -> list[object]:
        pool: Pool = SlotPool(1, EachCall(operator.call), max_batch=2)
        try:
            jobs = (((time.sleep, 3600), 1.0), ((os.getpid,), 1.0), ((os.getpid,), 30.0))
            return await _behind_a_running_job(pool, *jobs)
        finally:
            pool.close()

    wedged, beside, after = asyncio.run(main())
    assert isinstance(wedged, SlotLost) and "killed" in str(wedged)
    assert isinstance(beside, SlotLost)  # in the wedged job's batch
    assert isinstance(after, int)  # the next batch, in a fresh process


def test_a_quick_job_is_answered_before_a_slow_one_of_its_batch_ends() -> None:
    async def main() -> tuple[bool, object]:
        pool: Pool = SlotPool(1, EachCall(operator.call), max_batch=8)
        try:
            first = asyncio.create_task(pool.run(time.sleep, 1, deadline_s=30))
            await asyncio.sleep(0.5)
            quick = asyncio.create_task(pool.run(os.getpid, deadline_s=30))
            slow = asyncio.create_task(pool.run(time.sleep, 3, deadline_s=30))
            await first
            done, _ = await asyncio.wait({quick, slow}, return_when=asyncio.FIRST_COMPLETED)
            answered_alone = done == {quick}
            await slow
            return answered_alone, quick.result()
        finally:
            pool.close()

    answered_alone, pid = asyncio.run(main())
    assert answered_alone and isinstance(pid, int)
