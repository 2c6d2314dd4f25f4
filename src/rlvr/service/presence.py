"""Which `rlvr worker` processes are alive, and how many chunks they can hold at once.

Workers beat every `BEAT_INTERVAL_S`; a worker not heard from for `PRESENCE_TTL_S` is
gone. Scores are the Redis server's clock, so the machines' clocks need not agree. API
replicas read the total to size how much of their work they put on the stream at once
(see `rlvr.service.dispatch.redis`).
"""

from __future__ import annotations

from redis.asyncio import Redis

from rlvr.service import redis_keys

BEAT_INTERVAL_S = 2.0
PRESENCE_TTL_S = 10.0

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
