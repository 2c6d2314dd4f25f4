"""What runs in a verifier worker process: it builds its verifiers from the config it
is given, starts the sandbox they use, says it is ready, then verifies the chunks it is
sent, marking in shared memory (`progress`) which units it is on. The threads that feed
the workers, and hold each unit to its deadline, are in `dispatch.pool`."""

from __future__ import annotations

import gc
import logging
import os
import resource
from multiprocessing.connection import Connection

from rlvr.sandboxes import SandboxUnavailable, open_sandbox
from rlvr.service.dispatch.progress import Progress
from rlvr.service.work import Unit, UnitResult, UnitRunner
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.registry import Registry

log = logging.getLogger(__name__)

# What a new worker says once it can verify (its sandbox started).
WORKER_READY = "ready"


def worker_main(conn: Connection, progress: Progress, max_rss_mb: int, config: BuiltinConfig) -> None:
    # A new session so that the kill of this worker never reaches the server's group.
    os.setsid()
    limit = max_rss_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    runner = UnitRunner(Registry(config))
    _start_sandbox(config)
    # What the worker has loaded lives as long as it does. Out of the collector's
    # generations, it is not walked again by every full collection, which would
    # otherwise pause grading for as long as the heap of sympy and the verifiers takes.
    gc.freeze()
    conn.send(WORKER_READY)
    while True:
        try:
            message: tuple[list[Unit], bool] | None = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        chunk, batching = message
        conn.send(_verify_chunk(runner, chunk, progress, batching))


def _start_sandbox(config: BuiltinConfig) -> None:
    """Start the sandbox's long-lived helpers (the local backend's zygote) before any
    unit. Started within a unit, they would be counted as its programs (`dispatch.cpu`:
    what a unit starts is its work): their startup CPU against its deadline, and their
    being alive as its program still running, which makes a stall of the grader look
    like the item's timeout. And the first unit would wait for them."""
    try:
        open_sandbox(config.sandbox).isolation()
    except SandboxUnavailable:
        pass  # the code verifier reports it, item by item
    except Exception as exc:  # nor may anything else keep the worker from verifying
        log.warning("verifier worker: could not start the sandbox ahead of its units: %s", exc)


def _verify_chunk(runner: UnitRunner, chunk: list[Unit], progress: Progress, batching: bool) -> list[UnitResult]:
    results: list[UnitResult] = []
    start = 0
    while start < len(chunk):
        count = _batch_at(runner, chunk, start) if batching else 1
        progress.start(start, count)
        batch = runner.run_batch(chunk[start : start + count]) if count > 1 else [None]
        for offset, result in enumerate(batch):
            if result is None:
                progress.start(start + offset, 1)
                result = runner.run(chunk[start + offset])
            results.append(result)
        start += count
    return results


def _batch_at(runner: UnitRunner, chunk: list[Unit], start: int) -> int:
    """How many units from `start` on are verified together: consecutive units of one
    verifier, as many as it takes at once."""
    limit = runner.batch_size(chunk[start])
    end = start + 1
    while end < len(chunk) and end - start < limit and chunk[end].verifier == chunk[start].verifier:
        end += 1
    return end - start
