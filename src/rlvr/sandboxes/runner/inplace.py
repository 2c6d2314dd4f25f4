"""Arguments a split job's program changes in place (`xs.append(3)`, `nums.sort()`,
`grid[0][0] = 1`): the program half works on its own copy of each argument, sends back
the new state of each mutable one that changed, and the test half writes that state
into its own object, so `push(xs); assert xs == [1, 3]` holds as it does in one process.

What the test half writes is decoded wire data (`wire`, rich): the program's new
state of an argument, never an object of the program's, and never a change of type.
"""

from __future__ import annotations

import sys
from builtins import any, bytearray, dict, getattr, isinstance, len, list, set, type, zip  # noqa: UP029  (see `wire`)
from typing import Any

_MODULES = sys.modules
_PLAIN = (list, dict, set, bytearray)
_RICH = (
    ("collections", "deque"),
    ("collections", "Counter"),
    ("collections", "OrderedDict"),
    ("collections", "defaultdict"),
    ("numpy", "ndarray"),
)


def is_mutable(value: Any) -> bool:
    """Whether `value` is of a type whose state a call may change and that the wire
    carries as data (exact types, as the wire sends them)."""
    t = type(value)
    if t in _PLAIN:
        return True
    return any(t is getattr(_MODULES.get(module), name, None) for module, name in _RICH)


def update(target: Any, state: Any, depth: int = 0) -> None:
    """Make `target` hold `state` (a value of its exact type), keeping the identity of
    `target` and, where they keep their place and type, of the mutable values inside it
    (a test may hold `row = grid[0]`)."""
    t = type(target)
    if type(state) is not t or depth > MAX_DEPTH:
        return
    if t is list:
        target[:] = [_merge(old, new, depth) for old, new in zip(target, state, strict=False)] + state[len(target) :]
    elif isinstance(target, dict):
        old = dict(dict.items(target))
        target.clear()
        for key, value in dict.items(state):
            target[key] = _merge(old[key], value, depth) if key in old else value
    elif t is set:
        target.intersection_update(state)
        target.update(state)
    elif t is bytearray:
        target[:] = state
    elif t is getattr(_MODULES.get("collections"), "deque", None):
        target.clear()
        target.extend(state)
    elif target.shape == state.shape:  # a numpy array: its shape and dtype stay
        target[...] = state


MAX_DEPTH = 64


def _merge(old: Any, new: Any, depth: int) -> Any:
    if type(old) is type(new) and is_mutable(old):
        update(old, new, depth + 1)
        return old
    return new
