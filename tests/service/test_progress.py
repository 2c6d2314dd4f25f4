"""A worker's progress marks, read by the thread that feeds it while it writes them."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rlvr.service.dispatch.pool import PoolDispatcher
from rlvr.service.dispatch.progress import Mark, Progress
from rlvr.service.dispatch.worker_handle import whole_batch
from rlvr.verifiers.config import BuiltinConfig
from tests.service.test_pool import code_unit

CTX = mp.get_context("fork")
MARKS = 200_000


def _expected(index: int) -> Mark:
    """What every mark the writer below publishes holds, from its index alone."""
    return Mark(index, index % 7 + 1, index * 0.5, index * 0.25)


def _write_marks(progress: Progress, count: int) -> None:
    for index in range(count):
        mark = _expected(index)
        progress.mark(mark.index, mark.count, mark.started, mark.cpu_start)


def _read_while(alive: Callable[[], bool], progress: Progress) -> tuple[int, list[Mark]]:
    """Marks read while the writer runs: how many were whole, and the torn ones."""
    whole, torn = 0, []
    while alive():
        mark = progress.read()
        if mark is None or mark.index < 0:
            continue
        if mark == _expected(mark.index):
            whole += 1
        else:
            torn.append(mark)
    return whole, torn


def test_a_reader_never_sees_half_of_a_mark() -> None:
    # A mark's index with another's count named units that were never sent (an empty
    # batch once the index was -1), and the chunk's units were masked.
    progress = Progress(CTX)
    progress.mark(-1, 1, 0.0, 0.0)
    writer = CTX.Process(target=_write_marks, args=(progress, MARKS))
    writer.start()
    try:
        whole, torn = _read_while(writer.is_alive, progress)
    finally:
        writer.join(timeout=60)
    assert writer.exitcode == 0
    assert torn == []
    assert whole > 100  # the reader did read while the writer wrote
    assert progress.read() == _expected(MARKS - 1)


@pytest.mark.parametrize("sequence", [1.0, 3.0, 12345.0])
def test_a_mark_being_written_reads_as_unsure(sequence: float) -> None:
    # What a worker killed in the middle of a write leaves behind.
    progress = Progress(CTX)
    progress.mark(3, 2, 1.0, 2.0)
    progress.shared[0] = sequence
    assert progress.read() is None


def test_marks_after_an_unsure_one_read_again() -> None:
    progress = Progress(CTX)
    progress.shared[0] = 1.0
    progress.mark(4, 1, 5.0, 6.0)
    assert progress.read() is None  # still odd: a write from the state it was left in
    progress.shared[0] = 2.0
    progress.mark(4, 1, 5.0, 6.0)
    assert progress.read() == Mark(4, 1, 5.0, 6.0)


@pytest.mark.parametrize(
    ("index", "count", "sent", "whole"),
    [
        (-1, 1, 5, True),  # the chunk not started yet
        (0, 5, 5, True),
        (4, 1, 5, True),
        (2, 3, 5, True),
        (-1, 4, 5, False),  # the index of a new chunk with the count of the last batch
        (-1, 32, 25, False),
        (0, 6, 5, False),
        (3, 3, 5, False),
        (5, 1, 5, False),
        (-2, 1, 5, False),
        (0, 0, 5, False),
        (1, -3, 5, False),
    ],
)
def test_marks_that_name_units_not_sent_are_not_judged(index: int, count: int, sent: int, whole: bool) -> None:
    progress = Progress(CTX)
    progress.mark(index, count, 1.0, 2.0)
    units = [code_unit() for _ in range(sent)]
    assert (whole_batch(progress, units) is not None) is whole


async def _grade_rounds(rounds: list[int]) -> list[list[bool]]:
    pool = PoolDispatcher(
        config=BuiltinConfig(), workers=2, chunk_size=32, max_rss_mb=2048, stall_wall_factor=3.0, stall_retries=1
    )
    await pool.start()
    try:
        masked = []
        for number, size in enumerate(rounds):
            units = [code_unit(f"return x  # {number} {i}") for i in range(size)]
            masked.append([result.mask for result in await pool.run(units)])
        return masked
    finally:
        await pool.close()


def test_no_unit_of_many_batched_chunks_is_masked() -> None:
    # Many chunks of several sizes, each a batch: the marks change hands all the time.
    masked = asyncio.run(_grade_rounds([164, 100, 37, 9, 164, 64, 3, 164]))
    assert [sum(m) for m in masked] == [0] * len(masked)


class _Pool:
    """What a `WorkerHandle` reads of its pool."""

    stall_wall_factor, stall_retries, closing = 3.0, 1, False
    ctx = CTX

    def __init__(self) -> None:
        self.restarts: list[str] = []

    def on_restart(self, why: str) -> None:
        self.restarts.append(why)


@pytest.mark.parametrize("units", [1, 3])
@pytest.mark.parametrize("torn", [False, True])
def test_a_worker_stopped_while_it_marks_is_a_stall(units: int, torn: bool) -> None:
    # Stopped (SIGSTOP, a freezer) between the two writes of the sequence number, the
    # worker leaves no whole mark to judge: it is stalled all the same, not waited on.
    from rlvr.service.dispatch.worker_handle import Stop, WorkerHandle

    pool = _Pool()
    worker = WorkerHandle(pool, 0)  # type: ignore[arg-type]
    ours, _theirs = CTX.Pipe()
    stopped = CTX.Process(target=time.sleep, args=(60,))
    stopped.start()
    worker.process, worker.conn = stopped, ours
    progress = Progress(CTX)
    sent = [code_unit(deadline_s=0.1) for _ in range(units)]
    progress.mark(0, units, time.monotonic() - 10.0, 0.0)  # begun 10 s ago: past 3 x 0.1 s
    if torn:
        progress.shared[0] += 1
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(worker._wait(ours, progress, sent)), daemon=True)
    try:
        thread.start()
        thread.join(5.0)
    finally:
        stopped.kill()
    assert outcome, "the thread still waits on a stopped worker"
    [stop] = outcome
    assert isinstance(stop, Stop) and stop.retry and not stop.result.verdict == "timeout", stop
    assert pool.restarts == ["stalled"]
