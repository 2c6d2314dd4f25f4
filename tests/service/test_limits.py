"""Request size limits, on a server started with small ones."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import Server

OK = {"response": "<think>a</think><answer>b</answer>", "verifier": "format"}


@pytest.fixture(scope="module")
def small(plugin_dir: Path) -> Iterator[str]:
    with Server(
        plugin_dir,
        *("--workers", "1", "--max-items", "5", "--max-request-bytes", "4096", "--max-in-flight", "3"),
        *("--max-verifier-refs", "8", "--max-planning-chars", "2000"),
    ) as server:
        yield server.url


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


def test_too_many_verifier_references(small: str) -> None:
    item = {"response": "x", "verifier": [{"name": "format"}] * 9}
    r = httpx.post(small + "/v1/grade", json={"items": [item]})
    assert r.status_code == 422
    assert "9 verifier references exceed the limit of 8" in r.json()["error"]["message"]


def test_too_much_planning_work(small: str) -> None:
    # Small in bytes, large in work: one long response named by three verifiers.
    item = {"response": "x" * 700, "verifier": [{"name": "format"}] * 3}
    r = httpx.post(small + "/v1/grade", json={"items": [item]})
    assert r.status_code == 422
    assert "limit of 2000" in r.json()["error"]["message"]
    ok = httpx.post(small + "/v1/grade", json={"items": [{**item, "verifier": [{"name": "format"}] * 2}]})
    assert ok.status_code == 200


def test_the_amplification_request_is_refused_under_default_limits(http: httpx.Client) -> None:
    # 100 items naming the same verifier 1,000 times: 100,000 references to plan.
    items = [{"response": f"r{i}", "verifier": [{"name": "format"}] * 1000} for i in range(100)]
    r = http.post("/v1/grade", json={"items": items})
    assert r.status_code == 422
    assert "verifier references exceed the limit" in r.json()["error"]["message"]
    assert http.get("/healthz").status_code == 200


def test_healthz_answers_while_a_large_legal_request_is_planned(http: httpx.Client, live_server: str) -> None:
    # 49,000 references, just under the default cap, each with a long response: seconds of
    # planning, which runs off the event loop, so liveness probes keep being answered.
    items = [{"response": f"{i} " + "y" * 2000, "verifier": [{"name": "format"}] * 490} for i in range(100)]
    probes_during = 0
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        big = pool.submit(httpx.post, live_server + "/v1/grade", json={"items": items}, timeout=600)
        while not big.done():
            if http.get("/healthz", timeout=60).status_code == 200 and not big.done():
                probes_during += 1
        r = big.result()
    assert r.status_code == 200, r.text[:300]
    assert len(r.json()["results"]) == 100
    assert probes_during >= 2, probes_during
