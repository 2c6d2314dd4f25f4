"""SandboxFusion's app, as its tests' `TestClient(app)` calls it: an ASGI app that sends
each request on, over real HTTP, to the rlvr server under test and answers with its
answer, so that the tests exercise rlvr's `/run_code`, not an app in this process."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx

from sandbox import rlvr

Message = MutableMapping[str, Any]


Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return  # lifespan: nothing to start
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    query = scope.get("query_string", b"").decode()
    path = scope["path"] + (f"?{query}" if query else "")
    headers = {"content-type": "application/json"}
    async with httpx.AsyncClient(base_url=rlvr.url(), timeout=rlvr.TIMEOUT_S) as client:
        response = await client.request(scope["method"], path, content=body, headers=headers)
    content_type = response.headers.get("content-type", "application/json").encode()
    headers_out = [(b"content-type", content_type)]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers_out})
    await send({"type": "http.response.body", "body": response.content})
