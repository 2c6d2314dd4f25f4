"""Builds the dispatcher and the cache the settings ask for, and reports their health."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from service.cache import MemoryCache, VerdictCache
from service.dispatch import Dispatcher
from service.dispatch.embedded import EmbeddedDispatcher
from service.metrics import Metrics
from service.settings import Settings

log = logging.getLogger(__name__)


def sandbox_report() -> dict[str, Any]:
    try:
        import sandboxes

        report = dict(sandboxes.isolation_report())
    except Exception as exc:  # the code verifier masks its items; the rest of the service stays up
        return {"ready": False, "error": f"{type(exc).__name__}: {exc}"}
    report.setdefault("ready", True)
    return report


@dataclass
class Backends:
    dispatcher: Dispatcher
    cache: VerdictCache
    extra_close: list[Any]

    async def health(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        sandbox = await loop.run_in_executor(None, sandbox_report)
        dispatcher = self.dispatcher.health()
        cache = self.cache.health()
        # The sandbox only matters to the code verifier, so it does not gate readiness.
        ready = bool(dispatcher.get("ready")) and bool(cache.get("ready"))
        return {"ready": ready, "backends": {"dispatcher": dispatcher, "cache": cache, "sandbox": sandbox}}

    async def close(self) -> None:
        await self.dispatcher.close()
        for closer in self.extra_close:
            await closer()


async def build_backends(settings: Settings, metrics: Metrics) -> Backends:
    def on_restart(reason: str) -> None:
        metrics.worker_restarts.labels(reason).inc()

    dispatcher = EmbeddedDispatcher(
        workers=settings.workers,
        chunk_size=settings.chunk_size,
        max_rss_mb=settings.worker_max_rss_mb,
        on_restart=on_restart,
    )
    await dispatcher.start()
    return Backends(dispatcher=dispatcher, cache=MemoryCache(settings.cache_entries), extra_close=[])
