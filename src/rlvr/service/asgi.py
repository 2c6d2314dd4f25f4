"""HTTP plumbing below the routes: the JSON every answer is written in, the error
body, and the limits on a request's size and on how slowly its body may come."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rlvr.service.errors import HTTP_STATUS, Overloaded, PayloadTooLarge, RequestTimeout


class StrictJSONResponse(JSONResponse):
    """JSON that can never carry NaN or Infinity, and that encodes any string: a lone
    surrogate (which a client's JSON or a sandboxed program may hold) is escaped."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", "backslashreplace")


def error_response(status: int, code: str, message: str, details: Any = None, headers: Any = None) -> Response:
    body = {"error": {"code": code, "message": message, "details": details}}
    return StrictJSONResponse(body, status_code=status, headers=headers)


class BodyLimit:
    """Refuses bodies over the byte limit, whether or not Content-Length is honest,
    bodies not fully received within `timeout_s` of the first read (a slow client holds
    a connection and a request's memory), and, with a retryable 429, bodies that would
    take the bytes held by requests in progress past `max_bytes_held` (many clients at
    once, each within the limit, could otherwise hold any amount)."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float, max_bytes_held: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.max_bytes_held = max(max_bytes_held, max_bytes)
        self.bytes_held = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._declared_length(scope) > self.max_bytes:
            response = error_response(413, HTTP_STATUS[PayloadTooLarge][1], self._message())
            await response(scope, receive, send)
            return
        seen = held = 0
        complete = False
        deadline: float | None = None

        async def limited_receive() -> Message:
            nonlocal seen, held, complete, deadline
            if complete:  # the body is in: what follows is a wait for disconnect
                return await receive()
            deadline = deadline or time.monotonic() + self.timeout_s
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                raise RequestTimeout(f"body: not received within {self.timeout_s:g}s") from None
            if message["type"] == "http.request":
                size = len(message.get("body", b""))
                seen += size
                complete = not message.get("more_body", False)
                if seen > self.max_bytes:
                    raise PayloadTooLarge(self._message())
                self._hold(size)
                held += size
            return message

        try:
            await self.app(scope, limited_receive, send)
        finally:
            self.bytes_held -= held

    def _hold(self, size: int) -> None:
        if self.bytes_held + size > self.max_bytes_held:
            raise Overloaded(
                f"body: requests in progress hold {self.bytes_held} bytes of bodies, and this one would take "
                f"them past the limit of {self.max_bytes_held}; retry later"
            )
        self.bytes_held += size

    @staticmethod
    def _declared_length(scope: Scope) -> int:
        """The largest Content-Length declared; 0 when none is, or none is a number."""
        declared = [_int_or_zero(v) for name, v in scope.get("headers", []) if name == b"content-length"]
        return max(declared, default=0)

    def _message(self) -> str:
        return f"body: request exceeds the limit of {self.max_bytes} bytes"


def _int_or_zero(value: bytes) -> int:
    try:
        return int(value)
    except ValueError:
        return 0
