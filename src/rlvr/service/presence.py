"""Which `rlvr worker` processes and API replicas are alive.

Workers beat every `BEAT_INTERVAL_S`; a worker not heard from for `PRESENCE_TTL_S` is
gone. Scores are the Redis server's clock, so the machines' clocks need not agree. API
replicas read the total to size how much of their work they put on the stream at once
(see `rlvr.service.dispatch.redis`).

An API replica holds a lease, a key that expires `REPLICA_LEASE_TTL_S` after its last
refresh (every `REPLICA_BEAT_INTERVAL_S`). Its claims on units count only while the
lease lives, so the units of a replica that died, or stopped, pass to the others within
seconds instead of waiting out the claim's own TTL.
"""

from __future__ import annotations

from collections.abc import Collection

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from rlvr.service import redis_keys

BEAT_INTERVAL_S = 2.0
PRESENCE_TTL_S = 10.0
# Short, so that a dead replica's units move on within seconds; a few beats long, so
# that a replica whose event loop is busy for a moment keeps its units (a loop stalled
# past it only costs work done twice: results are keyed by unit, the first one stays).
REPLICA_BEAT_INTERVAL_S = 1.0
REPLICA_LEASE_TTL_S = 5.0

# KEYS: the workers' sorted set. ARGV: member, TTL. Adds or refreshes the member, drops
# the members past the TTL.
_BEAT_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
return 1
"""

# KEYS: the workers' sorted set. ARGV: TTL. The members heard from within the TTL.
_LIVE_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
return redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[1]), '+inf')
"""


def member(name: str, capacity: int) -> str:
    return f"{capacity}|{name}"


async def beat(client: Redis, name: str, capacity: int) -> None:
    await client.eval(_BEAT_LUA, 1, redis_keys.WORKERS, member(name, capacity), PRESENCE_TTL_S)


async def leave(client: Redis, name: str, capacity: int) -> None:
    await client.zrem(redis_keys.WORKERS, member(name, capacity))


async def live_capacity(client: Redis) -> int:
    """Chunks all live workers together can hold at once (0 when none is alive)."""
    members = await client.eval(_LIVE_LUA, 1, redis_keys.WORKERS, PRESENCE_TTL_S)
    total = 0
    for raw in members:
        capacity, _, _ = (raw.decode() if isinstance(raw, bytes) else str(raw)).partition("|")
        if capacity.isdigit():
            total += int(capacity)
    return total


def hold_lease(pipe: Pipeline, replica: str, ttl_s: float) -> None:
    """Queues the refresh of `replica`'s lease on `pipe`."""
    pipe.set(redis_keys.replica_lease(replica), "1", px=max(1, int(ttl_s * 1000)))


async def drop_lease(client: Redis, replica: str) -> None:
    await client.delete(redis_keys.replica_lease(replica))


async def dead_replicas(client: Redis, replicas: Collection[str]) -> set[str]:
    """Those of `replicas` whose lease has expired."""
    names = list(replicas)
    if not names:
        return set()
    async with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.exists(redis_keys.replica_lease(name))
        alive = await pipe.execute()
    return {name for name, live in zip(names, alive, strict=True) if not live}
