"""pandas `DataFrame` and `Series` on split mode's wire (`rich`): columns as plain
lists with their dtype's name, an index as a range or as plain values, rebuilt by
the receiving side's own pandas. Only the dtypes listed here; a frame with any other
(categories, datetimes, a MultiIndex) stays a handle, as before.

Imported only where a frame crosses, and never imports the rest of the runner: what
it cannot build raises ValueError, which `rich.decode` reports as `WireError`.
"""

from __future__ import annotations

from builtins import enumerate, int, len, list, str, type, zip  # noqa: UP029  (see `wire`)
from collections.abc import Callable
from typing import Any

DTYPES = frozenset(
    {
        *(f"{sign}int{bits}" for sign in ("", "u") for bits in (8, 16, 32, 64)),
        "float32",
        "float64",
        "complex128",
        "bool",
        "object",
        "str",
        "string",
    }
)
MAX_COLUMNS = 100_000


def encode(value: Any, t: type, sub: Callable[[Any], Any]) -> Any:
    """The body of a frame's `$r` tag, or None where it is not one of the types and
    dtypes above."""
    import pandas  # type: ignore[import-untyped]

    if t is pandas.Series:
        index, dtype = _index(value.index, sub), str(value.dtype)
        if index is None or dtype not in DTYPES or not _label(value.name):
            return None
        return ["series", [sub(value.name), index, dtype, sub(value.tolist())]]
    if t is pandas.DataFrame:
        index, columns = _index(value.index, sub), _index(value.columns, sub)
        dtypes = [str(d) for d in value.dtypes]
        if index is None or columns is None or not all(d in DTYPES for d in dtypes):
            return None
        data = [sub(value.iloc[:, i].tolist()) for i in range(len(dtypes))]
        return ["df", [index, columns, dtypes, data]]
    return None


def _label(name: Any) -> bool:
    return name is None or type(name) is str or type(name) is int


def _index(index: Any, sub: Callable[[Any], Any]) -> Any:
    import pandas

    if not _label(index.name):
        return None
    if type(index) is pandas.RangeIndex:
        return ["range", [index.start, index.stop, index.step], index.name]
    dtype = str(index.dtype)
    if type(index) is not pandas.Index or dtype not in DTYPES:
        return None
    return ["index", dtype, sub(index.tolist()), index.name]


def decode(body: Any, sub: Callable[[Any], Any]) -> Any:
    import pandas

    if type(body) is not list or len(body) != 2 or type(body[1]) is not list:
        raise ValueError("bad frame")
    kind, parts = body
    if kind == "series" and len(parts) == 4:
        name, index, dtype, values = parts
        return pandas.Series(_values(values, dtype, sub), index=_build_index(index, sub), name=_name(sub(name)))
    if kind == "df" and len(parts) == 4:
        index, columns, dtypes, data = parts
        if type(dtypes) is not list or type(data) is not list or len(dtypes) != len(data) or len(data) > MAX_COLUMNS:
            raise ValueError("bad frame columns")
        arrays = {i: _values(values, dtype, sub) for i, (values, dtype) in enumerate(zip(data, dtypes, strict=True))}
        frame = pandas.DataFrame(arrays, index=_build_index(index, sub))
        frame.columns = _build_index(columns, sub)
        return frame
    raise ValueError("bad frame kind")


def _values(values: Any, dtype: Any, sub: Callable[[Any], Any]) -> Any:
    import pandas

    if type(dtype) is not str or dtype not in DTYPES:
        raise ValueError("bad frame dtype")
    items = sub(values)
    if type(items) is not list:
        raise ValueError("bad frame values")
    return pandas.array(items, dtype=dtype)


def _name(name: Any) -> Any:
    if not _label(name):
        raise ValueError("bad frame name")
    return name


def _build_index(body: Any, sub: Callable[[Any], Any]) -> Any:
    import pandas

    if type(body) is not list or len(body) not in (3, 4):
        raise ValueError("bad frame index")
    if body[0] == "range" and len(body) == 3 and type(body[1]) is list and len(body[1]) == 3:
        if not all(type(n) is int for n in body[1]):
            raise ValueError("bad frame range")
        return pandas.RangeIndex(*body[1], name=_name(body[2]))
    if body[0] == "index" and len(body) == 4:
        return pandas.Index(_values(body[2], body[1], sub), name=_name(body[3]))
    raise ValueError("bad frame index")
