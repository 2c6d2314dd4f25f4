"""Embedded dispatcher: a pool of verifier worker processes on this host.

Workers are started through a multiprocessing *forkserver* (a clean single-threaded
parent that has pre-imported the verifiers), never forked from the threaded server, so
replacing a killed worker costs a fork, not an interpreter start.

Each worker process builds its own verifier registry from the `BuiltinConfig` the
dispatcher was given, and is driven by one thread here. The thread sends a chunk of
units; the worker answers with the chunk's results, in order, and meanwhile reports in
shared memory which unit it is on and since when, so the deadline of a unit runs from
when the worker starts it and queueing never counts against an item. When a unit
passes its deadline the thread SIGKILLs the worker, records `timeout`, starts a
replacement and carries on with the rest of the chunk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing as mp
import os
import queue
import resource
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from rlvr.service.work import Unit, UnitResult, UnitRunner, infrastructure_failure, timed_out
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.registry import Registry

log = logging.getLogger(__name__)

FORKSERVER_PRELOAD = ["rlvr.service.work", "rlvr.verifiers.format", "rlvr.verifiers.math", "rlvr.verifiers.code"]
SHUTDOWN_GRACE_S = 2.0
RESPAWN_BACKOFF_S = 0.05


def _worker_main(conn: Connection, progress: Any, max_rss_mb: int, config: BuiltinConfig) -> None:
    # A new session so that the kill of this worker never reaches the server's group.
    os.setsid()
    limit = max_rss_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    runner = UnitRunner(Registry(config))
    while True:
        try:
            chunk: list[Unit] | None = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        results = []
        for index, unit in enumerate(chunk):
            # Start time first, then index: a reader that sees the new index sees its start.
            progress[1] = time.monotonic()
            progress[0] = index
            results.append(runner.run(unit))
        conn.send(results)


@dataclass
class _Chunk:
    """Units sent to one worker process at once, and where their results go."""

    units: list[Unit]
    done: Callable[[list[UnitResult]], None]


class _Worker:
    """One worker process and the thread that feeds it chunks."""

    def __init__(self, pool: EmbeddedDispatcher, index: int) -> None:
        self.pool = pool
        self.index = index
        self.process: Any = None
        self.conn: Connection | None = None
        self.progress: Any = None
        self.thread = threading.Thread(target=self._loop, name=f"rlvr-worker-{index}", daemon=True)

    def spawn(self) -> None:
        parent, child = mp.Pipe(duplex=True)
        # Shared [index of the unit being verified, when it started]: results come back
        # once per chunk, and this is how the deadline of each unit is still enforced.
        self.progress = self.pool.ctx.RawArray("d", 2)
        proc = self.pool.ctx.Process(
            target=_worker_main,
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
        return self.process is not None and self.process.is_alive()

    def _ensure(self) -> Connection:
        while self.conn is None or not self.alive():
            self.kill()
            try:
                self.spawn()
            except Exception as exc:
                log.error("could not start verifier worker: %s", exc)
                time.sleep(RESPAWN_BACKOFF_S)
                if self.pool.closing:
                    raise
        assert self.conn is not None
        return self.conn

    def _loop(self) -> None:
        while True:
            chunk = self.pool.chunks.get()
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
        todo = list(range(len(units)))
        while todo:
            conn = self._ensure()
            self.progress[0], self.progress[1] = -1.0, time.monotonic()
            conn.send([units[i] for i in todo])
            failed_at, failure = self._wait(conn, [units[i] for i in todo])
            if failure is None:
                for i, res in zip(todo, failed_at, strict=True):
                    results[i] = res
                todo = []
            else:
                # The worker died with the results of this chunk: the failing unit gets its
                # verdict, and the others (cheap, deterministic) run again on a fresh worker.
                results[todo[failed_at]] = failure
                todo = todo[:failed_at] + todo[failed_at + 1 :]
        return [r if r is not None else infrastructure_failure("unit lost") for r in results]

    def _wait(self, conn: Connection, sent: list[Unit]) -> tuple[Any, UnitResult | None]:
        """(results, None) when the chunk completes, or (index, verdict) for the unit that
        passed its deadline or killed the worker."""
        while True:
            index, started = int(self.progress[0]), self.progress[1]
            current = max(index, 0)
            remaining = started + sent[current].deadline_s - time.monotonic()
            if conn.poll(max(0.0, remaining)):
                try:
                    return conn.recv(), None
                except (EOFError, OSError):
                    code = None
                    if self.process is not None:
                        self.process.join(timeout=1)
                        code = self.process.exitcode
                    self.kill()
                    self.pool.on_restart("crashed")
                    # Read progress afresh: the worker may have moved on while we waited.
                    where = max(int(self.progress[0]), 0)
                    return where, infrastructure_failure(
                        f"verifier worker died while grading (exit code {code})", exit_code=code
                    )
            if int(self.progress[0]) != index:
                continue  # the worker moved on to the next unit while we slept
            if index < 0:
                # Not started within a whole deadline: the worker is wedged before verifying.
                self.kill()
                self.pool.on_restart("deadline")
                return 0, infrastructure_failure("verifier worker did not start the chunk in time")
            self.kill()
            self.pool.on_restart("deadline")
            return current, timed_out(sent[current].deadline_s)


class EmbeddedDispatcher:
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
        on_restart: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.workers = workers
        self.chunk_size = chunk_size
        self.max_rss_mb = max_rss_mb
        self.ctx = mp.get_context("forkserver")
        self.chunks: queue.SimpleQueue[_Chunk | None] = queue.SimpleQueue()
        self.handles: list[_Worker] = []
        self.closing = False
        self.restarts: dict[str, int] = {"deadline": 0, "crashed": 0}
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

        # Spawning goes through the forkserver, whose first start imports the verifiers.
        def spawn_all() -> None:
            for handle in self.handles:
                handle.spawn()

        await loop.run_in_executor(None, spawn_all)
        for handle in self.handles:
            handle.thread.start()

    async def close(self) -> None:
        self.closing = True
        for _ in self.handles:
            self.chunks.put(None)
        loop = asyncio.get_running_loop()

        def stop() -> None:
            for handle in self.handles:
                handle.thread.join(timeout=SHUTDOWN_GRACE_S)
                if handle.conn is not None:
                    with contextlib.suppress(OSError):
                        handle.conn.send(None)
                handle.kill()

        await loop.run_in_executor(None, stop)

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        if not units:
            return []
        if self.closing:
            return [infrastructure_failure("dispatcher is shutting down") for _ in units]
        loop = asyncio.get_running_loop()
        # Small batches are spread over every worker; large ones go in chunk_size pieces.
        size = max(1, min(self.chunk_size, -(-len(units) // self.workers)))
        futures: list[asyncio.Future[list[UnitResult]]] = []
        for start in range(0, len(units), size):
            fut: asyncio.Future[list[UnitResult]] = loop.create_future()

            def done(results: list[UnitResult], fut: asyncio.Future[list[UnitResult]] = fut) -> None:
                loop.call_soon_threadsafe(_resolve, fut, results)

            futures.append(fut)
            self.chunks.put(_Chunk(list(units[start : start + size]), done))
        out: list[UnitResult] = []
        for chunk in await asyncio.gather(*futures):
            out.extend(chunk)
        return out

    def health(self) -> dict[str, Any]:
        alive = sum(1 for h in self.handles if h.alive())
        return {
            "kind": "embedded",
            "ready": bool(self.handles) and alive > 0 and not self.closing,
            "workers": self.workers,
            "workers_alive": alive,
            "restarts": dict(self.restarts),
            "queued_jobs": self.chunks.qsize(),
        }

    async def stream_stats(self) -> None:
        return None


def _resolve(fut: asyncio.Future[list[UnitResult]], results: list[UnitResult]) -> None:
    if not fut.done():
        fut.set_result(results)
