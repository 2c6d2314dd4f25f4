"""`rlvr serve`: uvicorn with a drain on SIGTERM or SIGINT (see `service.drain`), a
deadline on each request's headers, and a cap on connections.

The first signal starts the drain while the server keeps listening, so that /readyz
says not-ready and new requests get a retryable 503; once the requests in flight are
answered, uvicorn stops as usual. A second signal stops at once.

uvicorn times out idle keep-alive connections but not a client that sends its headers a
byte at a time; `timed_h11` adds that deadline (the body's is `asgi.BodyLimit`'s).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from types import FrameType

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

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


UNCAPPED_PATHS = frozenset({"/healthz", "/readyz"})


def timed_h11(header_timeout_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing connections whose request headers are not all in
    within `header_timeout_s` (of the connection, or of the previous response), with the
    probes' paths (`UNCAPPED_PATHS`) past the cap of connections."""
    body = json.dumps({"error": {"code": "request_timeout", "message": "headers: not received in time"}}).encode()
    answer = (
        b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )

    class TimedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _limit_concurrency: int | None = None

        # uvicorn reads this once a request's line is parsed, to answer 503 past the cap
        # of connections and requests: liveness and readiness answer whatever the cap, so
        # that a flood of half-open connections does not get a busy replica restarted.
        @property
        def limit_concurrency(self) -> int | None:
            scope = getattr(self, "scope", None)
            if scope is not None and scope.get("path") in UNCAPPED_PATHS:
                return None
            return self._limit_concurrency

        @limit_concurrency.setter
        def limit_concurrency(self, limit: int | None) -> None:
            self._limit_concurrency = limit

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._reading_headers():
                return
            self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # the next request on this connection has the same deadline

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _reading_headers(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _arm(self) -> None:
            self._disarm()
            if self._reading_headers() and not self.transport.is_closing():
                self._header_timer = self.loop.call_later(header_timeout_s, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expired(self) -> None:
            self._header_timer = None
            if self._reading_headers() and not self.transport.is_closing():
                self.transport.write(answer)
                self.transport.close()

    return TimedH11Protocol


def serve(settings: Settings) -> None:
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_AFTER_DRAIN_S,
        http=timed_h11(settings.header_timeout_s),
        limit_concurrency=settings.max_connections,
    )
    DrainingServer(config, app.state.drain).run()
