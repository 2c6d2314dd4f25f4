"""Graceful drain on SIGTERM: readiness drops at once, new grade requests get a retryable
503, requests in flight get `drain_grace_s` to finish, and those still running then
answer a retryable 503 (JSON, with Retry-After) instead of dying with the connection."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from rlvr.service.errors import ShuttingDown

T = TypeVar("T")

# Once the grace period is over, how long the requests cut short get to write their 503.
ANSWER_AFTER_EXPIRY_S = 5.0
RETRY_AFTER_S = 2.0


class Drain:
    """Tracks the grade requests in flight and cuts them short when a drain runs out."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.draining = False
        self.active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._expired = asyncio.Event()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """`work`'s result; ShuttingDown when draining before it starts or when the
        grace period ends first (the work is then cancelled)."""
        if self.draining:
            work.close()
            raise ShuttingDown("the server is shutting down; retry", retry_after_s=RETRY_AFTER_S)
        task = asyncio.ensure_future(work)
        expired = asyncio.ensure_future(self._expired.wait())
        self._enter()
        try:
            await asyncio.wait({task, expired}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            raise ShuttingDown(
                f"the server shut down before this request finished (grace period {self.grace_s:g}s); retry",
                retry_after_s=RETRY_AFTER_S,
            )
        finally:
            expired.cancel()
            if not task.done():  # cut short, or the handler itself was cancelled
                task.cancel()
            self._leave()

    async def drain(self) -> float:
        """Stops taking requests, waits for those in flight up to the grace period, then
        cuts the rest short. Returns the seconds it took."""
        started = time.monotonic()
        self.draining = True
        try:
            await asyncio.wait_for(self._idle.wait(), self.grace_s)
        except TimeoutError:
            self.expire()
            try:
                await asyncio.wait_for(self._idle.wait(), ANSWER_AFTER_EXPIRY_S)
            except TimeoutError:
                pass  # what is left is lost with the connection; uvicorn closes it
        return time.monotonic() - started

    def expire(self) -> None:
        """Ends the grace period now: requests in flight answer 503."""
        self.draining = True
        self._expired.set()

    def _enter(self) -> None:
        self.active += 1
        self._idle.clear()

    def _leave(self) -> None:
        self.active -= 1
        if self.active == 0:
            self._idle.set()
