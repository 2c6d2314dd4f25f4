"""Split mode's wire for the standard library's and numpy's values (`wire`, `rich=True`).

A `Fraction`, `Decimal`, `deque`, `Counter`, namedtuple, `date`, numpy array and the
like crosses as its plain parts (`{"$r": [kind, body]}`), and the receiving side builds
it again with its own constructors: a correct program returning `Fraction(1, 2)` meets
the test's `Fraction(1, 2)`, and nothing the program sends runs the program's code in
the test half or brings its own `__eq__` (only exact types are sent as rich values; a
subclass goes as its built-in base's plain value, or as a handle, see `wire`).

Values and call mode compare on the trusted client as JSON (`verifiers.code.compare`)
and never use this: there `decode` refuses `$r`.
"""

from __future__ import annotations

import builtins
import re
import sys

# Builtins bound here at import, before any program runs in this process: a program
# that rebinds one in `builtins`, or empties `sys.modules`, breaks only its own values.
from builtins import (  # noqa: UP029
    all,
    bool,
    bytearray,
    bytes,
    complex,
    dict,
    float,
    getattr,
    int,
    isinstance,
    iter,
    len,
    list,
    next,
    range,
    str,
    tuple,
    type,
)
from collections.abc import Callable
from typing import Any

# Imported here, not where a DataFrame first crosses: jobs import nothing of rlvr's
# after the zygote (its source may be where no job can see it); frames imports pandas
# only where a program has.
from rlvr.sandboxes.runner import frames

# The largest array (in bytes) a decoder builds from one message.
MAX_ARRAY_BYTES = 64 * 1024 * 1024
MAX_NDIM = 32
MAX_FIELDS = 255

_MODULES = sys.modules


class WireError(ValueError):
    """Wire data that no `encode` could have produced: the sending side's failure."""


Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]


def _cls(module: str, name: str) -> Any:
    """`module.name` if the module is loaded (a value of its type cannot exist if not)."""
    return getattr(_MODULES.get(module), name, None)


def _numpy_code(dtype: Any) -> str | None:
    """The dtype's code where it is one a decoder rebuilds exactly, else None."""
    code = dtype.str
    return code if type(code) is str and _DTYPE.fullmatch(code) else None


# Plain numeric, bool and fixed-width str dtypes; no object, record, datetime or
# platform-dependent long double.
_DTYPE = re.compile(r"[<>|=]?(?:b1|[iu][1248]|f[248]|c(?:8|16)|U[0-9]{1,6})")
_FACTORIES = ("int", "float", "str", "list", "dict", "set", "tuple", "frozenset", "bool", "complex")
_FACTORY_TYPES = {name: getattr(builtins, name) for name in _FACTORIES}


def encode(value: Any, t: type, sub: Encode) -> Any:
    """`value` (of exact type `t`) as rich wire data, or `NOT_RICH`."""
    module = t.__module__
    kind = _KINDS_BY_MODULE.get(module)
    if kind is not None:
        body = kind(value, t, sub)
        if body is not NOT_RICH:
            return {"$r": body}
    if isinstance(value, tuple) and type(getattr(t, "_fields", None)) is tuple:
        fields = t._fields  # type: ignore[attr-defined]
        if all(type(f) is str for f in fields) and len(fields) == len(value):
            return {"$r": ["nt", [t.__name__, list(fields), [sub(v) for v in tuple.__iter__(value)]]]}
    return NOT_RICH


NOT_RICH = object()


def _builtins(value: Any, t: type, sub: Encode) -> Any:
    if t is range:
        return ["range", [value.start, value.stop, value.step]]
    if t is bytearray:
        return ["ba", sub(bytes(value))]
    return NOT_RICH


def _pairs(value: Any, sub: Encode) -> list[Any]:
    return [[sub(k), sub(v)] for k, v in dict.items(value)]


def _collections(value: Any, t: type, sub: Encode) -> Any:
    if t is _cls("collections", "deque"):
        return ["dq", [[sub(v) for v in value], value.maxlen]]
    if t is _cls("collections", "Counter"):
        return ["C", _pairs(value, sub)]
    if t is _cls("collections", "OrderedDict"):
        return ["OD", _pairs(value, sub)]
    if t is _cls("collections", "defaultdict"):
        factory = value.default_factory
        name = next((n for n, f in _FACTORY_TYPES.items() if factory is f), None)
        return ["dd", [name, _pairs(value, sub)]]
    return NOT_RICH


def _numbers(value: Any, t: type, sub: Encode) -> Any:
    if t is _cls("fractions", "Fraction"):
        return ["F", [int(value.numerator), int(value.denominator)]]
    if t is _cls("decimal", "Decimal") or t is _cls("_pydecimal", "Decimal"):
        return ["D", str(value)]
    return NOT_RICH


