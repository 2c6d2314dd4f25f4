"""Embedded dispatcher: a pool of verifier worker processes on this host.

Workers are started through a multiprocessing *forkserver* (a clean single-threaded
parent that has pre-imported the verifiers), never forked from the threaded server, so
replacing a killed worker costs a fork, not an interpreter start.

Each worker process (`dispatch.process`) builds its own verifier registry from the
`BuiltinConfig` the dispatcher was given, starts its sandbox, says it is ready, and is
driven by one thread here. The thread sends a chunk of
units; the worker answers with the chunk's results, in order, and meanwhile reports in
shared memory which unit it is on, since when and at what CPU time, so the deadline of
a unit runs from when the worker starts it and queueing never counts against an item.

Consecutive units of a verifier that verifies many at once (`BatchVerifying`: the code
verifier keeps their sandbox jobs in flight together) go to it together, and the
progress marks the whole batch. The verifier holds each item to its deadline inside the
batch; the thread stops a batch that used the CPU of all its deadlines, or that passed
the wall limit of the longest with none of its programs running, and its units then go
again one at a time, each under its own deadline as below.

A deadline is CPU time, as judges count it (see `dispatch.cpu`: the worker's and that of
the programs it runs for the unit): a unit that used its deadline of CPU gets `timeout`
(the graded item's fault). A unit that overran `stall_wall_factor` times
its deadline in wall time without using it was stalled by the grader (a stopped or
starved worker, a verifier waiting on something): that is never the item's fault, so it
runs again on a fresh worker up to `stall_retries` times, then is masked. Either way
the thread SIGKILLs the worker, starts a replacement and carries on with the chunk.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing as mp
import multiprocessing.forkserver
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from rlvr.service.dispatch.cpu import unit_usage
from rlvr.service.dispatch.fair import FairQueue
from rlvr.service.dispatch.process import WORKER_READY, worker_main
from rlvr.service.dispatch.progress import Mark, Progress
from rlvr.service.dispatch.spawning import WorkerContext
from rlvr.service.errors import BackendUnavailable
from rlvr.service.work import Unit, UnitResult, infrastructure_failure, stalled, timed_out
from rlvr.verifiers.config import BuiltinConfig

log = logging.getLogger(__name__)

FORKSERVER_PRELOAD = [
    "rlvr.service.dispatch.process",
    "rlvr.service.work",
    "rlvr.verifiers.format",
    "rlvr.verifiers.math",
    "rlvr.verifiers.code",
]
SHUTDOWN_GRACE_S = 2.0
# How long a new worker has to say it can verify (`process.WORKER_READY`): well above
# what its sandbox may take to start or to give up (the local zygote's 60 s), so that a
# sandbox that does not come up leaves a worker that verifies everything else.
WORKER_START_TIMEOUT_S = 150.0
# A worker that fails to start is started again after this, doubling up to the most:
# a pool that cannot start workers (a broken install, no memory to fork) waits between
# tries instead of spinning, and answers 503 meanwhile (`PoolDispatcher.run`).
RESPAWN_BACKOFF_S = 0.05
RESPAWN_BACKOFF_MAX_S = 5.0
# Consecutive failed starts of one worker after which the pool counts as broken.
FAILED_STARTS_BROKEN = 3
# How often a waiting thread looks at which unit its worker is on: the bound on how late
# a unit's own deadline is noticed after an earlier unit of its chunk finished.
PROGRESS_CHECK_S = 0.05
# How many times the units of a chunk go again after a worker was lost before it started
# any of them (no unit is to blame) before they are masked: the pool itself is failing.
UNSTARTED_RETRIES = 3
# How often an idle thread checks that its worker is still alive, so that a worker that
# died between jobs is replaced before the next job needs it.
IDLE_CHECK_S = 1.0


class PoolClosing(RuntimeError):
    """A worker was wanted while the pool shuts down."""


@dataclass
class _Chunk:
    """Units sent to one worker process at once, and where their results go."""

    units: list[Unit]
    done: Callable[[list[UnitResult]], None]


@dataclass
class _Stop:
    """Why the worker was killed in the middle of a chunk: the unit at `index` of what
    was sent gets `result`, unless `retry` (a stall of the grader) lets it run again.
    Index -1: the worker was lost before it started any unit; `result` is for them all
    if that keeps happening."""

    index: int
    result: UnitResult
    retry: bool = False
    # A batch (count > 1) that stalled or crashed: its units go again, one at a time.
    count: int = 1


class _Worker:
    """One worker process and the thread that feeds it chunks."""

    def __init__(self, pool: PoolDispatcher, index: int) -> None:
        self.pool = pool
        self.index = index
        self.process: Any = None
        self.conn: Connection | None = None
        self.progress: Progress | None = None
        self.thread = threading.Thread(target=self._loop, name=f"rlvr-worker-{index}", daemon=True)
        self.failed_starts = 0

    def spawn(self) -> None:
        parent, child = mp.Pipe(duplex=True)
        # Results come back once per chunk: the marks are how each unit's own deadline is
        # still enforced. New with each worker, so none is left half written by a killed one.
        self.progress = Progress(self.pool.ctx)
        proc = self.pool.ctx.Process(
            target=worker_main,
            args=(child, self.progress, self.pool.max_rss_mb, self.pool.config),
            name=f"rlvr-verifier-{self.index}",
            daemon=True,
        )
        proc.start()
        child.close()
        self.process, self.conn = proc, parent

    def kill(self) -> None:
        proc, conn = self.process, self.conn
        self.process = self.conn = None
        if proc is not None and proc.is_alive():
            proc.kill()
        if proc is not None:
            proc.join(timeout=5)
        if conn is not None:
            conn.close()

    def alive(self) -> bool:
        process = self.process  # one read: the worker's thread may clear it meanwhile
        return process is not None and process.is_alive()

    def await_ready(self) -> None:
        """Wait until the worker has started what it needs (its sandbox): no unit's time
        runs while it does. Raises if it does not come up."""
        conn, process = self.conn, self.process
        if conn is None or not conn.poll(WORKER_START_TIMEOUT_S):
            raise RuntimeError(f"the verifier worker did not come up within {WORKER_START_TIMEOUT_S} s")
        try:
            said = conn.recv()
        except EOFError:
            if process is not None:
                process.join(timeout=1)
            code = None if process is None else process.exitcode
            raise RuntimeError(f"the verifier worker exited before it was ready (exit code {code})") from None
        if said != WORKER_READY:
            raise RuntimeError(f"the verifier worker said {said!r} instead of that it was ready")

    def _ensure(self) -> Connection:
        """The live worker's connection, starting one if need be. Raises BackendUnavailable
        once starts keep failing, so that the chunk waiting for it is masked rather than
        held while the pool retries."""
        while self.conn is None or not self.alive():
            self.kill()
            if self.pool.closing:
                raise PoolClosing("the verifier pool is closing: no new worker")
            try:
                self.spawn()
                self.await_ready()
            except Exception as exc:
                self.kill()
                self.failed_starts += 1
                log.error("could not start verifier worker %d (try %d): %s", self.index, self.failed_starts, exc)
                time.sleep(min(RESPAWN_BACKOFF_S * 2 ** (self.failed_starts - 1), RESPAWN_BACKOFF_MAX_S))
                if self.pool.closing:
                    raise
                if self.failed_starts >= FAILED_STARTS_BROKEN:
                    self.pool.broken = f"verifier workers do not start: {exc}"
                    raise BackendUnavailable(self.pool.broken) from exc
        self.failed_starts = 0
        self.pool.broken = None
        assert self.conn is not None
        return self.conn

    def _loop(self) -> None:
        while True:
            try:
                chunk = self.pool.chunks.get(IDLE_CHECK_S)
            except queue.Empty:
                if not self.pool.closing and not self.alive():
                    self.pool.on_restart("died_idle")
                    with contextlib.suppress(PoolClosing, BackendUnavailable):
                        self._ensure()
                continue
            if chunk is None:
                return
            try:
                results = self._run(chunk.units)
            except Exception as exc:  # the pool itself broke: every unit of the chunk is masked
                log.exception("verifier worker %d failed", self.index)
                results = [infrastructure_failure(f"worker pool failure: {exc}") for _ in chunk.units]
            chunk.done(results)

    def _run(self, units: list[Unit]) -> list[UnitResult]:
        results: list[UnitResult | None] = [None] * len(units)
        stalls = [0] * len(units)
        todo = list(range(len(units)))
        batching = True
        unstarted = 0
        while todo:
            conn = self._ensure()
            progress = self.progress
            assert progress is not None
            progress.mark(-1, 1, time.monotonic(), 0.0)  # the worker is between chunks: no race
            sent = [units[i] for i in todo]
            try:
                conn.send((sent, batching))
            except (OSError, ValueError) as exc:  # the worker died idle, unnoticed until now
                outcome: list[UnitResult] | _Stop = self._lost(f"could not hand the verifier worker its units: {exc}")
            else:
                outcome = self._wait(conn, progress, sent)
            if not isinstance(outcome, _Stop):
                for i, res in zip(todo, outcome, strict=True):
                    results[i] = res
                break
            if outcome.index < 0:
                # No unit had started, so none is to blame: all go again, on a fresh worker.
                unstarted += 1
                if unstarted <= UNSTARTED_RETRIES:
                    continue
                for i in todo:
                    results[i] = outcome.result
                break
            if outcome.count > 1 and batching:
                # Which unit of the batch is to blame is unknown: alone, each is judged
                # by its own deadline.
                batching = False
                continue
            # The worker died with the results of this chunk: the failing unit gets its
            # verdict (or, stalled, another try), and the others (cheap, deterministic)
            # run again on a fresh worker.
            failed = todo[outcome.index]
            if outcome.retry and stalls[failed] < self.pool.stall_retries:
                stalls[failed] += 1
                continue
            results[failed] = outcome.result
            todo.remove(failed)
        return [r if r is not None else infrastructure_failure("unit lost") for r in results]

    def _wait(self, conn: Connection, progress: Progress, sent: list[Unit]) -> list[UnitResult] | _Stop:
        """The chunk's results, or why the worker was killed before it finished."""
        unsure_since: float | None = None
        while True:
            mark = _whole(progress, sent)
            if mark is None:
                unsure_since = unsure_since or time.monotonic()
                verdict: float | _Stop = self._judge_unsure(unsure_since, sent)
            elif mark.count > 1:
                verdict = self._judge_batch(mark, sent[mark.index : mark.index + mark.count])
            else:
                verdict = self._judge(mark, sent[max(mark.index, 0)].deadline_s)
            if isinstance(verdict, _Stop):
                if progress.read() != mark:
                    continue  # the worker moved on while we measured
                self.kill()
                self.pool.on_restart("stalled" if verdict.retry else "deadline")
                return verdict
            if conn.poll(verdict):
                try:
                    results: list[UnitResult] = conn.recv()
                    return results
                except (EOFError, OSError):
                    return self._crashed(progress, sent)

    def _judge_unsure(self, since: float, sent: list[Unit]) -> float | _Stop:
        """No whole mark since `since`: the worker is in the middle of writing one, a few
        microseconds. Stopped there (SIGSTOP, a freezer), it is stalled like any
        other stalled worker once past the wall limit of the longest deadline sent:
        its units go again."""
        wall_limit = max(unit.deadline_s for unit in sent) * self.pool.stall_wall_factor
        if time.monotonic() - since < wall_limit:
            return PROGRESS_CHECK_S
        return _Stop(0, infrastructure_failure("verifier worker stalled while marking its progress"), True, len(sent))

    def _judge_batch(self, mark: Mark, batch: list[Unit]) -> float | _Stop:
        """How long to wait before looking again at a batch of units verified together,
        or a _Stop when it went wrong: it used the CPU of all its deadlines together, or
        it is past the wall limit of its longest deadline with none of its programs
        running (each program's own limits are the verifier's to enforce)."""
        index, started, cpu_start = mark.index, mark.started, mark.cpu_start
        wall = time.monotonic() - started
        longest = max(unit.deadline_s for unit in batch)
        wall_limit = longest * self.pool.stall_wall_factor
        if wall < longest:
            return min(PROGRESS_CHECK_S, longest - wall)
        usage = unit_usage(self.process.pid, cpu_start, started) if self.process is not None else None
        if usage is None:
            return PROGRESS_CHECK_S  # gone: the pipe reports it
        failure = infrastructure_failure("a batch of units stalled or overran its deadlines")
        if usage.cpu_s >= sum(unit.deadline_s for unit in batch):
            return _Stop(index, failure, True, len(batch))
        if wall >= wall_limit and not usage.program_alive:
            return _Stop(index, failure, True, len(batch))
        return PROGRESS_CHECK_S

    def _judge(self, mark: Mark, deadline_s: float) -> float | _Stop:
        """How long to wait before looking again, or a _Stop when the unit the mark is on
        (index -1: the chunk not started yet) used its CPU deadline or stalled past its
        wall limit."""
        index, started, cpu_start = mark.index, mark.started, mark.cpu_start
        wall = time.monotonic() - started
        wall_limit = deadline_s * self.pool.stall_wall_factor
        if index < 0:
            if wall >= wall_limit:
                return _Stop(-1, infrastructure_failure("verifier worker did not start the chunk in time"))
            return min(PROGRESS_CHECK_S, wall_limit - wall)
        if wall < deadline_s:  # CPU time cannot have passed the deadline yet
            return min(PROGRESS_CHECK_S, deadline_s - wall)
        usage = unit_usage(self.process.pid, cpu_start, started) if self.process is not None else None
        if usage is None:
            return PROGRESS_CHECK_S  # gone: the pipe reports it
        cpu = usage.cpu_s
        # Past the wall limit with the graded program still running, the program holds
        # the time (it sleeps or blocks): its fault, as a judge's wall limit says.
        if cpu >= deadline_s or (wall >= wall_limit and usage.program_alive):
            return _Stop(index, timed_out(deadline_s, cpu_s=cpu, wall_s=wall))
        if wall >= wall_limit:
            return _Stop(index, stalled(deadline_s, cpu_s=cpu, wall_s=wall), True)
        return min(PROGRESS_CHECK_S, deadline_s - cpu, wall_limit - wall)

    def _lost(self, why: str) -> _Stop:
        """The worker is gone before it started a unit of what it was sent."""
        self.kill()
        self.pool.on_restart("crashed")
        return _Stop(-1, infrastructure_failure(why))

    def _crashed(self, progress: Progress, sent: list[Unit]) -> _Stop:
        code = None
        if self.process is not None:
            self.process.join(timeout=1)
            code = self.process.exitcode
        self.kill()
        self.pool.on_restart("crashed")
        # Read progress afresh: the worker may have moved on while we waited. Died in the
        # middle of a mark, it leaves the blame unknown: the units run again alone (or, if
        # they were, the first one has another try).
        mark = _whole(progress, sent)
        failure = infrastructure_failure(f"verifier worker died while grading (exit code {code})", exit_code=code)
        if mark is None:
            return _Stop(0, failure, retry=True, count=len(sent))
        return _Stop(mark.index, failure, count=mark.count)


