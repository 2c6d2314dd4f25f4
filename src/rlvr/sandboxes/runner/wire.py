"""Exact-type encoding of plain Python data as JSON, and back.

Exact built-in types go as themselves (checked with `type(x) is ...`, never
`isinstance`). A subclass of a built-in type (`Counter`, `defaultdict`, a namedtuple,
an `IntEnum`, a `str` subclass with a lying `__eq__`) goes as the plain value its
built-in base holds, read with the base's own methods, so no override of the
subclass's runs and what is compared is what the object stores; a numpy scalar or array
goes as the plain value numpy gives for it. Anything else (a function, a class, an
instance of the program's own class) goes as an opaque handle where a handle table is
given, never as a value that compares equal, and is refused where none is.

Decoding builds only built-in containers and scalars from `json.loads` output:
nothing from the untrusted side can run code in the decoder's process, and data no
encoder would write raises `WireError`, never another exception.

Split mode (`rich=True` on both ends) also carries the standard library's and numpy's
values as themselves (`rich`), and the test half's iterators as the items they yield
(`iterators=True`, the arguments it passes).
"""

from __future__ import annotations

import sys

# Builtins bound here at import, before any program runs in this process: a program
# that rebinds one in `builtins` (an `int` subclass, a wrapper of `type`) breaks only
# its own values, never their encoding.
from builtins import (  # noqa: UP029
    all,
    any,
    bool,
    bytes,
    complex,
    dict,
    float,
    frozenset,
    getattr,
    hasattr,
    hash,
    int,
    isinstance,
    issubclass,
    iter,
    len,
    list,
    next,
    repr,
    set,
    str,
    tuple,
    type,
)
from collections.abc import Callable
from math import isfinite
from types import ModuleType
from typing import Any

from rlvr.sandboxes.runner import rich as rich_values
from rlvr.sandboxes.runner.rich import WireError

_MODULES = sys.modules

MAX_DEPTH = 64
# Items of one iterator the test half passes to the program (`iterators=True`).
MAX_ITER_ITEMS = 1_000_000
# Members of one set (or keys of one dict) that may share a hash; see `_hashed`.
MAX_SHARED_HASH = 32


class Unsupported(TypeError):
    """A value that is not plain data (and no handle table was given)."""


def encode(
    value: Any,
    handle: Callable[[Any], int] | None = None,
    depth: int = 0,
    rich: bool = False,
    iterators: bool = False,
) -> Any:
    if depth > MAX_DEPTH:
        raise Unsupported("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return value
    if t is float:
        return value if isfinite(value) else {"$f": repr(value)}

    def sub(v: Any) -> Any:
        return encode(v, handle, depth + 1, rich, iterators)

    if t is list:
        return [sub(v) for v in value]
    if t is tuple:
        return {"$t": [sub(v) for v in value]}
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: sub(v) for k, v in value.items()}
        return {"$d": [[sub(k), sub(v)] for k, v in value.items()]}
    if t is set or t is frozenset:
        return {"$s" if t is set else "$fs": [sub(v) for v in value]}
    if t is bytes:
        return {"$b": _base64().b64encode(value).decode()}
    if t is complex:
        return {"$c": [encode(value.real, None, depth + 1), encode(value.imag, None, depth + 1)]}
    if rich:
        encoded = rich_values.encode(value, t, sub)
        if encoded is not rich_values.NOT_RICH:
            return encoded
    plain = _base_value(value, t)
    if plain is not _NOT_DATA:
        return sub(plain)
    refused = Unsupported(f"not plain data: {t.__name__}")
    if handle is not None:
        try:
            return {"$h": handle(value), "$type": t.__name__[:100]}
        except Unsupported as exc:
            refused = exc
    # An iterator of the sender's own (one of the other side's has a handle) goes as
    # the items it yields.
    if iterators and _is_iterator(value, t):
        return {"$r": ["it", sub(_take(value))]}
    raise refused


def _is_iterator(value: Any, t: type) -> bool:
    return hasattr(t, "__next__") and hasattr(t, "__iter__")


def _take(iterator: Any) -> list[Any]:
    items = []
    for item in iterator:
        items.append(item)
        if len(items) > MAX_ITER_ITEMS:
            raise Unsupported("iterator too long to pass to the program")
    return items


# Built-in types whose subclasses' instances go as the base's value, each read by a
# method of the base itself.
_BASES: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (int, int.__index__),
    (float, float.__float__),
    (str, str.__str__),
    (bytes, bytes.__bytes__),
    (list, lambda v: list(list.__iter__(v))),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (dict, lambda v: dict(dict.items(v))),
    (set, lambda v: set(set.__iter__(v))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
)


_NOT_DATA = object()


def _base_value(value: Any, t: type) -> Any:
    """The plain value a subclass of a built-in or a numpy value holds (see the
    module's docstring), or `_NOT_DATA`. `t` is `type(value)`: `isinstance` would take
    the word of a `__class__` property."""
    for base, read in _BASES:
        if issubclass(t, base):
            return read(value)
    if t.__module__ == "numpy" and _is_numpy(t):
        return value.tolist()  # a scalar's `tolist()` is its `item()`
    return _NOT_DATA


