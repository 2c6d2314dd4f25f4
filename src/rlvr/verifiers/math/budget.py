"""The symbolic stage's time budget per item, counted in the CPU the item uses.

A wall-clock budget charges an item for time it did not use: another process on a
busy machine, or a full collection of a large heap, can stall a cheap comparison past
it, and a correct answer is then graded `timeout` (reward 0). So the wall clock is only
the fast path: `check` reads it (tens of nanoseconds, called inside ANTLR's prediction
loop), and when it passes the deadline the thread's CPU time decides (half a
microsecond, read only then). The CPU the grading thread spends in full
(generation 2) collections is not charged either: it grows with the heap the process already holds (a trainer's, a test
session's), not with the item. An item's own allocations can trigger them, but only
each time the heap has grown by a quarter, so what it escapes that way is a small
multiple of the allocating it is charged for.

The clocks start at the first check, so an item that never reaches sympy never reads
the CPU clock. A worker grades one item at a time, so the state is the module's.
The dispatcher's own deadline, in CPU time too, stops what runs between checks.
"""

from __future__ import annotations

import gc
import math
import threading
import time
from typing import Any

__all__ = ["BudgetExceeded", "check", "set_budget"]


class BudgetExceeded(Exception):  # not a ValueError, so no handler of bad input swallows it
    """The symbolic stage ran out of its time budget for this item."""


_seconds = math.inf
# When the wall clock passes this, the CPU clock is read: -inf until the first check
# of an item starts its clocks, +inf when there is no budget.
_deadline = math.inf
_cpu_start = 0.0
# The thread grading the item: only its collections are its CPU.
_thread = 0
_full_collection_started = 0.0
_full_collections_s = 0.0


def set_budget(seconds: float) -> None:
    """Give the item being graded `seconds` of CPU (`math.inf`: no budget)."""
    global _seconds, _deadline
    _seconds = seconds
    _deadline = math.inf if seconds == math.inf else -math.inf


def check() -> None:
    """Raise BudgetExceeded once the item has used its budget."""
    if time.perf_counter() > _deadline:
        _charge()


def _charge() -> None:
    global _deadline, _cpu_start, _thread
    now = time.perf_counter()
    cpu = time.thread_time() - _full_collections_s
    if _deadline == -math.inf:
        _cpu_start, _thread = cpu, threading.get_ident()
    left = _seconds - (cpu - _cpu_start)
    if left <= 0:
        raise BudgetExceeded("symbolic stage exceeded its time budget")
    # What is left cannot be used in less wall time than this.
    _deadline = now + left


def _time_full_collections(phase: str, info: dict[str, Any]) -> None:
    global _full_collection_started, _full_collections_s
    # CPU, not wall time: a collection stalled by a busy machine must not pay out
    # more than it cost.
    if info["generation"] != 2 or threading.get_ident() != _thread:
        return
    if phase == "start":
        _full_collection_started = time.thread_time()
    else:
        _full_collections_s += time.thread_time() - _full_collection_started


gc.callbacks.append(_time_full_collections)
