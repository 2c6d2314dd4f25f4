"""Talking to Redis, for every part of the service that does: how a client is made,
which errors mean Redis is out of reach, and how its replies become text."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from rlvr.service.settings import Settings

# Socket errors can surface unwrapped (a reset mid-reply), so they count as Redis being down too.
REDIS_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError)

BLOCKING_READ_S = 1.0
"""How long one blocking read (a worker's XREADGROUP, a replica's BLPOP) waits; a client
made with `blocking=True` allows for it on top of the command timeout."""


def redis_client(settings: Settings, *, blocking: bool = False) -> Redis:
    assert settings.redis_url is not None
    timeout = settings.redis_op_timeout_s + (BLOCKING_READ_S + 1 if blocking else 0)
    return Redis.from_url(
        settings.redis_url,
        socket_timeout=timeout,
        socket_connect_timeout=settings.redis_op_timeout_s,
        health_check_interval=10,
    )


def as_text(value: Any) -> str:
    """A reply field as text: the client returns bytes, tests and fakes may give str."""
    return value.decode() if isinstance(value, bytes) else str(value)
