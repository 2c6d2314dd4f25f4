"""A work queue that is fair between requests: consumers take the next chunk from each
request in turn (round-robin), so a 1-item request waits for one chunk of a 512-item
batch, not for all of them. Thread-safe; consumers are threads."""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class FairQueue(Generic[T]):
    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._queues: OrderedDict[Hashable, deque[T]] = OrderedDict()
        self._stops = 0

    def put_many(self, owner: Hashable, items: Iterable[T]) -> None:
        with self._ready:
            pending = self._queues.setdefault(owner, deque())
            pending.extend(items)
            self._ready.notify(len(pending))

    def stop(self, consumers: int) -> None:
        """Each of `consumers` gets None once the queue is empty."""
        with self._ready:
            self._stops += consumers
            self._ready.notify_all()

    def get(self, timeout: float) -> T | None:
        """The next item, round-robin between owners; None to stop; queue.Empty after `timeout`."""
        with self._ready:
            if not self._ready.wait_for(lambda: bool(self._queues) or self._stops > 0, timeout):
                raise queue.Empty
            if not self._queues:
                self._stops -= 1
                return None
            owner, pending = self._queues.popitem(last=False)
            item = pending.popleft()
            if pending:
                self._queues[owner] = pending  # to the back of the line
            return item

    def cancel(self, owner: Hashable) -> list[T]:
        """Removes what `owner` still has queued (its client left) and returns it."""
        with self._ready:
            return list(self._queues.pop(owner, ()))

    def drain(self) -> list[T]:
        """Removes and returns everything queued, of every owner."""
        with self._ready:
            items = [item for pending in self._queues.values() for item in pending]
            self._queues.clear()
            return items

    def qsize(self) -> int:
        with self._ready:
            return sum(len(q) for q in self._queues.values())