class PoolDispatcher:
    """Verifies units on `workers` local processes, `chunk_size` units at a time."""

    # Results come back to the grader, which caches them.
    stores_verdicts = False

    def __init__(
        self,
        *,
        config: BuiltinConfig,
        workers: int,
        chunk_size: int,
        max_rss_mb: int,
        stall_wall_factor: float,
        stall_retries: int,
        on_restart: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.stall_wall_factor = stall_wall_factor
        self.stall_retries = stall_retries
        self.workers = workers
        self.chunk_size = chunk_size
        self.max_rss_mb = max_rss_mb
        self.ctx = WorkerContext()
        # Why workers do not start, while none can (`_Worker._ensure`): requests get 503.
        self.broken: str | None = None
        # Chunks of every request, taken round-robin between requests.
        self.chunks: FairQueue[_Chunk] = FairQueue()
        self._requests = itertools.count()
        self.handles: list[_Worker] = []
        self.closing = False
        self.restarts: dict[str, int] = {"deadline": 0, "stalled": 0, "crashed": 0, "died_idle": 0}
        self._restart_hook = on_restart
        self._lock = threading.Lock()

    def on_restart(self, reason: str) -> None:
        with self._lock:
            self.restarts[reason] = self.restarts.get(reason, 0) + 1
        if self._restart_hook is not None:
            self._restart_hook(reason)

    async def start(self) -> None:
        self.ctx.set_forkserver_preload(FORKSERVER_PRELOAD)
        self.handles = [_Worker(self, i) for i in range(self.workers)]
        loop = asyncio.get_running_loop()

        failed: list[str] = []

        # Spawning goes through the forkserver, whose first start imports the verifiers.
        def spawn_all() -> None:
            for handle in self.handles:
                handle.spawn()
            for handle in self.handles:  # together: each starts its sandbox meanwhile
                try:
                    handle.await_ready()
                except Exception as exc:
                    log.error("verifier worker %d did not start: %s", handle.index, exc)
                    failed.append(f"{type(exc).__name__}: {exc}")
                    handle.kill()  # its thread starts another

        await loop.run_in_executor(None, spawn_all)
        if not any(handle.alive() for handle in self.handles):
            self.closing = True
            for handle in self.handles:
                handle.kill()
            _stop_forkserver()
            reasons = "; ".join(sorted(set(failed)))
            raise BackendUnavailable(f"the verifier pool could not start any of its {self.workers} workers: {reasons}")
        for handle in self.handles:
            handle.thread.start()

    async def close(self) -> None:
        self.closing = True
        self.chunks.stop(len(self.handles))
        loop = asyncio.get_running_loop()

        def stop() -> None:
            for handle in self.handles:
                handle.thread.join(timeout=SHUTDOWN_GRACE_S)
                if handle.conn is not None:
                    with contextlib.suppress(OSError):
                        handle.conn.send(None)
                handle.kill()
            _stop_forkserver()

        await loop.run_in_executor(None, stop)

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        if not units:
            return []
        if self.closing:
            return [infrastructure_failure("dispatcher is shutting down") for _ in units]
        if self.broken is not None:
            raise BackendUnavailable(self.broken)
        loop = asyncio.get_running_loop()
        size = chunk_units(len(units), self.workers, self.chunk_size)
        owner = next(self._requests)
        futures: list[asyncio.Future[list[UnitResult]]] = []
        chunks: list[_Chunk] = []
        for start in range(0, len(units), size):
            fut: asyncio.Future[list[UnitResult]] = loop.create_future()

            def done(results: list[UnitResult], fut: asyncio.Future[list[UnitResult]] = fut) -> None:
                loop.call_soon_threadsafe(_resolve, fut, results)

            futures.append(fut)
            chunks.append(_Chunk(list(units[start : start + size]), done))
        self.chunks.put_many(owner, chunks)
        try:
            gathered = await asyncio.gather(*futures)
        except asyncio.CancelledError:
            self.chunks.cancel(owner)  # the request is gone: its queued chunks are not verified
            raise
        return [result for chunk in gathered for result in chunk]

    def health(self) -> dict[str, Any]:
        alive = sum(1 for h in self.handles if h.alive())
        return {
            "kind": "embedded",
            "ready": bool(self.handles) and alive > 0 and not self.closing and self.broken is None,
            "workers": self.workers,
            "workers_alive": alive,
            "restarts": dict(self.restarts),
            # Which processes verify: operators (and tests) can inspect or signal them.
            "pids": [process.pid for h in self.handles if (process := h.process) is not None],
            "queued_jobs": self.chunks.qsize(),
            "broken": self.broken,
        }

    async def stream_stats(self) -> None:
        return None


def chunk_units(units: int, workers: int, chunk_size: int) -> int:
    """Units per chunk of a batch of `units`: at most `chunk_size`, in as many rounds of
    one chunk per worker as that takes, split evenly. The last round then ends at about
    the same time on every worker, instead of one worker idling after a short last chunk
    while another still runs a full one (164 units on 2 workers: 28 per chunk, not 32
    five times and 4). A small batch is spread over every worker.

    >>> chunk_units(164, 2, 32), chunk_units(500, 2, 32), chunk_units(10, 2, 32), chunk_units(1, 4, 32)
    (28, 32, 5, 1)
    """
    rounds = -(-units // (workers * chunk_size))
    return max(1, -(-units // (workers * rounds)))


def _whole(progress: Progress, sent: list[Unit]) -> Mark | None:
    """The worker's last mark, None while it is writing one (or, where the memory model
    reorders what the sequence lock orders, if the mark names units that were not sent)."""
    mark = progress.read()
    if mark is None or mark.count < 1 or not -1 <= mark.index < len(sent) or mark.index + mark.count > len(sent):
        return None
    if mark.index < 0 and mark.count != 1:
        return None
    return mark


def _stop_forkserver() -> None:
    """Stops the forkserver with the pool, rather than when this process exits (which a
    signal may never let happen): it is a process and a /tmp/pymp-* socket directory.
    The next pool starts a new one."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)  # a private method, so looked up with care
    if stop is not None:
        with contextlib.suppress(OSError, ChildProcessError):
            stop()


def _resolve(fut: asyncio.Future[list[UnitResult]], results: list[UnitResult]) -> None:
    if not fut.done():
        fut.set_result(results)
