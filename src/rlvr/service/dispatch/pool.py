"""The local worker pool, embedded mode's dispatcher: verifier worker processes on this
host, each driven by a `worker_handle.WorkerHandle`.

Workers are started through a multiprocessing *forkserver* (a clean single-threaded
parent that has pre-imported the verifiers), never forked from the threaded server, so
replacing a killed worker costs a fork, not an interpreter start.

Each worker process (`dispatch.process`) builds its own verifier registry from the
`BuiltinConfig` the dispatcher was given, starts its sandbox, says it is ready, and is
driven by one thread here (a `WorkerHandle`). The thread sends a chunk of
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
import multiprocessing.forkserver
import threading
from collections.abc import Callable, Sequence
from typing import Any

from rlvr.service.dispatch.fair import FairQueue
from rlvr.service.dispatch.spawning import WorkerContext
from rlvr.service.dispatch.worker_handle import Chunk, WorkerHandle
from rlvr.service.errors import BackendUnavailable
from rlvr.service.work import Unit, UnitResult, infrastructure_failure
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
        # Chunks of every request, taken round-robin between requests.
        self.chunks: FairQueue[Chunk] = FairQueue()
        self._requests = itertools.count()
        self.handles: list[WorkerHandle] = []
        self.closing = False
        self.restarts: dict[str, int] = {"deadline": 0, "stalled": 0, "crashed": 0, "died_idle": 0}
        self._restart_hook = on_restart
        self._lock = threading.Lock()

    def unavailable(self) -> str | None:
        """Why no worker can verify: every slot's worker keeps failing to start (the
        last reason). None while any worker runs, or any slot still tries."""
        if not self.handles or any(handle.alive() for handle in self.handles):
            return None
        reasons = [handle.start_error for handle in self.handles]
        return None if None in reasons else reasons[-1]

    def on_restart(self, reason: str) -> None:
        with self._lock:
            self.restarts[reason] = self.restarts.get(reason, 0) + 1
        if self._restart_hook is not None:
            self._restart_hook(reason)

    async def start(self) -> None:
        self.ctx.set_forkserver_preload(FORKSERVER_PRELOAD)
        self.handles = [WorkerHandle(self, i) for i in range(self.workers)]
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
                if handle.thread.ident is not None:  # a pool that failed to start has none running
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
        unavailable = self.unavailable()
        if unavailable is not None:
            raise BackendUnavailable(unavailable)
        loop = asyncio.get_running_loop()
        size = chunk_units(len(units), self.workers, self.chunk_size)
        owner = next(self._requests)
        futures: list[asyncio.Future[list[UnitResult]]] = []
        chunks: list[Chunk] = []
        for start in range(0, len(units), size):
            fut: asyncio.Future[list[UnitResult]] = loop.create_future()

            def done(results: list[UnitResult], fut: asyncio.Future[list[UnitResult]] = fut) -> None:
                loop.call_soon_threadsafe(_resolve, fut, results)

            futures.append(fut)
            chunks.append(Chunk(list(units[start : start + size]), done, owner))
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
            "ready": bool(self.handles) and alive > 0 and not self.closing,
            "workers": self.workers,
            "workers_alive": alive,
            "restarts": dict(self.restarts),
            # Which processes verify: operators (and tests) can inspect or signal them. A
            # worker that died and has not yet been replaced verifies nothing, and its pid
            # may already belong to nobody.
            "pids": [
                process.pid for h in self.handles if (process := h.process) is not None and process.is_alive()
            ],
            "queued_jobs": self.chunks.qsize(),
            "unavailable": self.unavailable(),
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
