"""Exact-type encoding of plain Python data as JSON, and back.

Only exact built-in types pass (checked with `type(x) is ...`, never `isinstance`), so
a subclass with a custom `__eq__`, an object whose `__repr__` lies, or a proxy arrives
on the other side as an opaque handle (or is refused), never as a value that compares
equal. Decoding builds only built-in containers and scalars from `json.loads` output:
nothing from the untrusted side can run code in the decoder's process.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64


class Unsupported(TypeError):
    """A value that is not plain data (and no handle table was given)."""


def encode(value: Any, handle: Callable[[Any], int] | None = None, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise Unsupported("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return value
    if t is float:
        return value if math.isfinite(value) else {"$f": repr(value)}
    if t is list:
        return [encode(v, handle, depth + 1) for v in value]
    if t is tuple:
        return {"$t": [encode(v, handle, depth + 1) for v in value]}
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: encode(v, handle, depth + 1) for k, v in value.items()}
        return {"$d": [[encode(k, handle, depth + 1), encode(v, handle, depth + 1)] for k, v in value.items()]}
    if t is set or t is frozenset:
        return {"$s" if t is set else "$fs": [encode(v, handle, depth + 1) for v in value]}
    if t is bytes:
        return {"$b": base64.b64encode(value).decode()}
    if t is complex:
        return {"$c": [encode(value.real, None, depth + 1), encode(value.imag, None, depth + 1)]}
    if handle is None:
        raise Unsupported(f"not plain data: {t.__name__}")
    return {"$h": handle(value), "$type": t.__name__[:100]}


_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def decode(data: Any, proxy: Callable[[int, str], Any] | None = None, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    t = type(data)
    if data is None or t is bool or t is int or t is str or t is float:
        return data
    if t is list:
        return [decode(v, proxy, depth + 1) for v in data]
    if t is not dict:
        raise ValueError(f"bad wire value of type {t.__name__}")
    if len(data) == 1 or (len(data) == 2 and "$h" in data):
        key = next(iter(data)) if "$h" not in data else "$h"
        if key.startswith("$"):
            return _decode_tagged(key, data, proxy, depth)
    return {k: decode(v, proxy, depth + 1) for k, v in data.items()}


def _decode_tagged(key: str, data: dict[str, Any], proxy: Callable[[int, str], Any] | None, depth: int) -> Any:
    body = data[key]
    if key == "$f" and body in _FLOATS:
        return _FLOATS[body]
    if key == "$t":
        return tuple(decode(v, proxy, depth + 1) for v in body)
    if key == "$s":
        return {decode(v, proxy, depth + 1) for v in body}
    if key == "$fs":
        return frozenset(decode(v, proxy, depth + 1) for v in body)
    if key == "$d":
        return {decode(k, proxy, depth + 1): decode(v, proxy, depth + 1) for k, v in body}
    if key == "$b" and type(body) is str:
        return base64.b64decode(body)
    if key == "$c":
        return complex(float(body[0]), float(body[1]))
    if key == "$h" and proxy is not None and type(body) is int:
        return proxy(body, str(data.get("$type", "object")))
    raise ValueError(f"bad wire tag {key}")


def to_json(value: Any) -> Any:
    """A decoded value as the JSON a data set's `outputs` would hold (tuples become
    lists); anything JSON cannot hold raises `Unsupported`."""
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return value
    if t is float:
        if not math.isfinite(value):
            raise Unsupported("non-finite float")
        return value
    if t is list or t is tuple:
        return [to_json(v) for v in value]
    if t is dict and all(type(k) is str for k in value):
        return {k: to_json(v) for k, v in value.items()}
    raise Unsupported(f"not JSON data: {t.__name__}")
