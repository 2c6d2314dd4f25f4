"""The dispatcher seam: how units get from the API to worker processes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from rlvr.service.work import Unit, UnitResult


class Dispatcher(Protocol):
    @property
    def stores_verdicts(self) -> bool:
        """True when the workers write cacheable results into the verdict cache
        themselves, so the grader must not write them again."""
        ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        """Verify `units`; results in the same order. Never raises for a unit's own failure."""
        ...

    def health(self) -> dict[str, Any]:
        """State for /readyz; `ready` says whether it can take work."""
        ...

    async def stream_stats(self) -> dict[str, Any] | None:
        """State of the job stream for /readyz and /metrics, or None without one.
        `ready` is false when the stream could not be read."""
        ...
