"""Scale-out on a real redis-server: API replicas, `rlvr worker` processes, failures."""

from __future__ import annotations

import concurrent.futures
import json
import time
from pathlib import Path

import httpx
import pytest
import redis

from rlvr.service import redis_keys
from tests.services import Cluster, RedisServer, WorkerProcess

THINK = "<think>t</think><answer>a</answer>"


def wait_until(condition: object, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def pending_of(client: redis.Redis, worker: WorkerProcess) -> int:
    try:
        consumers = client.xinfo_consumers(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP)
    except redis.ResponseError:
        return 0
    return sum(int(c["pending"]) for c in consumers if f":{worker.proc.pid}:" in c["name"].decode())


def grade(url: str, items: list[dict[str, object]], timeout: float = 300) -> httpx.Response:
    return httpx.post(url + "/v1/grade", json={"items": items}, timeout=timeout)


def mixed_items(n: int, tag: str) -> tuple[list[dict[str, object]], list[float]]:
    items: list[dict[str, object]] = []
    expected: list[float] = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            items.append(
                {"id": f"{tag}{i}", "response": f"<think>{i}</think><answer>{i}</answer>", "verifier": "format"}
            )
            expected.append(1.0)
        elif kind == 1:
            items.append({"id": f"{tag}{i}", "response": f"bad {i}", "verifier": "format"})
            expected.append(0.0)
        elif kind == 2:
            items.append(
                {"id": f"{tag}{i}", "response": f"ans{i % 7}", "verifier": "exact_match", "ground_truth": f"ans{i % 5}"}
            )
            expected.append(1.0 if i % 7 == i % 5 else 0.0)
        else:
            items.append(
                {
                    "id": f"{tag}{i}",
                    "response": f"<a>{i}</a><b>x</b>",
                    "verifier": [
                        {"name": "format", "weight": 0.5, "params": {"preset": "tags", "tags": ["a", "b"]}},
                        {"name": "exact_match", "weight": 0.5, "ground_truth": "never"},
                    ],
                }
            )
            expected.append(0.5)
    return items, expected


def test_two_apis_three_workers_grade_5000_mixed_items(cluster: Cluster) -> None:
    # ground_truth sits on the item; composite entries above carry none, so fix them up.
    urls = [cluster.api(), cluster.api()]
    for _ in range(3):
        cluster.worker()
    items, expected = mixed_items(5000, "m")
    for item in items:
        if isinstance(item["verifier"], list):
            item["verifier"] = item["verifier"][:1]
            item["response"] = str(item["response"])
    expected = [0.5 if isinstance(i["verifier"], list) else e for i, e in zip(items, expected, strict=True)]
    halves = [items[:2500], items[2500:]]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = [
            pool.submit(grade, urls[k % 2], halves[k][j : j + 500]) for k in range(2) for j in range(0, 2500, 500)
        ]
        results = [r for f in futures for r in (f.result().raise_for_status().json()["results"])]
    assert len(results) == 5000
    by_id = {r["id"]: r for r in results}
    assert len(by_id) == 5000
    for item, exp in zip(items, expected, strict=True):
        res = by_id[item["id"]]
        assert res["mask"] is False, res
        assert res["reward"] == pytest.approx(exp), (item, res)
    ready = httpx.get(urls[0] + "/readyz").json()["backends"]
    assert ready["dispatcher"]["kind"] == "redis"
    assert ready["cache"]["kind"] == "redis"


def test_kill_9_worker_mid_batch_every_item_answered_once(cluster: Cluster) -> None:
    url = cluster.api(chunk_size="4")
    victim = cluster.worker()
    cluster.worker()
    items = [
        {"id": str(i), "response": "0.05", "verifier": "sleepy", "ground_truth": None, "params": {}, "prompt": str(i)}
        for i in range(120)
    ]
    # Distinct responses, so that dedupe does not shrink the batch.
    for i, item in enumerate(items):
        item["response"] = f"0.05{i:04d}"
    client = redis.Redis.from_url(cluster.redis_url)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(grade, url, items)
        wait_until(lambda: pending_of(client, victim) > 0)
        victim.kill()
        response = future.result()
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["id"] for r in results] == [str(i) for i in range(120)]
    assert all(r["verdict"] == "correct" and not r["mask"] for r in results), [r for r in results if r["mask"]][:3]
    stats = redis.Redis.from_url(cluster.redis_url).hgetall(redis_keys.STATS)
    assert int(stats.get(b"reclaimed", 0)) >= 1


def test_redis_restart_during_batch(cluster: Cluster, redis_server: RedisServer) -> None:
    url = cluster.api()
    cluster.worker()
    items = [{"response": f"0.02{i:04d}", "verifier": "sleepy"} for i in range(100)]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(grade, url, items, 60)
        time.sleep(0.5)
        redis_server.stop()
        time.sleep(0.3)
        redis_server.start()
        response = future.result()
    assert response.status_code in (200, 503)
    if response.status_code == 503:
        assert "Redis" in response.json()["error"]["message"]
    # The worker survives the restart and the next request succeeds.
    deadline = time.monotonic() + 30
    while True:
        after = grade(url, [{"response": "<think>after</think><answer>a</answer>", "verifier": "format"}], 20)
        if after.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert after.status_code == 200
    assert after.json()["results"][0]["verdict"] == "correct"


