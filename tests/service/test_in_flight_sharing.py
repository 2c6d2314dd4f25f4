"""Requests that have the same unit in flight together share one grading of it: only
where the sharing is sound (the same deadline), and never so that one request's
client leaving masks what another one waits for."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from rlvr.results import GradeResponse
from rlvr.service.grading import Grader
from rlvr.service.work import Unit, UnitResult, timed_out
from tests.service.test_grading import GOOD, InlineDispatcher, make, req

ITEM = {"response": GOOD, "verifier": "format"}
OTHER = {"response": "<think>c</think><answer>d</answer>", "verifier": "format"}


class DeadlineDispatcher(InlineDispatcher):
    """Times out every unit whose deadline is under a second (as a slow program would)."""

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        self.calls.append(len(units))
        await asyncio.sleep(self.delay_s)
        return [
            timed_out(u.deadline_s, cpu_s=u.deadline_s, wall_s=u.deadline_s) if u.deadline_s < 1 else self.runner.run(u)
            for u in units
        ]


class FailingDispatcher(InlineDispatcher):
    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        self.calls.append(len(units))
        await asyncio.sleep(self.delay_s)
        raise RuntimeError("the pool broke")


def _use(grader: Grader, dispatcher: InlineDispatcher) -> None:
    grader.dispatcher = dispatcher
    grader._coalescer.dispatcher = dispatcher


def _summary(out: GradeResponse) -> list[tuple[str, float, bool]]:
    return [(r.verdict, r.reward, r.mask) for r in out.results]


@pytest.mark.parametrize("waiters", [1, 2, 5])
@pytest.mark.parametrize("cancel_after_s", [0.0, 0.02, 0.1])
def test_a_request_whose_client_left_masks_nothing_of_the_others(waiters: int, cancel_after_s: float) -> None:
    grader, dispatcher = make(delay_s=0.2)

    async def scene() -> list[dict[str, Any]]:
        first = asyncio.create_task(grader.grade(req(ITEM)))
        await asyncio.sleep(0.01)  # its unit is in the dispatcher
        others = [asyncio.create_task(grader.grade(req(ITEM))) for _ in range(waiters)]
        await asyncio.sleep(cancel_after_s)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        return list(await asyncio.gather(*others))

    outs = asyncio.run(scene())
    assert [_summary(o) for o in outs] == [[("correct", 1.0, False)]] * waiters
    assert dispatcher.calls == [1, 1]  # graded again once, for all who waited
    assert grader._in_flight == {}


def test_each_request_that_takes_a_unit_over_may_leave_too() -> None:
    grader, dispatcher = make(delay_s=0.1)

    async def scene() -> dict[str, Any]:
        tasks = [asyncio.create_task(grader.grade(req(ITEM)))]
        await asyncio.sleep(0.01)
        tasks += [asyncio.create_task(grader.grade(req(ITEM))) for _ in range(3)]
        await asyncio.sleep(0.01)
        for leaving in tasks[:3]:  # the owner, then each one that takes the unit over
            leaving.cancel()
            await asyncio.sleep(0.03)
        return await tasks[3]

    out = asyncio.run(scene())
    assert _summary(out) == [("correct", 1.0, False)]
    assert len(dispatcher.calls) >= 2 and grader._in_flight == {}


def test_what_the_leaving_request_did_not_share_is_not_graded_again() -> None:
    grader, dispatcher = make(delay_s=0.1)

    async def scene() -> dict[str, Any]:
        first = asyncio.create_task(grader.grade(req(ITEM, OTHER)))
        await asyncio.sleep(0.01)
        second = asyncio.create_task(grader.grade(req(ITEM, {"response": "x", "verifier": "format"})))
        await asyncio.sleep(0.02)
        first.cancel()
        return await second

    out = asyncio.run(scene())
    assert _summary(out) == [("correct", 1.0, False), ("incorrect", 0.0, False)]
    # The second request's own unit, and the shared one again: OTHER is nobody's now.
    assert dispatcher.calls == [2, 1, 1]
    assert grader._in_flight == {}


@pytest.mark.parametrize(("first_s", "second_s"), [(0.5, 30.0), (30.0, 0.5), (0.2, 0.9)])
def test_units_with_other_deadlines_are_not_shared(first_s: float, second_s: float) -> None:
    # A timeout under one deadline is not the verdict under another.
    grader, _ = make()
    dispatcher = DeadlineDispatcher(delay_s=0.1)
    _use(grader, dispatcher)

    async def scene() -> list[dict[str, Any]]:
        first = asyncio.create_task(grader.grade(req(ITEM, deadline_s=first_s)))
        await asyncio.sleep(0.01)
        second = asyncio.create_task(grader.grade(req(ITEM, deadline_s=second_s)))
        return list(await asyncio.gather(first, second))

    outs = asyncio.run(scene())
    expected = [("timeout", 0.0, False) if s < 1 else ("correct", 1.0, False) for s in (first_s, second_s)]
    assert [_summary(o)[0] for o in outs] == expected
    assert dispatcher.calls == [1, 1]


@pytest.mark.parametrize("deadline_s", [0.5, 30.0])
def test_units_with_one_deadline_are_still_shared(deadline_s: float) -> None:
    grader, _ = make()
    dispatcher = DeadlineDispatcher(delay_s=0.1)
    _use(grader, dispatcher)

    async def scene() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(grader.grade(req(ITEM, deadline_s=deadline_s)) for _ in range(4))))

    outs = asyncio.run(scene())
    assert len({tuple(_summary(o)) for o in outs}) == 1
    assert dispatcher.calls == [1]


def test_a_dispatch_that_fails_is_everyones_failure() -> None:
    # Not a client leaving: the grader broke, and every request waiting is told so.
    grader, _ = make()
    dispatcher = FailingDispatcher(delay_s=0.1)
    _use(grader, dispatcher)

    async def scene() -> list[Any]:
        first = asyncio.create_task(grader.grade(req(ITEM)))
        await asyncio.sleep(0.01)
        second = asyncio.create_task(grader.grade(req(ITEM)))
        return list(await asyncio.gather(first, second, return_exceptions=True))

    first, second = asyncio.run(scene())
    assert isinstance(first, RuntimeError)
    assert _summary(second) == [("error", 0.0, True)]
    assert "the pool broke" in second.results[0].reason
    assert dispatcher.calls == [1] and grader._in_flight == {}
