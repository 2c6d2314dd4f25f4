"""One verifier worker process of the local pool (`dispatch.pool`), and the thread that
feeds it chunks and holds each unit to its deadline: what that module's notes describe,
for one process.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from rlvr.service.dispatch.cpu import RunQueueWait, unit_usage
from rlvr.service.dispatch.process import WORKER_READY, worker_main
from rlvr.service.dispatch.progress import Mark, Progress
from rlvr.service.work import Unit, UnitResult, infrastructure_failure, stalled, timed_out

if TYPE_CHECKING:
    from rlvr.service.dispatch.pool import PoolDispatcher

log = logging.getLogger(__name__)

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
# Time spent waiting for a CPU is not held against the grader, but only up to this many
# times a unit's wall limit: a machine too starved to grade at all masks what it cannot.
STARVED_WALL_FACTOR = 4.0
# How many times the units of a chunk go again after a worker was lost before it started
# any of them (no unit is to blame) before they are masked: the pool itself is failing.
UNSTARTED_RETRIES = 3
# How often an idle thread checks that its worker is still alive, so that a worker that
# died between jobs is replaced before the next job needs it.
IDLE_CHECK_S = 1.0


class PoolClosing(RuntimeError):
    """A worker was wanted while the pool shuts down."""


class WorkerUnstartable(RuntimeError):
    """This slot's worker failed to start `FAILED_STARTS_BROKEN` times in a row."""


@dataclass
class Chunk:
    """Units sent to one worker process at once, and where their results go; `owner`
    is the request they belong to (the fair queue's key)."""

    units: list[Unit]
    done: Callable[[list[UnitResult]], None]
    owner: int = 0


@dataclass
class Stop:
    """Why the worker was killed in the middle of a chunk: the unit at `index` of what
    was sent gets `result`, unless `retry` (a stall of the grader) lets it run again.
    Index -1: the worker was lost before it started any unit; `result` is for them all
    if that keeps happening."""

    index: int
    result: UnitResult
    retry: bool = False
    # A batch (count > 1) that stalled or crashed: its units go again, one at a time.
    count: int = 1


