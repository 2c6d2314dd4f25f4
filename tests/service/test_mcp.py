"""The MCP `python` tool (`rlvr.service.mcp`), driven by the MCP SDK's own clients: over
streamable HTTP against the app served by uvicorn (in a thread, so that its session
table can be looked at), and over stdio against `rlvr mcp`."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import uvicorn
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from rlvr.sandboxes.local.sessions import LocalSessions
from rlvr.sandboxes.sessions import Call
from rlvr.service.app import create_app
from rlvr.service.mcp import TAG_PREFIX, TOOL_NAME, Conversation
from rlvr.service.session_table import SessionTable
from rlvr.service.sessions import SessionRequest
from rlvr.service.settings import Settings
from tests.services import Server, free_port, wait_ready

T = TypeVar("T")
END_TIMEOUT_S = 15.0


@dataclass
class Served:
    url: str
    sessions: SessionTable
    loop: asyncio.AbstractEventLoop

    def on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        """Runs `coro` on the server's loop, where the session table lives."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def tags(self) -> list[str]:
        async def tags() -> list[str]:
            return [entry.tag for entry in self.sessions.entries.values()]

        return self.on_loop(tags())


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    app = create_app(Settings(workers=1))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(),), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, None)
        yield Served(url, app.state.sessions, loop)
    finally:
        server.should_exit = True
        thread.join(60)
        # What outlives the server on its loop (sse-starlette's shutdown watcher) is cancelled.
        leftover = asyncio.all_tasks(loop)
        for task in leftover:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
        loop.close()


@contextlib.asynccontextmanager
async def connected(url: str) -> AsyncIterator[tuple[ClientSession, Callable[[], str | None]]]:
    async with streamable_http_client(url) as (read, write, session_id):
        async with ClientSession(read, write) as client:
            await client.initialize()
            yield client, session_id


async def python(client: ClientSession, code: str, **arguments: Any) -> tuple[str, bool]:
    """The tool's text and whether it is marked an error."""
    result: CallToolResult = await client.call_tool(TOOL_NAME, {"code": code, **arguments})
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    assert len(texts) == len(result.content) == 1, result
    return texts[0], result.isError


def mcp_url(served: Served) -> str:
    return served.url + "/mcp/"


