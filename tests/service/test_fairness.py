"""Requests share the workers fairly, and a client that leaves stops costing work."""

from __future__ import annotations

import concurrent.futures
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from rlvr.service import redis_keys
from tests.services import Cluster, Server

BIG = 20  # units of 0.2 s each, one per chunk, on one worker


@pytest.fixture(scope="module")
def serial(plugin_dir: Path) -> Iterator[str]:
    with Server(plugin_dir, "--workers", "1", "--chunk-size", "1") as server:
        yield server.url


def tally_items(path: Path, n: int) -> list[dict[str, object]]:
    return [{"response": f"r{i}", "verifier": "tally", "ground_truth": str(path)} for i in range(n)]


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def wait_until(condition: object, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def in_flight(url: str) -> float:
    for line in httpx.get(url + "/metrics", timeout=10).text.splitlines():
        if line.startswith("rlvr_in_flight_items "):
            return float(line.split()[1])
    return 0.0


def test_a_small_request_does_not_wait_behind_a_large_batch(serial: str, tmp_path: Path) -> None:
    tally = tmp_path / "big"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        big = pool.submit(httpx.post, serial + "/v1/grade", json={"items": tally_items(tally, BIG)}, timeout=300)
        wait_until(lambda: lines(tally) >= 1)
        small = httpx.post(serial + "/v1/grade", json={"items": [{"response": "fair", "verifier": "format"}]})
        graded_before_small = lines(tally)
        assert small.status_code == 200
        assert big.result(timeout=300).status_code == 200
    # The small request took its turn after a chunk or two of the big one, not after all of them.
    assert graded_before_small < BIG // 2, graded_before_small


def send_and_leave(url: str, items: list[dict[str, object]], until: object) -> None:
    """Posts `items` over a raw connection and closes it once `until()` holds."""
    body = json.dumps({"items": items}).encode()
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=60) as sock:
        sock.sendall(
            b"POST /v1/grade HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        wait_until(until)


def test_the_queued_work_of_a_client_that_left_is_dropped(serial: str, tmp_path: Path) -> None:
    tally = tmp_path / "abandoned"
    send_and_leave(serial, tally_items(tally, BIG), lambda: lines(tally) >= 1)
    wait_until(lambda: in_flight(serial) == 0)
    assert lines(tally) < BIG // 2
    # The worker is free for others at once.
    r = httpx.post(serial + "/v1/grade", json={"items": [{"response": "next", "verifier": "format"}]}, timeout=60)
    assert r.status_code == 200


def test_in_redis_mode_the_entries_of_a_client_that_left_are_withdrawn(cluster: Cluster) -> None:
    url = cluster.api(chunk_size="1")  # no worker: the entries stay on the stream until withdrawn
    client = redis.Redis.from_url(cluster.redis_url)
    items = [{"response": f"gone {i}", "verifier": "format"} for i in range(3)]
    send_and_leave(url, items, lambda: client.xlen(redis_keys.JOB_STREAM) == 3)
    wait_until(lambda: client.xlen(redis_keys.JOB_STREAM) == 0)


def live_workers(client: redis.Redis) -> int:
    return int(client.zcard(redis_keys.WORKERS))


def test_in_redis_mode_a_small_request_does_not_wait_behind_a_large_batch(cluster: Cluster, tmp_path: Path) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    cluster.worker(processes=1, chunk_size="1")  # holds 2 chunks at once: the API's window
    wait_until(lambda: live_workers(client) == 1)
    url = cluster.api(chunk_size="1")
    tally = tmp_path / "big"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        big = pool.submit(httpx.post, url + "/v1/grade", json={"items": tally_items(tally, BIG)}, timeout=300)
        wait_until(lambda: lines(tally) >= 1)
        # Only the window is on the stream; the rest waits in the replica for its turn.
        assert client.xlen(redis_keys.JOB_STREAM) <= 2
        small = httpx.post(url + "/v1/grade", json={"items": [{"response": "fair", "verifier": "format"}]}, timeout=60)
        graded_before_small = lines(tally)
        assert small.status_code == 200
        assert small.json()["results"][0]["verdict"] == "incorrect"
        done = big.result(timeout=300)
    assert done.status_code == 200
    assert [r["mask"] for r in done.json()["results"]] == [False] * BIG
    assert graded_before_small < BIG // 2, graded_before_small


def test_in_redis_mode_a_set_window_bounds_the_entries_on_the_stream(cluster: Cluster) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    url = cluster.api(chunk_size="1", redis_window_chunks="3", redis_result_timeout_s="600")
    items = [{"response": f"held {i}", "verifier": "format"} for i in range(10)]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(httpx.post, url + "/v1/grade", json={"items": items}, timeout=300)
        wait_until(lambda: client.xlen(redis_keys.JOB_STREAM) == 3)
        time.sleep(0.5)  # nothing more arrives while no chunk is answered
        assert client.xlen(redis_keys.JOB_STREAM) == 3
        cluster.worker(processes=1)  # now the window moves on until all ten are graded
        r = pending.result(timeout=300)
    assert r.status_code == 200
    assert [x["verdict"] for x in r.json()["results"]] == ["incorrect"] * 10


def test_with_no_live_worker_nothing_is_held_back(cluster: Cluster) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    url = cluster.api(chunk_size="1")
    items = [{"response": f"queued {i}", "verifier": "format"} for i in range(5)]
    send_and_leave(url, items, lambda: client.xlen(redis_keys.JOB_STREAM) == 5)


def test_a_stopped_worker_leaves_the_live_set(cluster: Cluster) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    worker = cluster.worker(processes=2)
    wait_until(lambda: live_workers(client) == 1)
    member = client.zrange(redis_keys.WORKERS, 0, -1)[0].decode()
    assert member.split("|", 1)[0] == "4"  # two chunks in hand per process
    worker.stop()
    wait_until(lambda: live_workers(client) == 0)
