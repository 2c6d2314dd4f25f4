"""Builds the dispatcher and the cache the settings ask for, and reports their health."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlvr.sandboxes.config import SandboxConfig
from rlvr.service.cache import MemoryCache, VerdictCache
from rlvr.service.dispatch import Dispatcher
from rlvr.service.dispatch.pool import PoolDispatcher
from rlvr.service.metrics import Metrics
from rlvr.service.settings import Settings
from rlvr.verifiers.config import BuiltinConfig

if TYPE_CHECKING:  # redis is an optional dependency, imported only when configured
    from redis.asyncio import Redis


def sandbox_report(config: SandboxConfig | None = None) -> dict[str, Any]:
    try:
        from rlvr import sandboxes

        report = dict(sandboxes.isolation_report(config or SandboxConfig()))
    except Exception as exc:  # the code verifier masks its items; the rest of the service stays up
        return {"ready": False, "error": f"{type(exc).__name__}: {exc}"}
    report.setdefault("ready", True)
    return report


@dataclass
class Backends:
    dispatcher: Dispatcher
    cache: VerdictCache
    redis_clients: list[Redis]
    sandbox_config: SandboxConfig = field(default_factory=SandboxConfig)

    async def health(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        sandbox = await loop.run_in_executor(None, sandbox_report, self.sandbox_config)
        dispatcher = self.dispatcher.health()
        stream = await self.dispatcher.stream_stats()
        if stream is not None:
            dispatcher["stream"] = stream
        cache = self.cache.health()
        # The sandbox only matters to the code verifier, so it does not gate readiness.
        ready = bool(dispatcher.get("ready")) and bool(cache.get("ready"))
        return {"ready": ready, "backends": {"dispatcher": dispatcher, "cache": cache, "sandbox": sandbox}}

    async def refresh_metrics(self, metrics: Metrics) -> None:
        """Copies the job stream's state into the gauges, when there is a stream to read."""
        stats = await self.dispatcher.stream_stats()
        if stats is not None and stats.get("ready"):
            metrics.queue_depth.set(stats["queue_depth"])
            metrics.queue_pending.set(stats["pending"])
            metrics.queue_lag.set(stats["lag"])
            metrics.reclaimed.set(stats["counters"].get("reclaimed", 0))
            metrics.dead_lettered.set(stats["counters"].get("dead_lettered", 0))

    async def close(self) -> None:
        await self.dispatcher.close()
        for client in self.redis_clients:
            await client.aclose()


async def build_backends(settings: Settings, metrics: Metrics, verifier_config: BuiltinConfig) -> Backends:
    """Started backends: the embedded pool and an in-memory cache, or Redis for both
    (with the embedded pool behind it when `redis_fallback` is `embedded`)."""

    def local_pool() -> PoolDispatcher:
        return PoolDispatcher(
            config=verifier_config,
            workers=settings.workers,
            chunk_size=settings.chunk_size,
            max_rss_mb=settings.worker_max_rss_mb,
            stall_wall_factor=settings.stall_wall_factor,
            stall_retries=settings.stall_retries,
            on_restart=lambda reason: metrics.worker_restarts.labels(reason).inc(),
        )

    if settings.redis_url is None:
        backends = Backends(local_pool(), MemoryCache(settings.cache_entries), redis_clients=[])
    else:
        backends = _redis_backends(settings, local_pool)
    backends.sandbox_config = verifier_config.sandbox  # /readyz reports the configured backend
    await backends.dispatcher.start()
    return backends


def _redis_backends(settings: Settings, local_pool: Callable[[], PoolDispatcher]) -> Backends:
    from rlvr.service.cache_redis import RedisCache
    from rlvr.service.dispatch.fallback import FallbackDispatcher
    from rlvr.service.dispatch.redis import RedisDispatcher
    from rlvr.service.redis_conn import redis_client

    client, reader = redis_client(settings), redis_client(settings, blocking=True)
    dispatcher: Dispatcher = RedisDispatcher(
        client,
        reader,
        chunk_size=settings.chunk_size,
        max_queue=settings.redis_max_queue,
        result_timeout_s=settings.redis_result_timeout_s,
        window_chunks=settings.redis_window_chunks,
    )
    if settings.redis_fallback == "embedded":
        dispatcher = FallbackDispatcher(dispatcher, local_pool())
    return Backends(dispatcher, RedisCache(client, settings.cache_ttl_s), redis_clients=[client, reader])
