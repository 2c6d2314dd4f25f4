"""Builds the dispatcher and the cache the settings ask for, and reports their health."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rlvr.service.cache import MemoryCache, VerdictCache
from rlvr.service.dispatch import Dispatcher
from rlvr.service.dispatch.embedded import EmbeddedDispatcher
from rlvr.service.errors import BackendUnavailable
from rlvr.service.metrics import Metrics
from rlvr.service.settings import Settings
from rlvr.service.work import Unit, UnitResult
from rlvr.verifiers.config import BuiltinConfig

log = logging.getLogger(__name__)


def sandbox_report() -> dict[str, Any]:
    try:
        from rlvr import sandboxes

        report = dict(sandboxes.isolation_report())
    except Exception as exc:  # the code verifier masks its items; the rest of the service stays up
        return {"ready": False, "error": f"{type(exc).__name__}: {exc}"}
    report.setdefault("ready", True)
    return report


class FallbackDispatcher:
    """Redis first; when Redis is unavailable, grade in this process instead of failing."""

    def __init__(self, primary: Any, fallback: EmbeddedDispatcher) -> None:
        self.primary = primary
        self.fallback = fallback
        self.fallbacks = 0

    async def start(self) -> None:
        await self.primary.start()
        await self.fallback.start()

    async def close(self) -> None:
        await self.primary.close()
        await self.fallback.close()

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        try:
            return list(await self.primary.run(units))
        except BackendUnavailable as exc:
            self.fallbacks += 1
            log.warning("grading %d units in-process: %s", len(units), exc.message)
            return await self.fallback.run(units)

    def health(self) -> dict[str, Any]:
        primary = dict(self.primary.health())
        primary["fallback"] = {**self.fallback.health(), "used": self.fallbacks}
        primary["ready"] = bool(primary["ready"]) or bool(primary["fallback"]["ready"])
        return primary

    async def stream_stats(self) -> dict[str, Any]:
        return dict(await self.primary.stream_stats())


@dataclass
class Backends:
    dispatcher: Dispatcher
    cache: VerdictCache
    redis_clients: list[Any]

    async def health(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        sandbox = await loop.run_in_executor(None, sandbox_report)
        dispatcher = self.dispatcher.health()
        stream_stats = getattr(self.dispatcher, "stream_stats", None)
        if stream_stats is not None:
            dispatcher["stream"] = await stream_stats()
        cache = self.cache.health()
        # The sandbox only matters to the code verifier, so it does not gate readiness.
        ready = bool(dispatcher.get("ready")) and bool(cache.get("ready"))
        return {"ready": ready, "backends": {"dispatcher": dispatcher, "cache": cache, "sandbox": sandbox}}

    async def refresh_metrics(self, metrics: Metrics) -> None:
        stream_stats = getattr(self.dispatcher, "stream_stats", None)
        if stream_stats is not None:
            stats = await stream_stats()
            if stats.get("ready"):
                metrics.queue_depth.set(stats["queue_depth"])
                metrics.queue_pending.set(stats["pending"])
                metrics.queue_lag.set(stats["lag"])
                metrics.reclaimed.set(stats["counters"].get("reclaimed", 0))
                metrics.dead_lettered.set(stats["counters"].get("dead_lettered", 0))
        hits = metrics.cache_hits._value.get()
        misses = metrics.cache_misses._value.get()
        metrics.cache_hit_ratio.set(hits / (hits + misses) if hits + misses else 0.0)

    async def close(self) -> None:
        await self.dispatcher.close()
        for client in self.redis_clients:
            await client.aclose()


async def build_backends(settings: Settings, metrics: Metrics, verifier_config: BuiltinConfig) -> Backends:
    def on_restart(reason: str) -> None:
        metrics.worker_restarts.labels(reason).inc()

    def embedded() -> EmbeddedDispatcher:
        return EmbeddedDispatcher(
            config=verifier_config,
            workers=settings.workers,
            chunk_size=settings.chunk_size,
            max_rss_mb=settings.worker_max_rss_mb,
            on_restart=on_restart,
        )

    if settings.redis_url is None:
        dispatcher: Any = embedded()
        await dispatcher.start()
        return Backends(dispatcher=dispatcher, cache=MemoryCache(settings.cache_entries), redis_clients=[])

    from rlvr.service.cache_redis import RedisCache
    from rlvr.service.dispatch.redis import RedisDispatcher
    from rlvr.service.worker import redis_client

    client, reader = redis_client(settings), redis_client(settings, blocking=True)
    dispatcher = RedisDispatcher(
        client,
        reader,
        chunk_size=settings.chunk_size,
        max_queue=settings.redis_max_queue,
        result_timeout_s=settings.redis_result_timeout_s,
    )
    if settings.redis_fallback == "embedded":
        dispatcher = FallbackDispatcher(dispatcher, embedded())
    await dispatcher.start()
    return Backends(
        dispatcher=dispatcher, cache=RedisCache(client, settings.cache_ttl_s), redis_clients=[client, reader]
    )
