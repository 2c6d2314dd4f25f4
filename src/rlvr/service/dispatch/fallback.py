"""Redis first; when Redis is unavailable, grade in this process instead of failing."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from rlvr.service.dispatch import Dispatcher
from rlvr.service.errors import BackendUnavailable
from rlvr.service.work import Unit, UnitResult

log = logging.getLogger(__name__)


class FallbackDispatcher:
    """`primary` until it raises BackendUnavailable, then `fallback` for that batch."""

    # Results of the fallback reach no worker that would cache them, so the grader does
    # (for the primary's results that is a second, harmless write).
    stores_verdicts = False

    def __init__(self, primary: Dispatcher, fallback: Dispatcher) -> None:
        self.primary = primary
        self.fallback = fallback
        self.fallbacks = 0
        # Why the fallback could not start, if it could not: the primary serves alone.
        self.fallback_error: str | None = None

    async def start(self) -> None:
        await self.primary.start()
        try:
            await self.fallback.start()
        except BackendUnavailable as exc:
            self.fallback_error = exc.message
            log.error("no in-process fallback (grading over Redis only): %s", exc.message)

    async def close(self) -> None:
        await self.primary.close()
        await self.fallback.close()

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        try:
            return list(await self.primary.run(units))
        except BackendUnavailable as exc:
            if self.fallback_error is not None:
                raise
            self.fallbacks += 1
            log.warning("grading %d units in-process: %s", len(units), exc.message)
            return await self.fallback.run(units)

    def health(self) -> dict[str, Any]:
        primary = dict(self.primary.health())
        primary["fallback"] = {**self.fallback.health(), "used": self.fallbacks, "error": self.fallback_error}
        primary["ready"] = bool(primary["ready"]) or bool(primary["fallback"]["ready"])
        return primary

    async def stream_stats(self) -> dict[str, Any] | None:
        return await self.primary.stream_stats()
