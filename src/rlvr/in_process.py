"""In-process grading: the service's app, served in this process through an httpx transport.

`RewardClient(url=None)` uses it. The app and its backends (the worker pool, the verdict
cache) start on the first request and stop when the client closes. Going through the
app rather than around it means an in-process client validates, masks and fails exactly as
the HTTP service does.

This module is the one bridge from the client to the server's layers; the import
contracts in pyproject.toml allow `rlvr.client -> rlvr.in_process` by name and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib

import httpx

from rlvr.service.app import create_app
from rlvr.service.settings import Settings


class InProcessTransport(httpx.AsyncBaseTransport):
    """An httpx transport to an in-process app for `settings` (by default read from the
    `RLVR_*` environment once, here, as `rlvr serve` does)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._stack = contextlib.AsyncExitStack()
        self._asgi: httpx.ASGITransport | None = None
        self._starting = asyncio.Lock()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        asgi = self._asgi or await self._start()
        return await asgi.handle_async_request(request)

    async def _start(self) -> httpx.ASGITransport:
        async with self._starting:
            if self._asgi is None:
                app = create_app(self.settings)
                # httpx's ASGI transport does not run the lifespan, which starts the backends.
                await self._stack.enter_async_context(app.router.lifespan_context(app))
                self._asgi = httpx.ASGITransport(app=app)
            return self._asgi

    async def aclose(self) -> None:
        self._asgi = None
        await self._stack.aclose()
