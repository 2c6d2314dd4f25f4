"""MCP: a `python` tool for MCP clients (agents, IDEs), on the sessions of `/v1/sessions`.

Each MCP client session gets one rlvr session (one sandboxed interpreter that keeps its
variables, imports and files in /tmp), opened on its first call, tagged
`mcp/<MCP session id>` (so that `DELETE /v1/sessions?prefix=mcp/` ends them all), and
ended with the MCP session: when the client ends it (a streamable-HTTP DELETE, or the
end of stdin on stdio), when the SDK's session manager drops it after
`MCP_SESSION_IDLE_TIMEOUT_S` with no request, or at shutdown. The session table's idle
TTL bounds it in any case.

The mapping is the SDK's own: the low-level `Server` enters its lifespan once for each
`Server.run`, and the streamable-HTTP session manager (like the stdio transport) runs
the server once per MCP session, so the lifespan's context is that session's
`Conversation`. The low-level server is used rather than `FastMCP`, which configures the
root logger when constructed and guards DNS rebinding by Host, which the rest of this
API does not.

`McpEndpoint` serves it at `/mcp` (and `/mcp/`) over streamable HTTP, in the service's app;
`serve_stdio` over stdin and stdout with sessions in its own process (`rlvr mcp`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import secrets
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
from fastapi import FastAPI
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from rlvr.errors import RLVRError
from rlvr.sandboxes import sessions as defaults
from rlvr.sandboxes.local.sessions import LocalSessions
from rlvr.sandboxes.sessions import Call, CallResult, SessionEnded
from rlvr.service.errors import BackendUnavailable, UnknownSession
from rlvr.service.session_table import SessionTable
from rlvr.service.sessions import SessionRequest, session_spec
from rlvr.service.settings import Settings, builtin_config
from rlvr.version import __version__

SERVER_NAME = "rlvr"
TOOL_NAME = "python"
MCP_PATH = "/mcp"
TAG_PREFIX = "mcp/"
# An MCP session with no request in flight this long is closed by the SDK (its rlvr
# session with it); its rlvr session is given the same idle TTL (within the table's cap).
MCP_SESSION_IDLE_TIMEOUT_S = 1800.0

INSTRUCTIONS = (
    "`python` runs Python code in a sandboxed interpreter that belongs to this MCP session: "
    "variables, imports and files in /tmp (its working directory) are kept from one call to the next."
)

TOOL_DESCRIPTION = (
    "Run Python code in a stateful, sandboxed Python interpreter, as a notebook cell. Variables, "
    "functions, imports and files (the working directory is /tmp) are kept between calls. Returns what "
    "the code printed, the value of its last expression, and the traceback if it raised. Each call "
    f"is interrupted after `timeout_s` seconds (default {defaults.DEFAULT_CALL_TIMEOUT_S:g}, at most "
    f"{defaults.MAX_CALL_TIMEOUT_S:g}); the state survives the interruption. Network access is blocked, and "
    "memory and CPU time are limited: a session that runs out is restarted empty, and the answer says so."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "description": "Python code to run; the value of its last expression is shown.",
            "maxLength": defaults.MAX_CALL_CODE_CHARS,
        },
        "timeout_s": {
            "type": "number",
            "description": "Seconds the call may run before it is interrupted.",
            "exclusiveMinimum": 0,
            "maximum": defaults.MAX_CALL_TIMEOUT_S,
            "default": defaults.DEFAULT_CALL_TIMEOUT_S,
        },
    },
    "required": ["code"],
    "additionalProperties": False,
}

PYTHON_TOOL = types.Tool(
    name=TOOL_NAME,
    title="Python",
    description=TOOL_DESCRIPTION,
    inputSchema=INPUT_SCHEMA,
    annotations=types.ToolAnnotations(title="Python", readOnlyHint=False, idempotentHint=False),
)

# Why a killed session ended (`CallResult.limit`), as the model is told.
KILLED_BECAUSE = {
    "timeout": "the call kept running past its timeout",
    "memory": "it ran out of memory",
    "cpu": "it used up its CPU time",
    "exited": "its interpreter exited",
    "session_lost": "the sandbox lost it",
    "protocol": "the sandbox lost it",
}


class Conversation:
    """The `python` tool of one MCP client session: one rlvr session, opened on the
    first call and again after one is killed or expires (the next answer says that the
    state was lost), ended by `close` with the MCP session. Calls run one at a time, in
    order; a call the client cancels still runs to its end (or its timeout), so that the
    session's answers stay in step with its calls."""

    def __init__(self, table: SessionTable, template: SessionRequest, tag: str | None = None) -> None:
        self.table, self.template, self.tag = table, template, tag
        self.session_id: str | None = None
        self.lost: str | None = None  # why the previous session ended, told with the next answer
        self.lock = asyncio.Lock()
        self.calls: set[asyncio.Task[types.CallToolResult]] = set()
        self.closed = False

    async def call(self, call: Call, tag: str | None = None) -> types.CallToolResult:
        if self.tag is None and tag is not None:
            self.tag = tag
        task = asyncio.ensure_future(self._call(call))
        self.calls.add(task)
        task.add_done_callback(self._done)
        return await asyncio.shield(task)

    def _done(self, task: asyncio.Task[types.CallToolResult]) -> None:
        self.calls.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a call whose caller left has nobody to raise it to

    async def _call(self, call: Call) -> types.CallToolResult:
        async with self.lock:
            for _ in range(2):  # a second time in a new session when the first had ended since the last call
                if self.closed:
                    return _text("This MCP session has ended.", error=True)
                if self.session_id is None:
                    try:
                        await self._open()
                    except RLVRError as exc:
                        return _text(f"No Python session could be started: {exc.message}", error=True)
                assert self.session_id is not None
                try:
                    result = await self.table.run(self.session_id, call)
                except (UnknownSession, SessionEnded):
                    await self._forget()
                    self.lost = (
                        f"the previous one had ended (idle past {self.idle_ttl_s():g} s, or ended by the server)"
                    )
                    continue
                note = self._new_session_note()
                if result.ended:
                    self.session_id = None
                    self.lost = f"the previous one was killed: {_killed_because(result)}"
                return _text(render(result, call.timeout_s, note), error=result.status != "ok")
            return _text("No Python session could be kept: it ended at once, twice.", error=True)

    def idle_ttl_s(self) -> float:
        return min(self.template.idle_ttl_s, self.table.max_idle_ttl_s)

    async def _open(self) -> None:
        tag = self.tag or f"{TAG_PREFIX}{secrets.token_hex(16)}"
        self.tag = tag
        entry = await self.table.open(session_spec(self.template.model_copy(update={"tag": tag})))
        self.session_id = entry.id

    def _new_session_note(self) -> str | None:
        if self.lost is None:
            return None
        note = f"[A new Python session was started: {self.lost}. Its variables, imports and files are gone.]"
        self.lost = None
        return note

    async def _forget(self) -> None:
        session_id, self.session_id = self.session_id, None
        if session_id is not None:
            with contextlib.suppress(UnknownSession):
                await self.table.end(session_id)

    async def close(self) -> None:
        """End the session, cutting short the call in it if any (its answer would go nowhere)."""
        self.closed = True
        for task in self.calls:
            task.cancel()
        await asyncio.gather(*self.calls, return_exceptions=True)
        await self._forget()


