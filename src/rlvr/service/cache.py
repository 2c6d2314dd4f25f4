"""The verdict cache seam and its in-memory backend."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Protocol

from rlvr.service.work import UnitResult


class VerdictCache(Protocol):
    async def get_many(self, keys: Iterable[str]) -> dict[str, UnitResult]: ...

    async def set_many(self, results: dict[str, UnitResult]) -> None: ...

    def health(self) -> dict[str, Any]: ...


class MemoryCache:
    """An LRU of verdicts in the API process; `max_entries=0` turns it off."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._data: OrderedDict[str, UnitResult] = OrderedDict()
        self._lock = threading.Lock()

    async def get_many(self, keys: Iterable[str]) -> dict[str, UnitResult]:
        found: dict[str, UnitResult] = {}
        with self._lock:
            for key in keys:
                hit = self._data.get(key)
                if hit is not None:
                    self._data.move_to_end(key)
                    found[key] = hit
        return found

    async def set_many(self, results: dict[str, UnitResult]) -> None:
        if self.max_entries <= 0:
            return
        with self._lock:
            for key, result in results.items():
                self._data[key] = result
                self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def health(self) -> dict[str, Any]:
        return {"kind": "memory", "ready": True, "entries": len(self._data), "max_entries": self.max_entries}
