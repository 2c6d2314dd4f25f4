from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from rlvr.client import RewardClient, RewardServiceError


def test_rewards_over_http(live_server: str) -> None:
    with RewardClient(live_server) as client:
        out = client.rewards(
            ["<think>a</think><answer>4</answer>", "4", "<think>a</think><answer>4</answer>"],
            verifier="format",
            groups=["g", "g", "g"],
        )
    assert out.values == [1.0, 0.0, 1.0]
    assert out.mask == [False, False, False]
    assert out.stats["unique"] == 2


def test_errors_carry_the_server_message(live_server: str) -> None:
    with RewardClient(live_server) as client, pytest.raises(RewardServiceError, match="unknown verifier 'nope'"):
        client.rewards(["x"], verifier="nope")


class FlakyServer:
    """A real HTTP server that fails in the ways `script` says before it answers."""

    def __init__(self, script: list[str]) -> None:
        self.script = list(script)
        self.attempts = 0
        flaky = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                flaky.attempts += 1
                step = flaky.script.pop(0) if flaky.script else "ok"
                if step == "drop":  # the connection dies without an answer
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status = 200 if step == "ok" else int(step)
                body = json.dumps({"results": [], "stats": {}} if step == "ok" else {"error": {"message": step}})
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                if status in (429, 503):
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def flaky() -> Iterator[Callable[[list[str]], FlakyServer]]:
    servers: list[FlakyServer] = []

    def make(script: list[str]) -> FlakyServer:
        servers.append(FlakyServer(script))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_connection_errors_and_5xx_are_retried(flaky: Callable[[list[str]], FlakyServer]) -> None:
    server = flaky(["drop", "503", "500", "502", "429"])
    with RewardClient(server.url, retries=5, backoff_s=0.01) as client:
        assert client.grade([{"response": "x", "verifier": "format"}]) == {"results": [], "stats": {}}
    assert server.attempts == 6


def test_client_errors_are_not_retried_and_retries_end(flaky: Callable[[list[str]], FlakyServer]) -> None:
    server = flaky(["422"])
    with RewardClient(server.url, retries=5, backoff_s=0.01) as client, pytest.raises(RewardServiceError) as err:
        client.grade([{"response": "x", "verifier": "format"}])
    assert err.value.status == 422 and server.attempts == 1
    server = flaky(["503"] * 10)
    with RewardClient(server.url, retries=2, backoff_s=0.01) as client, pytest.raises(RewardServiceError) as err:
        client.grade([{"response": "x", "verifier": "format"}])
    assert err.value.status == 503 and server.attempts == 3