def render(result: CallResult, timeout_s: float, note: str | None = None) -> str:
    """A call's outcome as the model reads it: like a notebook cell's output."""
    parts: list[str] = [note] if note else []
    if result.stdout or result.stdout_bytes:
        parts.append(_clipped(result.stdout, result.stdout_bytes, "stdout"))
    if result.stderr or result.stderr_bytes:
        parts.append("[stderr]\n" + _clipped(result.stderr, result.stderr_bytes, "stderr"))
    if result.status == "ok" and result.value is not None:
        parts.append(result.value)
    elif result.status == "error":
        parts.append((result.traceback or result.error or "the call raised an exception").rstrip("\n"))
    elif result.status == "timeout":
        parts.append(
            f"TimeoutError: the call was interrupted after {timeout_s:g} s. "
            "The session goes on: its variables, imports and files are kept."
        )
    elif result.status == "killed":
        parts.append(
            f"The Python session was killed: {_killed_because(result)}. Its variables, imports and files are "
            "gone; the next call starts a new, empty session."
        )
    return "\n".join(part.rstrip("\n") for part in parts) if parts else "(no output)"


def _clipped(text: str, written: int, stream: str) -> str:
    shown = len(text.encode("utf-8", "replace"))
    if written > shown:
        return f"{text.rstrip(chr(10))}\n[... {written - shown} more bytes of {stream} not shown]"
    return text


def _killed_because(result: CallResult) -> str:
    because = KILLED_BECAUSE.get(result.limit or "", "it ended")
    return f"{because} ({result.error})" if result.error and result.limit in ("session_lost", "protocol") else because


