"""The client's session methods (`/v1/sessions`) against a real `rlvr serve`, and their
retries against a scripted HTTP server: running code is retried only where it surely
never ran."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from rlvr.client import AsyncRewardClient, RewardClient, RewardServiceError, SessionNotFound
from tests.scripted_http import ScriptedServer


@pytest.fixture
def prefix() -> str:
    return f"client-test-{uuid.uuid4().hex[:8]}-"


def test_a_session_keeps_its_state_between_calls(live_server: str, prefix: str) -> None:
    with RewardClient(live_server) as client:
        session = client.open_session(tag=prefix + "1", memory_mb=256, idle_ttl_s=60)
        first = client.run_in_session(session, "import os\nx = 41\nprint('set')\nx + 1")
        assert (first["status"], first["stdout"], first["value"]) == ("ok", "set\n", "42")
        assert first["stdout_bytes"] == 4 and first["execution_time"] >= 0
        client.run_in_session(session, "open('/tmp/a.txt', 'w').write(str(x))")
        assert client.run_in_session(session, "open('/tmp/a.txt').read(), x")["value"] == "('41', 41)"
        assert client.run_in_session(session, "input()", stdin="hello\n")["value"] == "'hello'"
        error = client.run_in_session(session, "x / 0")
        assert error["status"] == "error" and error["error"] == "ZeroDivisionError: division by zero"
        assert error["traceback"] is not None and "x / 0" in error["traceback"]
        timeout = client.run_in_session(session, "import time\ntime.sleep(30)", timeout_s=0.5)
        assert timeout["status"] == "timeout" and timeout["value"] is None
        assert client.run_in_session(session, "x")["value"] == "41"  # the session went on
        client.end_session(session)
        with pytest.raises(SessionNotFound) as err:
            client.run_in_session(session, "x")
        assert err.value.status == 404 and err.value.code == "session_not_found"
        with pytest.raises(SessionNotFound):
            client.end_session(session)


def test_sessions_end_by_tag_prefix(live_server: str, prefix: str) -> None:
    with RewardClient(live_server) as client:
        batch = [client.open_session(tag=f"{prefix}batch-{i}") for i in range(3)]
        other = client.open_session(tag=f"{prefix}other")
        assert client.end_sessions(f"{prefix}batch-") == 3
        for session in batch:
            with pytest.raises(SessionNotFound):
                client.run_in_session(session, "1")
        assert client.run_in_session(other, "1")["value"] == "1"
        assert client.end_sessions(prefix) == 1
        assert client.end_sessions(prefix) == 0


def test_a_killed_session_is_gone(live_server: str) -> None:
    with RewardClient(live_server) as client:
        session = client.open_session()
        killed = client.run_in_session(session, "import os\nos._exit(3)")
        assert (killed["status"], killed["limit"]) == ("killed", "exited")
        with pytest.raises(SessionNotFound):
            client.run_in_session(session, "1")


def test_async_sessions_run_at_once_and_apart(live_server: str, prefix: str) -> None:
    async def run() -> tuple[list[str | None], RewardServiceError]:
        async with AsyncRewardClient(live_server) as client:
            a, b = await asyncio.gather(client.open_session(prefix), client.open_session(prefix))
            await asyncio.gather(client.run_in_session(a, "v = 'a'"), client.run_in_session(b, "v = 'b'"))
            slow = asyncio.ensure_future(client.run_in_session(a, "import time\ntime.sleep(1)\nv"))
            await asyncio.sleep(0.3)
            with pytest.raises(RewardServiceError) as busy:  # one call at a time in a session
                await client.run_in_session(a, "v")
            values = [(await slow)["value"], (await client.run_in_session(b, "v"))["value"]]
            assert await client.end_sessions(prefix) == 2
            return values, busy.value

    values, busy = asyncio.run(run())
    assert values == ["'a'", "'b'"]
    assert (busy.status, busy.code) == (409, "session_busy") and not isinstance(busy, SessionNotFound)


def test_limits_the_server_refuses_are_not_retried(live_server: str) -> None:
    with RewardClient(live_server) as client, pytest.raises(RewardServiceError) as err:
        client.open_session(memory_mb=1)
    assert err.value.status == 422


def sessions_answer(method: str, path: str, sent: Any) -> tuple[int, Any]:
    if method == "DELETE":
        return 204, None
    if path.endswith("/run"):
        result = {"status": "ok", "stdout": "", "stderr": "", "value": "1", "execution_time": 0.0}
        return 200, {**result, "stdout_bytes": 0, "stderr_bytes": 0}
    return 201, {"id": "s1", "tag": "", "idle_ttl_s": 60.0}


@pytest.fixture
def scripted() -> Iterator[Callable[[list[str]], ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def make(script: list[str]) -> ScriptedServer:
        servers.append(ScriptedServer(script, sessions_answer))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_opening_and_ending_are_retried_like_grading(scripted: Callable[[list[str]], ScriptedServer]) -> None:
    server = scripted(["drop", "503", "500", "429"])
    with RewardClient(server.url, backoff_s=0.01) as client:
        assert client.open_session() == "s1"
        assert server.attempts == 5
        server.script = ["502"]
        client.end_session("s1")
        assert server.attempts == 7


def test_a_call_is_retried_only_where_it_surely_never_ran(scripted: Callable[[list[str]], ScriptedServer]) -> None:
    server = scripted(["429", "503"])
    with RewardClient(server.url, backoff_s=0.01) as client:
        assert client.run_in_session("s1", "1")["value"] == "1"
        assert server.attempts == 3
        # The code may have run: a dropped connection or a 5xx other than 503 is the caller's to judge.
        server.script = ["drop"]
        with pytest.raises(httpx.TransportError):
            client.run_in_session("s1", "1")
        assert server.attempts == 4
        server.script = ["500"]
        with pytest.raises(RewardServiceError) as err:
            client.run_in_session("s1", "1")
        assert err.value.status == 500 and server.attempts == 5
        # A 404 that is not the session API's is no SessionNotFound.
        server.script = ["404"]
        with pytest.raises(RewardServiceError) as err:
            client.run_in_session("s1", "1")
        assert err.value.status == 404 and err.value.code == "scripted" and not isinstance(err.value, SessionNotFound)


def test_no_connection_is_retried_for_a_call() -> None:
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    attempts = 0

    class Counting(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            nonlocal attempts
            attempts += 1
            return await super().handle_async_request(request)

    with (
        RewardClient(url, backoff_s=0.01, retry_budget_s=0.5, transport=Counting()) as client,
        pytest.raises(httpx.ConnectError),
    ):
        client.run_in_session("s1", "1")
    assert attempts > 1
