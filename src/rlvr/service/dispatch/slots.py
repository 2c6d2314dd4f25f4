"""Slots: processes that run one job at a time each, fed from one first-come-first-served
queue by a thread per process (what `/run_code` runs its programs in).

A job's deadline starts when its process takes it, never while it waits for a turn: a
queue behind slow jobs costs a job time, not its limits. A process that dies, or is
still on a job past the job's deadline (wedged), is killed and replaced alone: the jobs
of the other slots never see it. The thread hands the next job to its process as soon as
the last one is back, without a round trip through the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
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


def _serve(conn: Connection, target: Callable[..., Any]) -> None:
    """A slot's process: `target(*args)` for each job it is sent, until told to stop."""
    # A session of its own, so that its kill never reaches the server's process group.
    os.setsid()
    while True:
        try:
            args = conn.recv()
        except (EOFError, OSError):
            return
        if args is None:
            return
        try:
            outcome = target(*args)
        except Exception as exc:  # the job's failure, not the process's: it takes the next
            outcome = RuntimeError(f"{type(exc).__name__}: {exc}")
        conn.send(outcome)


class _Slot:
    def __init__(self, pool: SlotPool[Any], index: int) -> None:
        self.pool = pool
        self.index = index
        self.process: Any = None
        self.conn: Connection | None = None
        self.thread = threading.Thread(target=self._loop, name=f"rlvr-slot-{index}", daemon=True)

    def _loop(self) -> None:
        while True:
            job = self.pool.jobs.get()
            if job is None:
                self._stop()
                return
            if job.future.cancelled():
                continue  # its request stopped waiting before its turn
            try:
                outcome: Any = self._run(job)
            except BaseException as exc:  # whatever happens, the request gets an answer
                outcome = exc
            with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits
                job.loop.call_soon_threadsafe(_settle, job.future, outcome)

    def _run(self, job: _Job) -> Any:
        conn = self._ensure()
        try:
            conn.send(job.args)
            if conn.poll(job.deadline_s):
                return conn.recv()
            self._kill()
            return SlotLost(f"no answer {job.deadline_s:g}s after the job started: killed")
        except (EOFError, OSError) as exc:
            self._kill()
            return SlotLost(f"the process was lost: {type(exc).__name__}")

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


def _settle(future: asyncio.Future[Any], outcome: Any) -> None:
    if future.done():
        return  # cancelled meanwhile
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


class SlotPool(Generic[R]):
    """`processes` slots that run `target(*args)`, started on first use."""

    def __init__(self, processes: int, target: Callable[..., R]) -> None:
        self.target = target
        self.jobs: queue.Queue[_Job | None] = queue.Queue()
        self._slots = [_Slot(self, i) for i in range(processes)]
        self._started = False
        self._closed = False

    async def run(self, *args: Any, deadline_s: float) -> R:
        """`target(*args)` in a free slot, once one is; SlotLost when its process died or
        had not answered `deadline_s` after it took the job."""
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
        """Each slot's process stops once its job in hand, if any, is done."""
        self._closed = True
        for _ in self._slots:
            self.jobs.put(None)