def wait_until(check: Callable[[], bool], timeout_s: float = END_TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_lists_the_python_tool(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, _):
            tools = (await client.list_tools()).tools
            assert [tool.name for tool in tools] == [TOOL_NAME]
            schema = tools[0].inputSchema
            assert schema["required"] == ["code"]
            assert set(schema["properties"]) == {"code", "timeout_s"}
            assert tools[0].description and "stateful" in tools[0].description

    asyncio.run(scenario())


def test_keeps_variables_and_files_between_calls(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, _):
            assert await python(client, "x = 41") == ("(no output)", False)
            assert await python(client, "x + 1") == ("42", False)
            assert await python(client, "open('notes.txt', 'w').write('kept'); print('written')") == ("written", False)
            assert await python(client, "import os\nprint(os.getcwd())\nopen('/tmp/notes.txt').read()") == (
                "/tmp\n'kept'",
                False,
            )

    asyncio.run(scenario())


def test_an_error_comes_back_as_text_and_the_session_goes_on(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, _):
            await python(client, "y = 5")
            text, is_error = await python(client, "print('before')\n1 / 0")
            assert is_error
            assert text.startswith("before\nTraceback (most recent call last):")
            assert text.endswith("ZeroDivisionError: division by zero")
            text, is_error = await python(client, "import sys\nprint('oops', file=sys.stderr)\ny")
            assert (text, is_error) == ("[stderr]\noops\n5", False)

    asyncio.run(scenario())


def test_a_timeout_interrupts_the_call_and_keeps_the_session(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, _):
            await python(client, "z = 7")
            started = time.monotonic()
            text, is_error = await python(client, "import time\nprint('sleeping')\ntime.sleep(60)", timeout_s=1)
            assert time.monotonic() - started < 10
            assert is_error
            assert text.startswith("sleeping\nTimeoutError: the call was interrupted after 1 s.")
            assert await python(client, "z") == ("7", False)

    asyncio.run(scenario())


def test_two_clients_do_not_share_variables_or_files(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (a, a_id), connected(mcp_url(served)) as (b, b_id):
            await python(a, "secret = 'a'\nopen('a.txt', 'w').write('a')")
            await python(b, "secret = 'b'")
            assert await python(a, "secret") == ("'a'", False)
            assert await python(b, "secret") == ("'b'", False)
            assert await python(b, "import os\nos.path.exists('/tmp/a.txt')") == ("False", False)
            tags = served.tags()
            assert {TAG_PREFIX + str(a_id()), TAG_PREFIX + str(b_id())} <= set(tags)

    asyncio.run(scenario())


def test_the_rlvr_session_ends_with_the_mcp_session(served: Served) -> None:
    async def scenario() -> str:
        async with connected(mcp_url(served)) as (client, session_id):
            await python(client, "w = 1")
            tag = TAG_PREFIX + str(session_id())
            assert served.tags().count(tag) == 1
        return tag

    live = len(served.tags())
    tag = asyncio.run(scenario())  # the client ends its session (DELETE) as it leaves
    assert wait_until(lambda: tag not in served.tags()), "the rlvr session outlived its MCP session"
    assert len(served.tags()) == live - 1 or tag not in served.tags()
    # ...and it is really gone: nothing is left to end under its tag.
    assert httpx.delete(served.url + "/v1/sessions", params={"prefix": tag}, timeout=30).json() == {"ended": 0}


def test_a_session_that_never_called_opens_no_rlvr_session(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, session_id):
            await client.list_tools()
            assert TAG_PREFIX + str(session_id()) not in served.tags()

    asyncio.run(scenario())


def test_a_killed_session_is_reopened_with_a_note(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, _):
            await python(client, "v = 3")
            text, is_error = await python(client, "import os\nos._exit(3)")
            assert is_error
            assert text.startswith("The Python session was killed: its interpreter exited.")
            text, is_error = await python(client, "v")
            assert is_error  # a NameError, in a new session that says why
            assert text.startswith("[A new Python session was started: the previous one was killed: its interpreter")
            assert text.endswith("NameError: name 'v' is not defined")
            assert await python(client, "v = 4\nv") == ("4", False)  # the note is told once

    asyncio.run(scenario())


def test_a_session_ended_from_outside_is_reopened_with_a_note(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, session_id):
            await python(client, "u = 1")
            tag = TAG_PREFIX + str(session_id())
            async with httpx.AsyncClient(base_url=served.url) as http:
                ended = await http.delete("/v1/sessions", params={"prefix": tag})
            assert ended.json() == {"ended": 1}
            text, is_error = await python(client, "'u' in globals()")
            assert not is_error
            assert text.startswith("[A new Python session was started: the previous one had ended")
            assert text.endswith("False")
            assert served.tags().count(tag) == 1

    asyncio.run(scenario())


def test_invalid_arguments_are_told(served: Served) -> None:
    async def scenario() -> None:
        async with connected(mcp_url(served)) as (client, _):
            for arguments in ({"code": 5}, {"code": "1", "timeout_s": 0}, {"code": "1", "timeout_s": 10_000}, {}):
                result = await client.call_tool(TOOL_NAME, arguments)
                assert result.isError
                assert isinstance(result.content[0], TextContent)
                assert result.content[0].text.startswith("Input validation error"), arguments

    asyncio.run(scenario())


def test_served_at_mcp_without_the_slash(served: Served) -> None:
    async def scenario() -> None:
        async with connected(served.url + "/mcp") as (client, _):
            assert await python(client, "6 * 7") == ("42", False)

    asyncio.run(scenario())


def test_not_in_the_openapi_document(served: Served) -> None:
    paths = httpx.get(served.url + "/openapi.json", timeout=120).json()["paths"]
    assert not [path for path in paths if path.startswith("/mcp")]


def _text(result: CallToolResult) -> str:
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


def test_a_cancelled_call_leaves_the_session_in_step() -> None:
    """A call whose client gives up still runs to its end, before the next call runs:
    every answer is its own call's."""

    async def scenario() -> None:
        table = SessionTable(LocalSessions(), max_sessions=4, max_memory_mb=512, max_idle_ttl_s=60)
        conversation = Conversation(table, SessionRequest())
        try:
            slow = asyncio.ensure_future(conversation.call(Call("import time\ntime.sleep(0.5)\ndone = 1\n'slow'")))
            await asyncio.sleep(0.2)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            assert _text(await conversation.call(Call("'next', done"))) == "('next', 1)"
        finally:
            await conversation.close()
            await table.aclose()

    asyncio.run(scenario())


def test_closing_cuts_the_call_in_flight_short() -> None:
    async def scenario() -> None:
        table = SessionTable(LocalSessions(), max_sessions=4, max_memory_mb=512, max_idle_ttl_s=60)
        conversation = Conversation(table, SessionRequest())
        try:
            await conversation.call(Call("1"))
            assert len(table.entries) == 1
            long = asyncio.ensure_future(conversation.call(Call("import time\ntime.sleep(60)", timeout_s=60)))
            await asyncio.sleep(0.2)
            started = time.monotonic()
            await conversation.close()
            assert time.monotonic() - started < 10
            assert table.entries == {}
            with pytest.raises(asyncio.CancelledError):
                await long
            assert "ended" in _text(await conversation.call(Call("1")))
            assert table.entries == {}
        finally:
            await table.aclose()

    asyncio.run(scenario())


def test_sigterm_with_an_mcp_client_connected(tmp_path: Path) -> None:
    """`rlvr serve` stops promptly, and cleanly, with an MCP session open (its GET stream
    too), ending its rlvr session on the way."""
    server = Server(tmp_path, "--workers", "1")

    async def scenario() -> tuple[int, float]:
        stopped: list[tuple[int, float]] = []
        try:
            async with connected(server.url + "/mcp/") as (client, _):
                assert await python(client, "x = 1\nx") == ("1", False)
                started = time.monotonic()
                server.proc.send_signal(signal.SIGTERM)
                code = await asyncio.to_thread(server.proc.wait, 60)
                stopped.append((code, time.monotonic() - started))
        except Exception:
            if not stopped:
                raise
            # ...and the client's own close fails: the server is gone.
        return stopped[0]

    try:
        code, took = asyncio.run(scenario())
    finally:
        server.stop()
    assert code == 0
    assert took < 15


def test_stdio() -> None:
    """`rlvr mcp`: the same tool on stdin and stdout, one session for the client."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "rlvr", "mcp"])

    async def scenario() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            assert [tool.name for tool in (await client.list_tools()).tools] == [TOOL_NAME]
            assert await python(client, "x = 41\nprint('to stdout')") == ("to stdout", False)
            assert await python(client, "x + 1") == ("42", False)
            text, is_error = await python(client, "import time\ntime.sleep(60)", timeout_s=1)
            assert is_error and text.startswith("TimeoutError")
            assert await python(client, "x") == ("41", False)

    asyncio.run(asyncio.wait_for(scenario(), 120))
