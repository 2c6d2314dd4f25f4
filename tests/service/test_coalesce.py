"""Small requests ready together share one dispatch: results reach the right request,
errors reach every request of the batch, and a batch's dispatch is cancelled only when
all its requests have gone."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from rlvr.service.coalesce import MAX_COALESCED_UNITS, Coalescer
from rlvr.service.work import Unit, UnitResult


def unit(key: str) -> Unit:
    return Unit(
        key=key, prep_key="p", verifier="format", params={}, ground_truth=None, prompt="", response=key, deadline_s=1.0
    )


def result_for(u: Unit) -> UnitResult:
    return UnitResult(score=1.0, verdict="correct", reason=u.key)


class RecordingDispatcher:
    """Answers each unit with its own key as the reason, after `release` is set."""

    stores_verdicts = False

    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[list[str]] = []
        self.cancelled = 0
        self.release = asyncio.Event()
        self.fail = fail

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        self.calls.append([u.key for u in units])
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        if self.fail is not None:
            raise self.fail
        return [result_for(u) for u in units]

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def health(self) -> dict[str, Any]:
        return {}

    async def stream_stats(self) -> None:
        return None


def keys(results: list[UnitResult]) -> list[str]:
    return [r.reason for r in results]


def test_requests_ready_together_share_one_dispatch() -> None:
    asyncio.run(_test_requests_ready_together_share_one_dispatch())


async def _test_requests_ready_together_share_one_dispatch() -> None:
    dispatcher = RecordingDispatcher()
    coalescer = Coalescer(dispatcher)
    tasks = [asyncio.ensure_future(coalescer.run([unit(f"{i}a"), unit(f"{i}b")])) for i in range(5)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    dispatcher.release.set()
    results = await asyncio.gather(*tasks)
    assert dispatcher.calls == [[f"{i}{s}" for i in range(5) for s in "ab"]]
    assert [keys(r) for r in results] == [[f"{i}a", f"{i}b"] for i in range(5)]


def test_requests_of_later_passes_go_in_later_batches() -> None:
    asyncio.run(_test_requests_of_later_passes_go_in_later_batches())


async def _test_requests_of_later_passes_go_in_later_batches() -> None:
    dispatcher = RecordingDispatcher()
    dispatcher.release.set()
    coalescer = Coalescer(dispatcher)
    assert keys(await coalescer.run([unit("x")])) == ["x"]
    assert keys(await coalescer.run([unit("y")])) == ["y"]
    assert dispatcher.calls == [["x"], ["y"]]


def test_a_large_request_is_dispatched_on_its_own() -> None:
    asyncio.run(_test_a_large_request_is_dispatched_on_its_own())


async def _test_a_large_request_is_dispatched_on_its_own() -> None:
    dispatcher = RecordingDispatcher()
    coalescer = Coalescer(dispatcher)
    big = [unit(f"b{i}") for i in range(MAX_COALESCED_UNITS + 1)]
    tasks = [asyncio.ensure_future(coalescer.run(big)), asyncio.ensure_future(coalescer.run([unit("s")]))]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    dispatcher.release.set()
    results = await asyncio.gather(*tasks)
    assert sorted(len(c) for c in dispatcher.calls) == [1, MAX_COALESCED_UNITS + 1]
    assert keys(results[0]) == [u.key for u in big]
    assert keys(results[1]) == ["s"]


def test_a_dispatch_error_reaches_every_request_of_the_batch() -> None:
    asyncio.run(_test_a_dispatch_error_reaches_every_request_of_the_batch())


async def _test_a_dispatch_error_reaches_every_request_of_the_batch() -> None:
    dispatcher = RecordingDispatcher(fail=RuntimeError("pool broke"))
    coalescer = Coalescer(dispatcher)
    tasks = [asyncio.ensure_future(coalescer.run([unit(str(i))])) for i in range(3)]
    await asyncio.sleep(0)
    dispatcher.release.set()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert [str(o) for o in outcomes] == ["pool broke"] * 3


def test_one_request_leaving_does_not_cancel_the_others() -> None:
    asyncio.run(_test_one_request_leaving_does_not_cancel_the_others())


async def _test_one_request_leaving_does_not_cancel_the_others() -> None:
    dispatcher = RecordingDispatcher()
    coalescer = Coalescer(dispatcher)
    leaving = asyncio.ensure_future(coalescer.run([unit("gone")]))
    staying = asyncio.ensure_future(coalescer.run([unit("kept")]))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    leaving.cancel()
    await asyncio.sleep(0)
    dispatcher.release.set()
    assert keys(await staying) == ["kept"]
    assert dispatcher.cancelled == 0
    with pytest.raises(asyncio.CancelledError):
        await leaving


def test_the_dispatch_is_cancelled_when_all_its_requests_have_gone() -> None:
    asyncio.run(_test_the_dispatch_is_cancelled_when_all_its_requests_have_gone())


async def _test_the_dispatch_is_cancelled_when_all_its_requests_have_gone() -> None:
    dispatcher = RecordingDispatcher()
    coalescer = Coalescer(dispatcher)
    tasks = [asyncio.ensure_future(coalescer.run([unit(str(i))])) for i in range(2)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.sleep(0)
    assert dispatcher.cancelled == 1


def test_a_request_gone_before_the_dispatch_is_left_out() -> None:
    asyncio.run(_test_a_request_gone_before_the_dispatch_is_left_out())


async def _test_a_request_gone_before_the_dispatch_is_left_out() -> None:
    dispatcher = RecordingDispatcher()
    dispatcher.release.set()
    coalescer = Coalescer(dispatcher)
    gone = asyncio.ensure_future(coalescer.run([unit("gone")]))
    kept = asyncio.ensure_future(coalescer.run([unit("kept")]))
    await asyncio.sleep(0)  # both are waiting; the flush has not run yet
    gone.cancel()
    assert keys(await kept) == ["kept"]
    assert dispatcher.calls == [["kept"]]