def _timezone(tz: Any) -> Any:
    if tz is None:
        return None
    if type(tz) is not _cls("datetime", "timezone"):
        return NOT_RICH
    offset = tz.utcoffset(None)
    return [offset.days, offset.seconds, offset.microseconds]


def _datetime(value: Any, t: type, sub: Encode) -> Any:
    if t is _cls("datetime", "timedelta"):
        return ["td", [value.days, value.seconds, value.microseconds]]
    if t is _cls("datetime", "date"):
        return ["date", [value.year, value.month, value.day]]
    is_time = t is _cls("datetime", "time")
    if not (is_time or t is _cls("datetime", "datetime")):
        return NOT_RICH
    tz = _timezone(value.tzinfo)
    if tz is NOT_RICH:
        return NOT_RICH
    clock = [value.hour, value.minute, value.second, value.microsecond, value.fold, tz]
    return ["time", clock] if is_time else ["dt", [value.year, value.month, value.day, *clock]]


def _numpy(value: Any, t: type, sub: Encode) -> Any:
    numpy = _MODULES.get("numpy")
    if numpy is None:
        return NOT_RICH
    code = _numpy_code(value.dtype) if isinstance(value, (numpy.ndarray, numpy.generic)) else None
    if code is None:
        return NOT_RICH
    if t is numpy.ndarray:
        return ["nd", [code, list(value.shape), sub(value.tolist())]]
    return ["np", [code, sub(value.item())]]


def _pandas(value: Any, t: type, sub: Encode) -> Any:
    body = frames.encode(value, t, sub)
    return NOT_RICH if body is None else ["pd", body]


_KINDS_BY_MODULE: dict[str, Callable[[Any, type, Encode], Any]] = {
    "builtins": _builtins,
    "collections": _collections,
    "fractions": _numbers,
    "decimal": _numbers,
    "_pydecimal": _numbers,
    "datetime": _datetime,
    "numpy": _numpy,
    "pandas": _pandas,
    "pandas.core.frame": _pandas,
    "pandas.core.series": _pandas,
}


# ---------------------------------------------------------------- decoding


def decode(body: Any, sub: Decode) -> Any:
    """A value from the body of a `$r` tag, built with this process's own constructors.
    Raises `WireError` for anything no `encode` would write."""
    if type(body) is not list or len(body) != 2 or type(body[0]) is not str:
        raise WireError("bad rich wire value")
    build = _BUILDERS.get(body[0])
    if build is None:
        raise WireError(f"bad rich wire kind {body[0][:20]!r}")
    try:
        return build(body[1], sub)
    except (ValueError, TypeError, OverflowError, ArithmeticError, LookupError, AttributeError, MemoryError) as exc:
        if isinstance(exc, WireError):
            raise
        raise WireError(f"bad rich wire {body[0][:20]}: {type(exc).__name__}") from None


def _ints(body: Any, n: int, allow_none: bool = False) -> list[Any]:
    if type(body) is not list or len(body) != n:
        raise WireError("bad rich wire parts")
    for part in body:
        if not (type(part) is int or (allow_none and part is None)):
            raise WireError("bad rich wire part")
    return body


def _items(body: Any, sub: Decode) -> list[Any]:
    items = sub(body)
    if type(items) is not list:
        raise WireError("bad rich wire items")
    return items


def _pair_dict(body: Any, sub: Decode) -> dict[Any, Any]:
    value = sub({"$d": body})
    if type(value) is not dict:
        raise WireError("bad rich wire pairs")
    return value


def _range(body: Any, sub: Decode) -> range:
    return range(*_ints(body, 3))


def _bytearray(body: Any, sub: Decode) -> bytearray:
    value = sub(body)
    if type(value) is not bytes:
        raise WireError("bad rich wire bytearray")
    return bytearray(value)


def _deque(body: Any, sub: Decode) -> Any:
    from collections import deque

    if type(body) is not list or len(body) != 2:
        raise WireError("bad rich wire deque")
    maxlen = _ints(body[1:], 1, allow_none=True)[0]
    return deque(_items(body[0], sub), maxlen)


def _counter(body: Any, sub: Decode) -> Any:
    from collections import Counter

    return Counter(_pair_dict(body, sub))


def _ordered(body: Any, sub: Decode) -> Any:
    from collections import OrderedDict

    return OrderedDict(_pair_dict(body, sub))


def _defaultdict(body: Any, sub: Decode) -> Any:
    from collections import defaultdict

    if type(body) is not list or len(body) != 2:
        raise WireError("bad rich wire defaultdict")
    if not (body[0] is None or (type(body[0]) is str and body[0] in _FACTORY_TYPES)):
        raise WireError("bad rich wire defaultdict factory")
    factory = None if body[0] is None else _FACTORY_TYPES[body[0]]
    return defaultdict(factory, _pair_dict(body[1], sub))


def _fraction(body: Any, sub: Decode) -> Any:
    from fractions import Fraction

    numerator, denominator = _ints(body, 2)
    return Fraction(numerator, denominator)


