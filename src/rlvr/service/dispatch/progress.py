"""Which units a verifier worker is on, in shared memory: the worker writes a mark each
time it starts a unit or a batch, and the thread that feeds it reads the marks to hold
each unit to its own deadline while the chunk's results are still to come.

A mark is four numbers, and the thread must never see half of one: the index of a new
batch with the unit count of the last one names units that were never sent (an empty
batch once the index is -1). So the marks sit behind a sequence lock: the worker makes
the sequence number odd, writes, and makes it even again; a reader that finds it odd,
or changed by the time it has read, reads again. The worker never waits on the reader,
and a worker killed in the middle of a write leaves only a mark that reads as unsure.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

# Slots of the shared array.
_SEQUENCE, _INDEX, _COUNT, _STARTED, _CPU_START = range(5)
# A write takes a few microseconds: this many tries, then the reader says it is unsure.
READ_TRIES = 100


@dataclass(frozen=True)
class Mark:
    """Units `index` to `index + count - 1` of the chunk started at `started`
    (monotonic), with the worker's CPU time at `cpu_start`. `index` is -1 until the
    worker starts the chunk."""

    index: int
    count: int
    started: float
    cpu_start: float


class Progress:
    """One worker's marks. Made before the worker starts, and handed to it."""

    def __init__(self, ctx: Any) -> None:
        self.shared = ctx.RawArray("d", 5)

    def mark(self, index: int, count: int, started: float, cpu_start: float) -> None:
        """Publish a mark (the worker, or the thread before it sends a chunk)."""
        shared = self.shared
        sequence = shared[_SEQUENCE]
        shared[_SEQUENCE] = sequence + 1
        shared[_INDEX], shared[_COUNT] = index, count
        shared[_STARTED], shared[_CPU_START] = started, cpu_start
        shared[_SEQUENCE] = sequence + 2

    def start(self, index: int, count: int) -> None:
        """The worker starts units `index` to `index + count - 1` now."""
        self.mark(index, count, time.monotonic(), time.process_time())

    def read(self) -> Mark | None:
        """The last whole mark; None if a write was under way on every try."""
        shared = self.shared
        for _ in range(READ_TRIES):
            sequence = shared[_SEQUENCE]
            if sequence % 2 == 0:
                mark = Mark(int(shared[_INDEX]), int(shared[_COUNT]), shared[_STARTED], shared[_CPU_START])
                if shared[_SEQUENCE] == sequence:
                    return mark
        return None
