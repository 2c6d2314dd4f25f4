"""Slots: processes that run batches of jobs, fed from one first-come-first-served
queue by a thread per process (what `/run_code` runs its programs in).

A slot's thread takes the job at the head of the queue and, with it, up to
`max_batch - 1` jobs already waiting behind it, so that a sandbox can start a
burst of jobs together (`Sandbox.run_many`) rather than one process round trip
each. Each job is answered as soon as its outcome is back, not when its batch is
done: a quick program does not wait for a slow one started with it. A batch's
deadline starts when its process takes it, never while it waits for a turn: a
queue behind slow jobs costs a job time, not its limits; it is the sum of its
jobs' deadlines, which holds however the process runs them. A process
that dies, or is still on a batch past that deadline (wedged), is killed and
replaced alone: it costs the jobs it held, and the other slots' never see it. The
thread hands the next batch to its process as soon as the last one is back,
without a round trip through the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

from rlvr.service.dispatch.spawning import WorkerContext

R = TypeVar("R")
# How long a killed process gets to be reaped before its slot moves on.
REAP_TIMEOUT_S = 5.0


class SlotLost(RuntimeError):
    """The job's process died, or was killed past the job's deadline."""


@dataclass
class _Job:
    args: tuple[Any, ...]
    deadline_s: float
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


# `report(i, outcome)` as each job's outcome is known; returns every job's, in order.
Report = Callable[[int, Any], None]
BatchTarget = Callable[[list[tuple[Any, ...]], Report], list[Any]]


def _failure(exc: Exception) -> RuntimeError:
    return RuntimeError(f"{type(exc).__name__}: {exc}")


class EachCall:
    """A batch target that calls `fn(*args)` for each job in turn; a job that raises
    fails alone. Picklable when `fn` is importable by name."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, batch: list[tuple[Any, ...]], report: Report) -> list[Any]:
        outcomes: list[Any] = []
        for index, args in enumerate(batch):
            try:
                outcomes.append(self.fn(*args))
            except Exception as exc:
                outcomes.append(_failure(exc))
            report(index, outcomes[-1])
        return outcomes


def _serve(conn: Connection, target: BatchTarget) -> None:
    """A slot's process: `target` for each batch it is sent, until told to stop. Each
    job's outcome goes back as `(index, outcome)` once, as soon as it is known."""
    # A session of its own, so that its kill never reaches the server's process group.
    os.setsid()
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        report = _Reporter(conn)
        try:
            outcomes = target(batch, report)
        except Exception as exc:  # the batch's failure, not the process's: it takes the next
            outcomes = [_failure(exc)] * len(batch)
        for index, outcome in enumerate(outcomes):
            report(index, outcome)


class _Reporter:
    """Sends each job's outcome back once, the first time it is reported."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.sent: set[int] = set()

    def __call__(self, index: int, outcome: Any) -> None:
        if index not in self.sent:
            self.sent.add(index)
            self.conn.send((index, outcome))


class _Slot:
    def __init__(self, pool: SlotPool[Any], index: int) -> None:
        self.pool = pool
        self.index = index
        self.process: Any = None
        self.conn: Connection | None = None
        self.thread = threading.Thread(target=self._loop, name=f"rlvr-slot-{index}", daemon=True)

    def _loop(self) -> None:
        while True:
            batch, stop = self._take()
            if batch:
                pending = dict(enumerate(batch))
                try:
                    self._run(pending)
                except BaseException as exc:  # whatever happens, the requests get an answer
                    for job in pending.values():
                        _answer(job, exc)
            if stop:
                self._stop()
                return

    def _take(self) -> tuple[list[_Job], bool]:
        """The next batch: the head of the queue and the jobs already waiting behind it,
        less those whose requests stopped waiting; and whether the pool is closing."""
        jobs = [self.pool.jobs.get()]
        while len(jobs) < self.pool.max_batch and jobs[-1] is not None:
            try:
                jobs.append(self.pool.jobs.get_nowait())
            except queue.Empty:
                break
        stop = jobs[-1] is None
        return [job for job in jobs if job is not None and not job.future.cancelled()], stop

    def _run(self, pending: dict[int, _Job]) -> None:
        """Send the batch and answer each job as its outcome comes back; those left when
        the process dies or passes the batch's deadline are lost."""
        conn = self._ensure()
        deadline_s = sum(job.deadline_s for job in pending.values())
        due = time.monotonic() + deadline_s
        lost: SlotLost | None = None
        try:
            conn.send([job.args for job in pending.values()])
            while pending and lost is None:
                if conn.poll(max(0.0, due - time.monotonic())):
                    index, outcome = conn.recv()
                    job = pending.pop(index, None)
                    if job is not None:
                        _answer(job, outcome)
                else:
                    lost = SlotLost(f"no answer {deadline_s:g}s after the batch started: killed")
        except (EOFError, OSError) as exc:
            lost = SlotLost(f"the process was lost: {type(exc).__name__}")
        if lost is not None:
            self._kill()
            for job in pending.values():
                _answer(job, lost)
            pending.clear()

    def _ensure(self) -> Connection:
        if self.process is not None and not self.process.is_alive():
            self._kill()  # died between jobs: replaced before this one is sent
        if self.conn is None:
            ctx = WorkerContext()
            parent, child = ctx.Pipe(duplex=True)
            process = ctx.Process(target=_serve, args=(child, self.pool.target), name=f"rlvr-slot-{self.index}")
            process.daemon = True
            process.start()
            child.close()
            self.process, self.conn = process, parent
        return self.conn

    def _kill(self) -> None:
        process, conn = self.process, self.conn
        self.process = self.conn = None
        if process is not None:
            process.kill()
            process.join(timeout=REAP_TIMEOUT_S)
        if conn is not None:
            conn.close()

    def _stop(self) -> None:
        conn, self.conn, self.process = self.conn, None, None
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.send(None)
            conn.close()


def _answer(job: _Job, outcome: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits
        job.loop.call_soon_threadsafe(_settle, job.future, outcome)


def _settle(future: asyncio.Future[Any], outcome: Any) -> None:
    if future.done():
        return  # cancelled meanwhile
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


class SlotPool(Generic[R]):
    """`processes` slots that run batches of at most `max_batch` jobs with `target`
    (which returns one outcome per job, in order), started on first use."""

    def __init__(self, processes: int, target: BatchTarget, max_batch: int = 1) -> None:
        self.target = target
        self.max_batch = max_batch
        self.jobs: queue.Queue[_Job | None] = queue.Queue()
        self._slots = [_Slot(self, i) for i in range(processes)]
        self._started = False
        self._closed = False

    async def run(self, *args: Any, deadline_s: float) -> R:
        """The outcome of the job `args` in a free slot, once one is; SlotLost when its
        process died or had not answered its batch's deadline after it took the batch."""
        if self._closed:
            raise SlotLost("the pool is closed")
        if not self._started:
            self._started = True
            for slot in self._slots:
                slot.thread.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self.jobs.put(_Job(args, deadline_s, loop, future))
        return await future

    def close(self) -> None:
        """Each slot's process stops once its batch in hand, if any, is done."""
        self._closed = True
        for _ in self._slots:
            self.jobs.put(None)