def _decimal(body: Any, sub: Decode) -> Any:
    from decimal import Decimal

    if type(body) is not str:
        raise WireError("bad rich wire decimal")
    return Decimal(body)


def _tz(body: Any) -> Any:
    from datetime import timedelta, timezone

    return None if body is None else timezone(timedelta(*_ints(body, 3)))


def _timedelta(body: Any, sub: Decode) -> Any:
    from datetime import timedelta

    return timedelta(*_ints(body, 3))


def _date(body: Any, sub: Decode) -> Any:
    from datetime import date

    return date(*_ints(body, 3))


def _time(body: Any, sub: Decode) -> Any:
    from datetime import time

    if type(body) is not list or len(body) != 6:
        raise WireError("bad rich wire time")
    hour, minute, second, micro, fold = _ints(body[:5], 5)
    return time(hour, minute, second, micro, _tz(body[5]), fold=fold)


def _datetime_value(body: Any, sub: Decode) -> Any:
    from datetime import datetime

    if type(body) is not list or len(body) != 9:
        raise WireError("bad rich wire datetime")
    year, month, day, hour, minute, second, micro, fold = _ints(body[:8], 8)
    return datetime(year, month, day, hour, minute, second, micro, _tz(body[8]), fold=fold)


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")


def _namedtuple(body: Any, sub: Decode) -> Any:
    if type(body) is not list or len(body) != 3 or type(body[0]) is not str or type(body[1]) is not list:
        raise WireError("bad rich wire namedtuple")
    name, fields = body[0], body[1]
    if not _IDENTIFIER.fullmatch(name) or len(fields) > MAX_FIELDS:
        raise WireError("bad rich wire namedtuple name")
    if not all(type(f) is str and _IDENTIFIER.fullmatch(f) for f in fields):
        raise WireError("bad rich wire namedtuple field")
    items = _items(body[2], sub)
    if len(items) != len(fields):
        raise WireError("bad rich wire namedtuple length")
    return _namedtuple_type(name, tuple(fields))(*items)


_namedtuple_types: dict[tuple[str, tuple[str, ...]], Any] = {}
NAMEDTUPLE_TYPES = 256


def _namedtuple_type(name: str, fields: tuple[str, ...]) -> Any:
    """This side's namedtuple of that name and fields (built once): `namedtuple`
    checks the names (keywords, duplicates) and raises ValueError."""
    from collections import namedtuple

    made = _namedtuple_types.get((name, fields))
    if made is None:
        if len(_namedtuple_types) >= NAMEDTUPLE_TYPES:
            _namedtuple_types.clear()
        made = _namedtuple_types[(name, fields)] = namedtuple(name, fields)
    return made


def _numpy_module() -> Any:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _dtype(numpy: Any, code: Any) -> Any:
    if type(code) is not str or not _DTYPE.fullmatch(code):
        raise WireError("bad rich wire dtype")
    return numpy.dtype(code)


def _ndarray(body: Any, sub: Decode) -> Any:
    if type(body) is not list or len(body) != 3 or type(body[1]) is not list or len(body[1]) > MAX_NDIM:
        raise WireError("bad rich wire array")
    code, shape, data = body[0], _ints(body[1], len(body[1])), sub(body[2])
    numpy = _numpy_module()
    if numpy is None:
        return data  # what a side without numpy can hold: the array's `tolist()`
    dtype, count = _dtype(numpy, code), 1
    for n in shape:
        if n < 0:
            raise WireError("bad rich wire array shape")
        count *= n
    if count * dtype.itemsize > MAX_ARRAY_BYTES:
        raise WireError("rich wire array too large")
    array = numpy.array(data, dtype=dtype) if count else numpy.zeros(shape, dtype=dtype)
    if array.shape != tuple(shape):
        raise WireError("bad rich wire array data")
    return array


def _scalar(body: Any, sub: Decode) -> Any:
    if type(body) is not list or len(body) != 2:
        raise WireError("bad rich wire scalar")
    value = sub(body[1])
    numpy = _numpy_module()
    if numpy is None:
        return value
    if type(value) not in (bool, int, float, complex, str):
        raise WireError("bad rich wire scalar value")
    return _dtype(numpy, body[0]).type(value)


def _iterator(body: Any, sub: Decode) -> Any:
    return iter(_items(body, sub))


def _frame(body: Any, sub: Decode) -> Any:
    return frames.decode(body, sub)


_BUILDERS: dict[str, Callable[[Any, Decode], Any]] = {
    "range": _range,
    "ba": _bytearray,
    "dq": _deque,
    "C": _counter,
    "OD": _ordered,
    "dd": _defaultdict,
    "F": _fraction,
    "D": _decimal,
    "td": _timedelta,
    "date": _date,
    "time": _time,
    "dt": _datetime_value,
    "nt": _namedtuple,
    "nd": _ndarray,
    "np": _scalar,
    "it": _iterator,
    "pd": _frame,
}
