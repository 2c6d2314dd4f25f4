"""Redis state does not grow with time: consumers of dead workers are deleted, a
worker that stops deletes its own, and the dead-letter stream is capped."""

from __future__ import annotations

import signal
import time

import redis

from rlvr.service import redis_keys
from tests.services import Cluster


def wait_until(condition: object, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def consumer_names(client: redis.Redis) -> set[str]:
    try:
        consumers = client.xinfo_consumers(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP)
    except redis.ResponseError:
        return set()
    return {c["name"].decode() for c in consumers}


def test_consumers_of_dead_and_stopped_workers_are_deleted(cluster: Cluster) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    client.xgroup_create(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, id="0", mkstream=True)
    client.xgroup_createconsumer(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, "ghost-of-a-dead-worker")
    stopping = cluster.worker(redis_dead_consumer_idle_s="1")
    wait_until(lambda: "ghost-of-a-dead-worker" not in consumer_names(client))
    # The stopping worker's own consumer exists once it has read an entry.
    client.xadd(redis_keys.JOB_STREAM, {"chunk": "c", "reply": "", "units": "[]"})
    wait_until(lambda: any(f":{stopping.proc.pid}:" in n for n in consumer_names(client)))
    stopping.proc.send_signal(signal.SIGTERM)
    assert stopping.proc.wait(timeout=60) == 0
    assert not any(f":{stopping.proc.pid}:" in n for n in consumer_names(client))


def test_the_dead_letter_stream_is_capped(cluster: Cluster) -> None:
    client = redis.Redis.from_url(cluster.redis_url)
    client.xgroup_create(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, id="0", mkstream=True)
    for i in range(5):  # malformed: dead-lettered on first delivery
        client.xadd(redis_keys.JOB_STREAM, {"chunk": f"g{i}", "reply": "", "units": "{not json"})
    cluster.worker(redis_dead_letter_max="2")
    wait_until(lambda: client.hget(redis_keys.STATS, "dead_lettered") == b"5")
    assert client.xlen(redis_keys.DEAD_LETTER_STREAM) == 2
