"""Slow clients: headers and body have deadlines, and connections are capped."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import Server

# How long a test waits for the server to hang up: far past the 1 s deadlines set here.
PATIENCE_S = 30


@pytest.fixture(scope="module")
def strict(plugin_dir: Path) -> Iterator[Server]:
    with Server(plugin_dir, "--workers", "1", header_timeout_s="1", body_timeout_s="1", max_connections="8") as server:
        yield server


def connect(server: Server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE_S)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection (a timeout fails the test)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_headers_sent_too_slowly_get_408_and_a_closed_connection(strict: Server) -> None:
    with connect(strict) as sock:
        sock.sendall(b"POST /v1/grade HTTP/1.1\r\nHost: x\r\n")  # and never the rest
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408")
    assert b'"request_timeout"' in answer


def test_a_keep_alive_connection_gets_the_same_deadline_for_its_next_request(strict: Server) -> None:
    with connect(strict) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b'{"status":"ok"}'):
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request stalls in its headers
        assert read_all(sock).startswith(b"HTTP/1.1 408")


def test_a_body_sent_too_slowly_gets_408(strict: Server) -> None:
    with connect(strict) as sock:
        sock.sendall(
            b"POST /v1/grade HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
            b"content-length: 100\r\n\r\n" + b'{"items": ['
        )
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"body: not received within 1s" in answer


def test_requests_past_the_cap_are_refused_but_the_probes_answer(strict: Server) -> None:
    held = [connect(strict) for _ in range(8)]
    try:
        r = httpx.get(strict.url + "/v1/verifiers", timeout=PATIENCE_S)
        assert r.status_code == 503
        # An orchestrator's probes during a flood of half-open connections: the replica is
        # alive and ready, only busy, and must not be restarted for it.
        assert httpx.get(strict.url + "/healthz", timeout=PATIENCE_S).status_code == 200
        assert httpx.get(strict.url + "/readyz", timeout=PATIENCE_S).status_code == 200
    finally:
        for sock in held:
            sock.close()
    # Once they are gone, the server answers again.
    r = httpx.get(strict.url + "/v1/verifiers", timeout=PATIENCE_S)
    assert r.status_code == 200


@pytest.fixture(scope="module")
def small_hold(plugin_dir: Path) -> Iterator[Server]:
    with Server(plugin_dir, "--workers", "1", max_request_bytes="900000", max_bodies_held_mb="1") as server:
        yield server


def grade_with_body_of(server: Server, size: int) -> httpx.Response:
    item = {"response": "x" * (size - 60), "verifier": "format"}
    return httpx.post(server.url + "/v1/grade", json={"items": [item]}, timeout=PATIENCE_S)


def test_bodies_held_at_once_are_capped_with_a_retryable_429(small_hold: Server) -> None:
    # One client holds 700 kB of a body it never finishes; another's 400 kB would take the
    # bodies held past 1 MiB, though each is within the 900 kB limit on one body.
    with connect(small_hold) as holder:
        holder.sendall(
            b"POST /v1/grade HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
            b"content-length: 800000\r\n\r\n" + b'{"items": [{"response": "' + b"y" * 700_000
        )
        deadline = time.monotonic() + PATIENCE_S
        while (r := grade_with_body_of(small_hold, 400_000)).status_code != 429:
            assert r.status_code == 200 and time.monotonic() < deadline, r.text
            time.sleep(0.05)
        assert r.json()["error"]["code"] == "overloaded"
        assert int(r.headers["retry-after"]) >= 1
    # The holder's bytes are released with its connection.
    deadline = time.monotonic() + PATIENCE_S
    while (r := grade_with_body_of(small_hold, 400_000)).status_code == 429:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert r.status_code == 200, r.text
