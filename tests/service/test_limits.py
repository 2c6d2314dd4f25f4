"""Request size limits, on a server started with small ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import Server

OK = {"response": "<think>a</think><answer>b</answer>", "verifier": "format"}


@pytest.fixture(scope="module")
def small(plugin_dir: Path) -> Iterator[str]:
    server = Server(
        plugin_dir, "--workers", "1", "--max-items", "5", "--max-request-bytes", "4096", "--max-in-flight", "3"
    )
    try:
        yield server.url
    finally:
        server.stop()


def test_too_many_items(small: str) -> None:
    r = httpx.post(small + "/v1/grade", json={"items": [OK] * 6})
    assert r.status_code == 422
    assert r.json()["error"]["message"] == "items: 6 items exceed the limit of 5"


def test_too_many_bytes_declared(small: str) -> None:
    r = httpx.post(small + "/v1/grade", json={"items": [{**OK, "response": "x" * 5000}]})
    assert r.status_code == 413
    assert "body: request exceeds the limit of 4096 bytes" in r.json()["error"]["message"]


def test_too_many_bytes_chunked(small: str) -> None:
    def body() -> Iterator[bytes]:
        yield b'{"items": [{"response": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'", "verifier": "format"}]}'

    r = httpx.post(small + "/v1/grade", content=body(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "4096 bytes" in r.json()["error"]["message"]


def test_over_in_flight_limit_is_429(small: str) -> None:
    items = [{**OK, "response": f"distinct {i}"} for i in range(4)]
    r = httpx.post(small + "/v1/grade", json={"items": items})
    assert r.status_code == 429
    assert int(r.headers["retry-after"]) >= 1
    assert "limit of 3" in r.json()["error"]["message"]


def test_within_limits_still_works(small: str) -> None:
    r = httpx.post(small + "/v1/grade", json={"items": [OK] * 5})
    assert r.status_code == 200
    assert [x["reward"] for x in r.json()["results"]] == [1.0] * 5