def _text(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=error)


def build_server(table: SessionTable, template: SessionRequest | None = None) -> Server[Conversation, Any]:
    """The MCP server of the `python` tool, its sessions in `table` (opened as `template`
    asks, tagged `mcp/<MCP session id>`)."""
    template = template or SessionRequest(idle_ttl_s=MCP_SESSION_IDLE_TIMEOUT_S)

    @contextlib.asynccontextmanager
    async def conversation(server: Server[Conversation, Any]) -> AsyncIterator[Conversation]:
        # Entered once per MCP session (see the module's docstring), left when it ends.
        conv = Conversation(table, template)
        try:
            yield conv
        finally:
            with anyio.CancelScope(shield=True):
                await conv.close()

    server: Server[Conversation, Any] = Server(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, lifespan=conversation
    )

    async def list_tools() -> list[types.Tool]:
        return [PYTHON_TOOL]

    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name != TOOL_NAME:
            return _text(f"Unknown tool {name!r}: this server has `{TOOL_NAME}` only.", error=True)
        context = server.request_context
        # Checked against INPUT_SCHEMA by the SDK before this is called.
        call = Call(
            str(arguments["code"]), timeout_s=float(arguments.get("timeout_s", defaults.DEFAULT_CALL_TIMEOUT_S))
        )
        return await context.lifespan_context.call(call, _tag(context.request))

    # The SDK's decorators are not annotated: registered through them, checked here.
    server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    server.call_tool(validate_input=True)(call_tool)
    return server


def _tag(request: object) -> str | None:
    """`mcp/<MCP session id>` for a call over streamable HTTP; None on stdio."""
    if isinstance(request, Request) and (session_id := request.headers.get(MCP_SESSION_ID_HEADER)):
        return TAG_PREFIX + session_id
    return None


class McpEndpoint:
    """`/mcp`: the ASGI app of the streamable-HTTP transport. `run` (in the app's
    lifespan, stopped before the session table closes) starts a session manager, one for
    each run, as the SDK's manager runs only once; outside a run, 503."""

    def __init__(self, table: SessionTable) -> None:
        self.server = build_server(table)
        self.manager: StreamableHTTPSessionManager | None = None

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        # The manager's task group lives in a task of its own: a lifespan may be entered
        # and left in different tasks (`rlvr.in_process`), which anyio's scopes refuse.
        manager = StreamableHTTPSessionManager(self.server, session_idle_timeout=MCP_SESSION_IDLE_TIMEOUT_S)
        started, stop = asyncio.Event(), asyncio.Event()

        async def host() -> None:
            async with manager.run():
                self.manager = manager
                started.set()
                try:
                    await stop.wait()
                finally:  # no new MCP session from here; those open end with the manager
                    self.manager = None

        task = asyncio.ensure_future(host())
        ready = asyncio.ensure_future(started.wait())
        try:
            await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if task.done():
            task.result()  # its error, if it failed to start
        try:
            yield
        finally:
            stop.set()
            await task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.manager is None:
            raise BackendUnavailable("MCP is not running: the service is starting up or shutting down")
        await self.manager.handle_request(scope, receive, send)


def add_mcp_routes(app: FastAPI, endpoint: McpEndpoint) -> None:
    """`/mcp` and `/mcp/` (no redirect between them): plain Starlette routes, which the
    OpenAPI document does not list."""
    app.router.routes.append(Route(MCP_PATH, endpoint))
    app.router.routes.append(Route(MCP_PATH + "/", endpoint))


def serve_stdio(settings: Settings) -> None:
    """`rlvr mcp`: the `python` tool over stdin and stdout, for one client (a desktop
    agent that starts it), with its sessions in this process."""
    # The protocol gets its own copy of stdout; fd 1 becomes stderr, so that nothing else
    # (a sandbox process, a stray print) can write into it.
    protocol_out = io.TextIOWrapper(os.fdopen(os.dup(sys.stdout.fileno()), "wb"), encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    asyncio.run(_serve_stdio(settings, protocol_out))


async def _serve_stdio(settings: Settings, out: io.TextIOWrapper) -> None:
    table = SessionTable(
        LocalSessions(builtin_config(settings).sandbox),
        max_sessions=max(1, settings.max_sessions),
        max_memory_mb=settings.session_max_memory_mb,
        max_idle_ttl_s=settings.session_max_idle_ttl_s,
    )
    server = build_server(table)
    try:
        async with stdio_server(stdout=anyio.wrap_file(out)) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await table.aclose()
