"""Telemetry for the `custom_equality` signal: whether a value a program hands a test
is, or holds, an object of a class that brings its own comparison or conversion (an
`__eq__` that is always True, an `int` subclass whose `__index__` lies). `wire` already
keeps such overrides from deciding a test; this only names the class, so that the
verifier can report that the program tried.

It runs in the program's own process (values and call modes) or half (split mode),
where the program could forge anything it says: it is never part of a verdict. It reads
containers (and their subclasses) through their built-in base's own iteration and stops
after `MAX_SCANNED` values, so a large return value costs a bounded amount.
"""

from __future__ import annotations

import sys

# Bound at import, before any program runs in this process (see `wire`).
from builtins import (  # noqa: UP029
    BaseException,
    dict,
    frozenset,
    getattr,
    isinstance,
    issubclass,
    list,
    next,
    set,
    str,
    tuple,
    type,
    vars,
)
from collections import deque
from itertools import islice
from typing import Any

MAX_SCANNED = 1000
MAX_NAME = 100
# What a class may define that would change how a test compares or reads its instances
# (`__repr__` and `__str__` are left out: namedtuples define them, and no test reads them).
COMPARISON = frozenset(
    (
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__index__",
        "__int__",
        "__float__",
        "__bool__",
        "__len__",
        "__iter__",
        "__getitem__",
        "__contains__",
        "__getattribute__",
        "__class__",
    )
)
_SCALARS = frozenset((type(None), bool, int, float, complex, str, bytes))
_SEQUENCES = (list, tuple, set, frozenset)
# Py_TPFLAGS_HEAPTYPE: a class that Python code created. Built-in and C extension types
# (numpy's, `OrderedDict`, `deque`, `Decimal`, `datetime`) have their comparison from C,
# and a program cannot write one.
_HEAP_TYPE = 1 << 9
_FLAGS = type.__dict__["__flags__"]
_MRO = type.__dict__["__mro__"]
# The standard library's classes written in Python that a program returns honestly
# (`Counter(s)`, `Fraction(1, 3)`, an `IntEnum` member), known by identity (a program
# can name its own class after a module, not make it one of these).
_STANDARD_CLASSES = (
    ("collections", ("Counter", "ChainMap", "UserDict", "UserList", "UserString")),
    ("fractions", ("Fraction",)),
    ("numbers", ("Number", "Complex", "Real", "Rational", "Integral")),
    ("enum", ("Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "ReprEnum")),
)


def foreign_type(value: Any) -> str | None:
    """The name of the first class, in `value` or the containers it holds, that defines
    comparison or conversion of its own (beyond the built-in, C and standard-library
    classes); None if there is none or it cannot be told."""
    try:
        return _scan(value)
    except BaseException:
        return None


def _scan(value: Any) -> str | None:
    pending, budget = [value], MAX_SCANNED
    trusted = _standard_classes()
    while pending and budget > 0:
        budget -= 1
        item = pending.pop()
        kind = type(item)
        if kind in _SCALARS:
            continue
        if _overrides(kind, trusted):
            return str.__str__(kind.__name__)[:MAX_NAME]
        # A container, or a subclass of one (a namedtuple, `Counter`, an empty
        # `class T(tuple)`), is read through its built-in base's own methods.
        if issubclass(kind, dict):
            pending.extend(islice(dict.keys(item), budget))
            pending.extend(islice(dict.values(item), budget))
        else:
            pending.extend(islice(_items(item, kind), budget))
    return None


def _items(item: Any, kind: type) -> Any:
    """What a container holds, read through its built-in base's own iteration: the
    sequences, `deque`, and numpy's arrays of objects."""
    base = next((b for b in _SEQUENCES if issubclass(kind, b)), None)
    if base is not None:
        return base.__iter__(item)
    if issubclass(kind, deque):
        return deque.__iter__(item)
    numpy = sys.modules.get("numpy")
    if numpy is not None and issubclass(kind, numpy.ndarray) and numpy.ndarray.dtype.__get__(item).kind == "O":
        return numpy.ndarray.__iter__(numpy.ndarray.ravel(item))
    return ()


def _overrides(kind: type, trusted: frozenset[type]) -> bool:
    """Whether a class, or one of its bases that Python code wrote (not a standard
    library class), defines any of `COMPARISON` itself."""
    for cls in _MRO.__get__(kind):
        if not _FLAGS.__get__(cls) & _HEAP_TYPE or cls in trusted:
            continue
        if not COMPARISON.isdisjoint(vars(cls)):
            return True
    return False


def _standard_classes() -> frozenset[type]:
    """`_STANDARD_CLASSES` among the modules loaded (a class of a module not loaded
    cannot be the class of a value)."""
    found: list[Any] = []
    for module_name, names in _STANDARD_CLASSES:
        module = sys.modules.get(module_name)
        found.extend(getattr(module, name, None) for name in names)
    return frozenset(cls for cls in found if type(cls) is type or isinstance(cls, type))