def _is_numpy(t: type) -> bool:
    numpy = _MODULES.get("numpy")
    kinds = (getattr(numpy, "generic", None), getattr(numpy, "ndarray", None))
    return any(isinstance(kind, type) and issubclass(t, kind) for kind in kinds)


_FLOATS = {"nan": float("nan"), "inf": float("inf"), "-inf": -float("inf")}


__all__ = ["MAX_DEPTH", "Unsupported", "WireError", "decode", "encode", "to_json"]

# The tags whose body is a list of encoded members.
_SEQUENCES = ("$t", "$c", "$s", "$fs")


Proxy = Callable[[int, str], Any]


def decode(data: Any, proxy: Proxy | None = None, depth: int = 0, rich: bool = False) -> Any:
    """Wire data back to a value. Total over anything `json.loads` returns: malformed
    data raises `WireError` and nothing else (the data may come from the program, and
    a grader that crashed on it would let the program choose its own fate)."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    t = type(data)
    if data is None or t is bool or t is int or t is str or t is float:
        return data

    def sub(v: Any) -> Any:
        return decode(v, proxy, depth + 1, rich)

    if t is list:
        return [sub(v) for v in data]
    if t is not dict:
        raise WireError(f"bad wire value of type {t.__name__}")
    if len(data) == 1 or (len(data) == 2 and "$h" in data):
        key = next(iter(data)) if "$h" not in data else "$h"
        if type(key) is str and key.startswith("$"):
            if key == "$r" and rich:
                return rich_values.decode(data[key], sub)
            return _decode_tagged(key, data, proxy, sub)
    return {_key(k): sub(v) for k, v in data.items()}


def _key(key: Any) -> str:
    if type(key) is not str:
        raise WireError("bad wire dict key")
    return key


def _decode_tagged(key: str, data: dict[str, Any], proxy: Proxy | None, sub: Callable[[Any], Any]) -> Any:
    body = data[key]
    if key == "$h":
        name = data.get("$type")
        if proxy is None or type(body) is not int:
            raise WireError("bad wire handle")
        return proxy(body, name[:100] if type(name) is str else "object")
    if key == "$f":
        if type(body) is not str or body not in _FLOATS:
            raise WireError("bad wire float")
        return _FLOATS[body]
    if key == "$b":
        return _bytes(body)
    if type(body) is not list:
        raise WireError(f"bad wire body for {key[:20]!r}")
    if key == "$d":
        return _dict(body, sub)
    if key not in _SEQUENCES:
        raise WireError(f"bad wire tag {key[:20]!r}")
    items = [sub(v) for v in body]
    if key == "$c":
        return _complex(items)
    if key == "$t":
        return tuple(items)
    return _hashed(set if key == "$s" else frozenset, items, items)


def _base64() -> ModuleType:
    # Imported on first use: at the top, `base64` (with binascii and zlib, 10 mappings)
    # would be in the zygote, and so copied and torn down with every job it forks,
    # for the few values that are bytes.
    import base64

    return base64


def _bytes(body: Any) -> bytes:
    if type(body) is not str:
        raise WireError("bad wire bytes")
    try:
        decoded: bytes = _base64().b64decode(body, validate=True)
        return decoded
    except ValueError:  # binascii.Error, and non-ASCII text
        raise WireError("bad wire bytes") from None


def _complex(parts: list[Any]) -> complex:
    # Exactly two floats, as `encode` writes them: an int part could be too large for
    # a float, which is how a forged record once crashed the grader.
    if len(parts) != 2 or type(parts[0]) is not float or type(parts[1]) is not float:
        raise WireError("bad wire complex")
    return complex(parts[0], parts[1])


def _dict(body: list[Any], sub: Callable[[Any], Any]) -> Any:
    if not all(type(pair) is list and len(pair) == 2 for pair in body):
        raise WireError("bad wire dict entry")
    pairs = [(sub(k), sub(v)) for k, v in body]
    return _hashed(dict, pairs, [k for k, _ in pairs])


def _hashed(build: Callable[[list[Any]], Any], items: list[Any], keys: list[Any]) -> Any:
    """`build(items)` for a set, frozenset or dict with these members or `keys`. An
    unhashable one (a list, or a tuple holding one) is malformed data, and so are many
    with one hash: inserting n of those costs n**2 probes (ints with equal hashes are
    easy to make, multiples of 2**61 - 1), which the decoding side would pay for."""
    try:
        if len(keys) > MAX_SHARED_HASH:
            shares: dict[int, int] = {}
            for key in keys:
                h = hash(key)
                shares[h] = shares.get(h, 0) + 1
                if shares[h] > MAX_SHARED_HASH:
                    raise WireError("too many members of a wire set or dict share a hash")
        return build(items)
    except TypeError:
        raise WireError("unhashable member in a wire set or dict") from None


def to_json(value: Any) -> Any:
    """A decoded value as the JSON a data set's `outputs` would hold (tuples become
    lists); anything JSON cannot hold raises `Unsupported`."""
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return value
    if t is float:
        if not isfinite(value):
            raise Unsupported("non-finite float")
        return value
    if t is list or t is tuple:
        return [to_json(v) for v in value]
    if t is dict and all(type(k) is str for k in value):
        return {k: to_json(v) for k, v in value.items()}
    raise Unsupported(f"not JSON data: {t.__name__}")