class WorkerHandle:
    """One worker process and the thread that feeds it chunks."""

    def __init__(self, pool: PoolDispatcher, index: int) -> None:
        self.pool = pool
        self.index = index
        self.process: Any = None
        self.conn: Connection | None = None
        self.progress: Progress | None = None
        self.thread = threading.Thread(target=self._loop, name=f"rlvr-worker-{index}", daemon=True)
        self.failed_starts = 0
        # Why this slot's worker does not start, while it does not (`_ensure`).
        self.start_error: str | None = None
        self.run_queue = RunQueueWait()

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
        """The live worker's connection, starting one if need be, with a growing pause
        between failed starts. Raises WorkerUnstartable once they keep failing, so that
        the chunk waiting for it goes to another worker, or is masked where none is
        left, rather than held while this slot retries."""
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
                    raise PoolClosing("the verifier pool closed while a worker started") from exc
                if self.failed_starts >= FAILED_STARTS_BROKEN:
                    self.start_error = f"verifier workers do not start: {exc}"
                    raise WorkerUnstartable(self.start_error) from exc
        self.failed_starts = 0
        self.start_error = None
        assert self.conn is not None
        return self.conn

    def _loop(self) -> None:
        while True:
            if self.start_error is not None and self.pool.closing:
                return
            if self.start_error is not None and not self._restarted():
                # A slot that cannot start a worker takes no work while another can;
                # where none can, what waits is masked at once, never left waiting.
                unavailable = self.pool.unavailable()
                for waiting in self.pool.chunks.drain() if unavailable is not None else []:
                    waiting.done([infrastructure_failure(f"worker pool failure: {unavailable}") for _ in waiting.units])
                continue
            try:
                chunk = self.pool.chunks.get(IDLE_CHECK_S)
            except queue.Empty:
                if not self.pool.closing and not self.alive() and self.start_error is None:
                    self.pool.on_restart("died_idle")
                    with contextlib.suppress(PoolClosing, WorkerUnstartable):
                        self._ensure()
                continue
            if chunk is None:
                return
            self._serve(chunk)

    def _restarted(self) -> bool:
        """One more try at starting this slot's worker (after its pause)."""
        try:
            self._ensure()
        except (PoolClosing, WorkerUnstartable):
            return False
        return True

    def _serve(self, chunk: Chunk) -> None:
        try:
            results = self._run(chunk.units)
        except WorkerUnstartable as exc:
            if self.pool.unavailable() is None:
                self.pool.chunks.put_many(chunk.owner, [chunk])  # for a worker that runs
                return
            results = [infrastructure_failure(f"worker pool failure: {exc}") for _ in chunk.units]
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
                outcome: list[UnitResult] | Stop = self._lost(f"could not hand the verifier worker its units: {exc}")
            else:
                outcome = self._wait(conn, progress, sent)
            if not isinstance(outcome, Stop):
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

    def _wait(self, conn: Connection, progress: Progress, sent: list[Unit]) -> list[UnitResult] | Stop:
        """The chunk's results, or why the worker was killed before it finished."""
        unsure_since: float | None = None
        while True:
            mark = whole_batch(progress, sent)
            if mark is None:
                unsure_since = unsure_since or time.monotonic()
                verdict: float | Stop = self._judge_unsure(unsure_since, sent)
            elif mark.count > 1:
                verdict = self._judge_batch(mark, sent[mark.index : mark.index + mark.count], self._waited(mark))
            else:
                verdict = self._judge(mark, sent[max(mark.index, 0)].deadline_s, self._waited(mark))
            if isinstance(verdict, Stop):
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

    def _waited(self, mark: Mark) -> float:
        """Seconds the worker has waited for a CPU while on `mark`."""
        process = self.process
        return 0.0 if process is None else self.run_queue.since_mark(process.pid, mark)

    def _judge_unsure(self, since: float, sent: list[Unit]) -> float | Stop:
        """No whole mark since `since`: the worker is in the middle of writing one, a few
        microseconds. Stopped there (SIGSTOP, a freezer), it is stalled like any
        other stalled worker once past the wall limit of the longest deadline sent:
        its units go again."""
        wall_limit = max(unit.deadline_s for unit in sent) * self.pool.stall_wall_factor
        if time.monotonic() - since < wall_limit:
            return PROGRESS_CHECK_S
        return Stop(0, infrastructure_failure("verifier worker stalled while marking its progress"), True, len(sent))

    def _judge_batch(self, mark: Mark, batch: list[Unit], waited_s: float) -> float | Stop:
        """How long to wait before looking again at a batch of units verified together,
        or a Stop when it went wrong: it used the CPU of all its deadlines together, or
        it is past the wall limit of its longest deadline, not counting the time it
        waited for a CPU, with none of its programs running (each program's own limits
        are the verifier's to enforce)."""
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
            return Stop(index, failure, True, len(batch))
        ran_wall = wall - max(waited_s, usage.program_waited_s)
        if (ran_wall >= wall_limit and not usage.program_alive) or wall >= wall_limit * STARVED_WALL_FACTOR:
            return Stop(index, failure, True, len(batch))
        return PROGRESS_CHECK_S

    def _judge(self, mark: Mark, deadline_s: float, waited_s: float) -> float | Stop:
        """How long to wait before looking again, or a Stop when the unit the mark is on
        (index -1: the chunk not started yet) used its CPU deadline or stalled past its
        wall limit. Time its processes waited for a CPU (a busy machine) is not a stall,
        up to `STARVED_WALL_FACTOR` times the limit."""
        index, started, cpu_start = mark.index, mark.started, mark.cpu_start
        wall = time.monotonic() - started
        wall_limit = deadline_s * self.pool.stall_wall_factor
        starved_out = wall >= wall_limit * STARVED_WALL_FACTOR
        if index < 0:
            if wall - waited_s >= wall_limit or starved_out:
                return Stop(-1, infrastructure_failure("verifier worker did not start the chunk in time"))
            return min(PROGRESS_CHECK_S, wall_limit - wall + waited_s)
        if wall < deadline_s:  # CPU time cannot have passed the deadline yet
            return min(PROGRESS_CHECK_S, deadline_s - wall)
        usage = unit_usage(self.process.pid, cpu_start, started) if self.process is not None else None
        if usage is None:
            return PROGRESS_CHECK_S  # gone: the pipe reports it
        cpu = usage.cpu_s
        ran_wall = wall - max(waited_s, usage.program_waited_s)
        # Past the wall limit with the graded program still running, the program holds
        # the time (it sleeps or blocks): its fault, as a judge's wall limit says.
        if cpu >= deadline_s or (ran_wall >= wall_limit and usage.program_alive):
            return Stop(index, timed_out(deadline_s, cpu_s=cpu, wall_s=wall))
        if ran_wall >= wall_limit or starved_out:
            return Stop(index, stalled(deadline_s, cpu_s=cpu, wall_s=wall), True)
        return min(PROGRESS_CHECK_S, deadline_s - cpu, wall_limit - ran_wall)

    def _lost(self, why: str) -> Stop:
        """The worker is gone before it started a unit of what it was sent."""
        self.kill()
        self.pool.on_restart("crashed")
        return Stop(-1, infrastructure_failure(why))

    def _crashed(self, progress: Progress, sent: list[Unit]) -> Stop:
        code = None
        if self.process is not None:
            self.process.join(timeout=1)
            code = self.process.exitcode
        self.kill()
        self.pool.on_restart("crashed")
        # Read progress afresh: the worker may have moved on while we waited. Died in the
        # middle of a mark, it leaves the blame unknown: the units run again alone (or, if
        # they were, the first one has another try).
        mark = whole_batch(progress, sent)
        failure = infrastructure_failure(f"verifier worker died while grading (exit code {code})", exit_code=code)
        if mark is None:
            return Stop(0, failure, retry=True, count=len(sent))
        return Stop(mark.index, failure, count=mark.count)


def whole_batch(progress: Progress, sent: list[Unit]) -> Mark | None:
    """The worker's last mark, None while it is writing one (or, where the memory model
    reorders what the sequence lock orders, if the mark names units that were not sent)."""
    mark = progress.read()
    if mark is None or mark.count < 1 or not -1 <= mark.index < len(sent) or mark.index + mark.count > len(sent):
        return None
    if mark.index < 0 and mark.count != 1:
        return None
    return mark