def test_identical_concurrent_requests_verified_once(cluster: Cluster, tmp_path: Path) -> None:
    urls = [cluster.api(), cluster.api()]
    cluster.worker(processes=2)
    tally = tmp_path / "tally.txt"
    item = {"response": "once", "verifier": "tally", "ground_truth": str(tally)}
    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        responses = list(pool.map(lambda k: grade(urls[k % 2], [item]), range(100)))
    assert all(r.status_code == 200 for r in responses)
    assert all(r.json()["results"][0]["reward"] == 1.0 for r in responses)
    assert tally.read_text().splitlines() == ["once"]


def test_shared_cache_hit_never_touches_the_stream(cluster: Cluster) -> None:
    a, b = cluster.api(), cluster.api()
    cluster.worker()
    item = {"response": THINK + " shared", "verifier": "format"}
    assert grade(a, [item]).json()["results"][0]["cached"] is False
    client = redis.Redis.from_url(cluster.redis_url)
    processed = int(client.hget(redis_keys.STATS, "processed_units") or 0)
    again = grade(b, [item]).json()
    assert again["results"][0]["cached"] is True
    assert again["stats"]["dispatched"] == 0
    assert int(client.hget(redis_keys.STATS, "processed_units") or 0) == processed
    ttl = client.ttl(next(iter(client.scan_iter(redis_keys.verdict("*")))))
    assert 0 < ttl <= 7 * 24 * 3600


def test_overload_gives_429(cluster: Cluster) -> None:
    # No worker: the first request's entry stays on the stream and fills it.
    url = cluster.api(redis_max_queue="1", redis_result_timeout_s="3")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        first = pool.submit(grade, url, [{"response": "x1", "verifier": "format"}])
        time.sleep(0.5)
        second = grade(url, [{"response": "x2", "verifier": "format"}])
        assert second.status_code == 429
        assert int(second.headers["retry-after"]) >= 1
        assert "limit of 1" in second.json()["error"]["message"]
        timed_out = first.result().json()["results"][0]
    # Nobody answered: masked, not scored 0.
    assert timed_out["mask"] is True and "no worker answered" in timed_out["reason"]


def test_crashing_verifier_gives_masked_results(cluster: Cluster) -> None:
    url = cluster.api()
    cluster.worker()
    items = [
        {"response": "exit", "verifier": "crashy"},
        {"response": "ok", "verifier": "crashy"},
        {"response": "raise", "verifier": "crashy"},
    ]
    results = grade(url, items, 60).json()["results"]
    assert [r["mask"] for r in results] == [True, False, True]
    assert "worker died" in results[0]["reason"]


def test_poison_entry_is_dead_lettered_and_masked(cluster: Cluster) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    client.xgroup_create(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, id="0", mkstream=True)
    unit = {
        "key": "k1",
        "prep_key": "p1",
        "verifier": "format",
        "params": {"preset": "think_answer"},
        "ground_truth": None,
        "prompt": "",
        "response": "poison",
        "deadline_s": 5.0,
    }
    reply = redis_keys.reply_list("test")
    entry = client.xadd(redis_keys.JOB_STREAM, {"chunk": "c", "reply": reply, "units": json.dumps([unit])})
    garbage = client.xadd(redis_keys.JOB_STREAM, {"chunk": "g", "reply": reply, "units": "{not json"})
    # Three deliveries to workers that died: XREADGROUP once, then XCLAIM twice more.
    client.xreadgroup(redis_keys.WORKER_GROUP, "dead-1", {redis_keys.JOB_STREAM: ">"}, count=1)
    for name in ("dead-2", "dead-3"):
        client.xclaim(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, name, 0, [entry])
    time.sleep(2.1)  # past redis_reclaim_idle_s
    cluster.worker()
    replies = [json.loads(client.blpop([reply], timeout=30)[1]) for _ in range(2)]
    by_entry = {r["entry"]: r["results"] for r in replies}
    masked = by_entry[entry.decode()]["k1"]
    assert masked["mask"] is True and masked["verdict"] == "error"
    assert "delivered more than 3 times" in masked["reason"]
    assert by_entry[garbage.decode()] == {}
    assert client.xlen(redis_keys.DEAD_LETTER_STREAM) == 2
    assert client.xlen(redis_keys.JOB_STREAM) == 0


def test_redis_down_fails_fast_with_503_then_recovers(cluster: Cluster, redis_server: RedisServer) -> None:
    url = cluster.api()
    cluster.worker()
    redis_server.stop()
    r = grade(url, [{"response": "down", "verifier": "format"}], 30)
    assert r.status_code == 503
    assert "Redis" in r.json()["error"]["message"]
    assert httpx.get(url + "/readyz").status_code == 503
    redis_server.start()
    deadline = time.monotonic() + 30
    while grade(url, [{"response": THINK, "verifier": "format"}], 20).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.5)


def test_redis_down_falls_back_to_embedded_when_configured(cluster: Cluster, redis_server: RedisServer) -> None:
    url = cluster.api(redis_fallback="embedded")
    redis_server.stop()
    r = grade(url, [{"response": THINK, "verifier": "format"}], 30)
    assert r.status_code == 200
    assert r.json()["results"][0]["verdict"] == "correct"


def test_metrics_cover_the_queue(cluster: Cluster) -> None:
    url = cluster.api()
    cluster.worker()
    grade(url, [{"response": THINK, "verifier": "format"}])
    grade(url, [{"response": THINK, "verifier": "format"}])
    text = httpx.get(url + "/metrics").text
    for name in (
        "rlvr_queue_depth",
        "rlvr_queue_lag",
        "rlvr_queue_pending",
        "rlvr_reclaimed_entries",
        "rlvr_dead_lettered_entries",
    ):
        assert name in text
    assert "rlvr_cache_hit_ratio 0.5" in text
