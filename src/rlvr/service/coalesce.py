"""Units of small requests that are ready at the same moment go to the dispatcher as one
batch. verl and OpenRLHF send one item per request, many at once: dispatched one by one,
each unit would cost the dispatcher a chunk of its own (a queue entry, a thread hand-off,
a pipe round trip to a worker, a wake-up of the event loop), which a batch amortises.

A batch is what arrives within one pass of the event loop. Its dispatch is shared: a
request that goes away stops waiting for it, and the dispatch itself is cancelled once
every request in it has gone (so that a client that leaves still has its queued work
dropped, as `/v1/grade` promises).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from rlvr.service.dispatch import Dispatcher
from rlvr.service.work import Unit, UnitResult

# Requests with more units than this are dispatched on their own (they amortise the cost
# themselves, and keep their own fair turn in the dispatcher's queue).
MAX_COALESCED_UNITS = 8


@dataclass(slots=True)
class _Waiter:
    units: Sequence[Unit]
    future: asyncio.Future[list[UnitResult]]


class Coalescer:
    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self._pending: list[_Waiter] = []

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        """The dispatcher's results for `units`, dispatched with the other small requests
        of this pass of the event loop."""
        if len(units) > MAX_COALESCED_UNITS:
            return await self.dispatcher.run(units)
        loop = asyncio.get_running_loop()
        waiter = _Waiter(units, loop.create_future())
        if not self._pending:
            loop.call_soon(self._flush)  # after the requests already ready in this pass
        self._pending.append(waiter)
        return await waiter.future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        batch = [w for w in batch if not w.future.done()]  # requests gone before the dispatch
        if not batch:
            return
        dispatch = asyncio.ensure_future(self.dispatcher.run([u for w in batch for u in w.units]))
        dispatch.add_done_callback(lambda done: _distribute(done, batch))
        for waiter in batch:
            waiter.future.add_done_callback(lambda _: _cancel_if_abandoned(dispatch, batch))


def _distribute(dispatch: asyncio.Future[list[UnitResult]], batch: list[_Waiter]) -> None:
    if dispatch.cancelled():
        for waiter in batch:
            waiter.future.cancel()
        return
    error = dispatch.exception()
    start = 0
    for waiter in batch:
        if waiter.future.done():
            start += len(waiter.units)
            continue
        if error is not None:
            waiter.future.set_exception(error)
        else:
            waiter.future.set_result(dispatch.result()[start : start + len(waiter.units)])
        start += len(waiter.units)


def _cancel_if_abandoned(dispatch: asyncio.Future[list[UnitResult]], batch: list[_Waiter]) -> None:
    if not dispatch.done() and all(w.future.cancelled() for w in batch):
        dispatch.cancel()
