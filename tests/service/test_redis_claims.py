"""A replica's claims on units live only as long as the replica: one killed or stopped
with chunks still unsent hands its units to the replicas that wait for them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import time
from collections.abc import Callable
from typing import Any

import httpx
import redis
from redis.asyncio import Redis

from rlvr.service import redis_keys
from rlvr.service.dispatch.redis import RedisDispatcher
from rlvr.service.work import Unit
from tests.services import Cluster, RedisServer

# A bound on a hang, far below the claims' own TTL (redis_result_timeout_s, 600 s by
# default) that a retry used to wait out; not a measure of speed.
PATIENCE_S = 90.0
BATCHES = 3
UNITS = 16  # per batch: 0.1 s each, 2 to a chunk, so most chunks wait in the replica


def wait_until(condition: Callable[[], object], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def batches() -> list[list[dict[str, object]]]:
    # Distinct responses, so that no unit is shared between batches.
    return [
        [{"id": f"{b}-{i}", "response": f"0.1{b}{i:04d}", "verifier": "sleepy"} for i in range(UNITS)]
        for b in range(BATCHES)
    ]


def grade(url: str, items: list[dict[str, object]], timeout: float = PATIENCE_S) -> httpx.Response:
    return httpx.post(url + "/v1/grade", json={"items": items}, timeout=timeout)


def dispatcher_health(url: str) -> dict[str, Any]:
    health: dict[str, Any] = httpx.get(url + "/readyz", timeout=10).json()["backends"]["dispatcher"]
    return health


def claims_of(client: redis.Redis, replica: str) -> int:
    keys = list(client.scan_iter(redis_keys.in_flight("*")))
    return sum(1 for owner in client.mget(keys) if owner == replica.encode()) if keys else 0


def assert_all_correct(response: httpx.Response) -> list[tuple[str, str]]:
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert all(r["verdict"] == "correct" and not r["mask"] for r in results), [r for r in results if r["mask"]][:3]
    return [(r["id"], r["verdict"]) for r in results]


def start_with_unsent_chunks(cluster: Cluster, pool: concurrent.futures.Executor) -> tuple[str, list[Any]]:
    """A replica that puts one chunk at a time on the stream, given every batch at once:
    once the worker is busy, the replica holds claims on chunks it has not sent."""
    url = cluster.api(chunk_size="2", redis_window_chunks="1")
    sent = [pool.submit(grade, url, items) for items in batches()]
    wait_until(lambda: dispatcher_health(url)["chunks_unsent"] > 0)
    return url, sent


def test_a_replica_killed_with_unsent_chunks_does_not_strand_them(cluster: Cluster) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    cluster.worker(processes=1)
    with concurrent.futures.ThreadPoolExecutor(2 * BATCHES) as pool:
        doomed, _ = start_with_unsent_chunks(cluster, pool)
        replica = dispatcher_health(doomed)["replica"]
        cluster.apis[0].proc.kill()
        cluster.apis[0].proc.wait()
        assert claims_of(client, replica) > 0  # what a retry used to wait 600 s for
        survivor = cluster.api(chunk_size="2")
        retries = [pool.submit(grade, survivor, items) for items in batches()]
        for items, retry in zip(batches(), retries, strict=True):
            assert [i for i, _ in assert_all_correct(retry.result())] == [item["id"] for item in items]


def test_a_stopped_replica_is_taken_over_and_its_late_answers_agree(cluster: Cluster) -> None:
    cluster.worker(processes=1)
    with concurrent.futures.ThreadPoolExecutor(2 * BATCHES) as pool:
        stopped, first = start_with_unsent_chunks(cluster, pool)
        os.kill(cluster.apis[0].proc.pid, signal.SIGSTOP)
        try:
            other = cluster.api(chunk_size="2")
            retried = [assert_all_correct(r) for r in pool.map(lambda items: grade(other, items), batches())]
        finally:
            os.kill(cluster.apis[0].proc.pid, signal.SIGCONT)
        # Its own requests end as they may after any stall: answered, or a retryable 503
        # (its reply reader timed out meanwhile), never with another verdict or a mask.
        late = [f.result() for f in first]
        assert all(r.status_code in (200, 503) for r in late), [r.text for r in late]
        assert [assert_all_correct(r) for r in late if r.status_code == 200] == [
            answer for r, answer in zip(late, retried, strict=True) if r.status_code == 200
        ]
    # Back, it answers the same: its late chunks were verified twice at worst, under the
    # same keys, and it left the claims it lost alone.
    assert [assert_all_correct(grade(stopped, items)) for items in batches()] == retried
    assert dispatcher_health(stopped)["waiting_units"] == 0


# ---- the claims themselves, on two dispatchers in this process -------------------------


def unit(key: str) -> Unit:
    return Unit(
        key=key, prep_key=key, verifier="format", params={}, ground_truth=None, prompt="", response="r", deadline_s=1.0
    )


def dispatcher(url: str, **options: Any) -> RedisDispatcher:
    return RedisDispatcher(
        Redis.from_url(url), Redis.from_url(url), chunk_size=1, max_queue=100, result_timeout_s=60, **options
    )


async def eventually(condition: Callable[[], Any], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not await condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def _claims_follow_the_lease(url: str) -> None:
    # No worker: every unit stays in flight until its request ends.
    probe = Redis.from_url(url)
    claim = redis_keys.in_flight("k")
    # Never started, so its lease is not refreshed: what a stopped replica's does.
    stalled = dispatcher(url, lease_ttl_s=0.3)
    live, follower = dispatcher(url, lease_ttl_s=0.3, lease_interval_s=0.05), dispatcher(url)
    await live.start()
    await follower.start()
    try:
        first = asyncio.create_task(stalled.run([unit("k")]))
        await eventually(lambda: _equals(probe.get(claim), stalled.replica))
        second = asyncio.create_task(live.run([unit("k")]))
        await eventually(lambda: _equals(probe.get(claim), live.replica))
        # Taken over: sent again (the claim is taken before its chunk is on the stream).
        await eventually(lambda: _is(probe.xlen(redis_keys.JOB_STREAM), 2))
        # The stalled request ends late and releases only what is still its own.
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert await probe.get(claim) == live.replica.encode()
        # A live owner keeps its claim: the follower waits, however many leases long.
        third = asyncio.create_task(follower.run([unit("k")]))
        await asyncio.sleep(10 * 0.3)
        assert await probe.get(claim) == live.replica.encode()
        assert await probe.xlen(redis_keys.JOB_STREAM) == 1
        for task in (second, third):
            task.cancel()
        await asyncio.gather(second, third, return_exceptions=True)
        assert await probe.get(claim) is None
    finally:
        for d in (stalled, live, follower):
            await d.close()
            await d.client.aclose()
            await d.reader_client.aclose()
        await probe.aclose()


async def _equals(reply: Any, replica: str) -> bool:
    return bool(await reply == replica.encode())


async def _is(reply: Any, expected: object) -> bool:
    return bool(await reply == expected)


def test_a_claim_counts_while_its_owners_lease_lives_and_is_released_by_its_owner_only(
    redis_server: RedisServer,
) -> None:
    asyncio.run(_claims_follow_the_lease(redis_server.url))
