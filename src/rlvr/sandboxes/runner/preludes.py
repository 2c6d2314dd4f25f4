"""What a Python solution finds bound without importing it.

Judges do not run a function-style solution alone. LeetCode runs it after
`from typing import *`, `from collections import *` and the like, and LiveCodeBench
and APPS prepend the same kind of import block to call-based solutions. HumanEval runs
the prompt (with its imports) and then the completion. A solution written for them
may leave those imports out (`def f(nums: List[int])`, `Counter(s)`, `heappush(h, x)`),
and is right there. A job names the environment it is graded in, and the program's
namespace starts with its bindings:

- ``typing``: the names of `typing` (`List`, `Optional` ...);
- ``leetcode``: those, the public names of collections, itertools, functools, heapq,
  bisect, string and math (never one that would hide a builtin: `math.pow` is not
  `pow`), and those modules themselves.

The bindings are the program's builtins, not its globals: a name the program binds
itself (even `from math import gcd`, the same object) is its own, and the program's
globals hold nothing else. The tests see only those globals and the real builtins: a
test of `gcd` calls the program's `gcd`, or fails if it has none.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

# For each environment: modules whose public names are bound, and modules bound by name.
ENVIRONMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "typing": (("typing",), ()),
    "leetcode": (
        ("typing", "collections", "itertools", "functools", "heapq", "bisect", "string", "math"),
        ("collections", "itertools", "functools", "heapq", "bisect", "string", "math", "re", "copy", "operator"),
    ),
}


@functools.cache
def builtins_for(environment: str) -> dict[str, Any]:
    """The builtins of a program graded in `environment` (KeyError for an unknown
    one): Python's, and the environment's names. Cached, so a zygote that asked once
    hands every job the same dict, which its fork copies."""
    starred, modules = ENVIRONMENTS[environment]
    real = vars(builtins)
    bound: dict[str, Any] = dict(real)
    for name in starred:
        module = __import__(name)
        public = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        bound.update((n, getattr(module, n)) for n in public if n not in real and hasattr(module, n))
    bound.update((name, __import__(name)) for name in modules)
    return bound
