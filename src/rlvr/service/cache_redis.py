"""The shared verdict cache in Redis: one key per unit, with a TTL, shared by every replica.

A cache that cannot be reached is a miss, never an error: grading goes on (and then
fails on its own if the dispatcher needs Redis too).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from redis.asyncio import Redis

from rlvr.service import redis_keys
from rlvr.service.redis_conn import REDIS_ERRORS
from rlvr.service.work import UnitResult

log = logging.getLogger(__name__)


class RedisCache:
    def __init__(self, client: Redis, ttl_s: int) -> None:
        self.client = client
        self.ttl_s = ttl_s
        self.errors = 0
        self.last_error: str | None = None

    async def get_many(self, keys: Iterable[str]) -> dict[str, UnitResult]:
        keys = list(keys)
        if not keys:
            return {}
        try:
            values = await self.client.mget([redis_keys.verdict(k) for k in keys])
        except REDIS_ERRORS as exc:
            self._failed(exc)
            return {}
        found: dict[str, UnitResult] = {}
        for key, raw in zip(keys, values, strict=True):
            if raw is not None:
                try:
                    found[key] = UnitResult.from_dict(json.loads(raw))
                except (ValueError, TypeError):
                    log.warning("ignoring malformed cache entry %s", key)
        return found

    async def set_many(self, results: dict[str, UnitResult]) -> None:
        if not results:
            return
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for key, res in results.items():
                    pipe.set(redis_keys.verdict(key), json.dumps(res.to_dict()), ex=self.ttl_s)
                await pipe.execute()
        except REDIS_ERRORS as exc:
            self._failed(exc)

    def _failed(self, exc: BaseException) -> None:
        self.errors += 1
        self.last_error = f"{type(exc).__name__}: {exc}"
        log.warning("verdict cache unavailable: %s", self.last_error)

    def health(self) -> dict[str, Any]:
        return {
            "kind": "redis",
            "ready": True,
            "ttl_s": self.ttl_s,
            "errors": self.errors,
            "last_error": self.last_error,
        }
