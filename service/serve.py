"""`rlvr serve`: uvicorn with a drain on SIGTERM or SIGINT (see `service.drain`).

The first signal starts the drain while the server keeps listening, so that /readyz
says not-ready and new requests get a retryable 503; once the requests in flight are
answered, uvicorn stops as usual. A second signal stops at once.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from types import FrameType

import uvicorn

from rlvr.service.app import create_app
from rlvr.service.drain import Drain
from rlvr.service.settings import Settings

log = logging.getLogger("rlvr.serve")

# After the drain every request is answered; this bounds the close of idle connections.
SHUTDOWN_AFTER_DRAIN_S = 5


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, drain: Drain) -> None:
        super().__init__(config)
        self.drain = drain
        self._loop: asyncio.AbstractEventLoop | None = None
        self._draining: asyncio.Task[None] | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        loop = self._loop
        if loop is None or self._draining is not None or self.drain.draining:
            if loop is not None:
                loop.call_soon_threadsafe(self.drain.expire)
            super().handle_exit(sig, frame)
            return
        # Signal handlers run between bytecodes of the loop's thread: flip readiness
        # now, and start the drain on the loop.
        self.drain.draining = True
        loop.call_soon_threadsafe(self._start_drain)

    def _start_drain(self) -> None:
        self._draining = asyncio.ensure_future(self._drain_then_exit())

    async def _drain_then_exit(self) -> None:
        log.info("draining: %d requests in flight, grace %.0fs", self.drain.active, self.drain.grace_s)
        took = await self.drain.drain()
        log.info("drained in %.2fs", took)
        self.should_exit = True


def serve(settings: Settings) -> None:
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_AFTER_DRAIN_S,
    )
    DrainingServer(config, app.state.drain).run()
