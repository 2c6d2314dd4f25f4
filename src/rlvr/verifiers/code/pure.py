"""The grader's half of an assert run as values: the assert's expression, with the one
call of the program in it replaced by the plain value that call returned, evaluated
here by a small interpreter of pure operations.

What it evaluates is fixed when the tests are prepared (`judged`), from the test's own
source, which is trusted; only the value comes from the program, decoded from the wire
as plain data (numbers, strings, lists, tuples, dicts, sets, None). There is no name
lookup, attribute or subscript of anything but plain data, and no program code: an
`__eq__` that lies cannot reach here. Operations whose cost grows with their operands'
values (powers, repeating a sequence) are bounded; past the bounds, or on any
exception, the assert fails, as the check's own assert would fail or the job would
time out.

The shapes keep the meaning the same assert has when the program half of a split job
answers it:

- The value may meet comparisons, arithmetic, `not`, `abs`, `round`, a subscript, or a
  function that consumes the whole of one iterable in order (`tuple`, `list`, `set`,
  `frozenset`, `sorted`, `sum`, `min`, `max`). For the last, the job returns the items
  (`[*call]`), as split mode iterates the program's object; a generator then passes as
  it would there. Not `any` or `all`, which may stop early and leave the rest of an
  iterator the program keeps.
- Not `len`, `str`, `int`, `float` or `bool` of the value: split mode asks the
  program's own object for those, which values mode cannot do.
- The call is one Python always makes when the assert passes: not after the first
  operand of `and`/`or`, nor after the second of a chained comparison. Its arguments
  name nothing (constants, displays and operators), since the job evaluates them among
  the program's names.
- No `%` formatting: a format string's widths would let the value size the result.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable
from typing import Any

MAX_ITEMS = 1_000_000  # a repeated sequence
MAX_POWER_BITS = 100_000  # an int power's result
MAX_ROUND_DIGITS = 10_000  # round()'s ndigits: round(7, -10**9) computes 10**(10**9)
MAX_SHARED_HASH = 32  # members of a set built here that share a hash (n**2 probes)


def _round(number: Any, ndigits: Any = None) -> Any:
    if type(ndigits) is int and abs(ndigits) > MAX_ROUND_DIGITS:
        raise OverflowError("ndigits too large to judge")
    return round(number) if ndigits is None else round(number, ndigits)


def _few_shared_hashes(items: Iterable[Any]) -> list[Any]:
    """`items`, as long as at most MAX_SHARED_HASH distinct ones share a hash: a set
    of n such members costs n**2 probes. Copies of one member are fine."""
    listed = list(items)
    distinct: dict[int, list[Any]] = {}
    for item in listed:
        same_hash = distinct.setdefault(hash(item), [])
        if not any(member is item or member == item for member in same_hash):
            same_hash.append(item)
            if len(same_hash) > MAX_SHARED_HASH:
                raise OverflowError("too many members share a hash to judge")
    return listed


def _set(items: Iterable[Any] = ()) -> set[Any]:
    return set(_few_shared_hashes(items))


def _frozenset(items: Iterable[Any] = ()) -> frozenset[Any]:
    return frozenset(_few_shared_hashes(items))


# Functions a judged expression may call, by name, on plain data.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": _round,
    "len": len,
    "bool": bool,
    "int": int,
    "float": float,
    "str": str,
    "tuple": tuple,
    "list": list,
    "set": _set,
    "frozenset": _frozenset,
    "sorted": sorted,
    "sum": sum,
    "min": min,
    "max": max,
}
# Those that take one iterable and consume it once, in order: the value meets them as
# its items.
CONSUMERS = frozenset(("tuple", "list", "set", "frozenset", "sorted", "sum", "min", "max"))
# Those the value may meet itself: on anything but plain data they fail in both modes.
ON_VALUE = frozenset(("abs", "round"))

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_SINGLETONS = (True, False, None)


class Unsupported(Exception):
    """A shape this module does not evaluate: the assert stays a split test."""


class Judged:
    """An assert's expression with the program's call in it; `holds(value)` is the
    assert's verdict when that call returned `value`."""

    __slots__ = ("_source", "call", "tree")

    def __init__(self, tree: ast.expr, call: ast.Call) -> None:
        self.tree, self.call, self._source = tree, call, ""

    @property
    def source(self) -> str:
        """The assert's expression, as Python writes it (made when first asked for)."""
        if not self._source:
            self._source = ast.unparse(self.tree)
        return self._source

    def holds(self, value: Any) -> bool:
        try:
            return bool(_eval(self.tree, self.call, value))
        except Exception:
            return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Judged) and self.source == other.source

    def __hash__(self) -> int:
        return hash(self.source)

    def __repr__(self) -> str:
        return f"Judged({self.source!r})"


def judged(test: ast.expr, is_call: Callable[[ast.Call], bool]) -> tuple[ast.Call, bool, Judged]:
    """The one call of the program in an assert's expression (a call for which
    `is_call` holds), whether the job must return that call's items, and the assert
    as a `Judged`. Raises `Unsupported` for any other shape. `test` is not changed."""
    found: list[_Found] = []
    _find_calls(test, is_call, found, None, False)
    if len(found) != 1:
        raise Unsupported("not exactly one call of the program")
    call, parent, conditional = found[0]
    if conditional:
        raise Unsupported("a call Python may skip")
    items = _wants_items(call, parent)
    _check(test, call)
    return call, items, Judged(test, call)


def constant(node: ast.expr) -> bool:
    """Whether `node` is an argument the job may evaluate for a call: constants,
    displays and operators, naming nothing (the job evaluates it among the program's
    names, which could stand for anything)."""
    if any(isinstance(child, (ast.Name, ast.Call)) for child in ast.walk(node)):
        return False
    try:
        _check(node, None)
    except Unsupported:
        return False
    return True


# A call of the program, the node it sits in, and whether Python may skip it.
_Found = tuple[ast.Call, ast.AST | None, bool]


def _find_calls(
    node: ast.AST, is_call: Callable[[ast.Call], bool], found: list[_Found], parent: ast.AST | None, conditional: bool
) -> None:
    """The program's calls under `node`. A call is `conditional` where it follows the
    first operand of `and`/`or` or the second of a chained comparison."""
    if isinstance(node, ast.Call) and is_call(node):
        found.append((node, parent, conditional))
        return
    children: list[tuple[ast.AST, bool]]
    if isinstance(node, ast.BoolOp):
        children = [(child, index > 0) for index, child in enumerate(node.values)]
    elif isinstance(node, ast.Compare):
        children = [(node.left, False), *((child, index > 0) for index, child in enumerate(node.comparators))]
    else:
        children = [(child, False) for child in ast.iter_child_nodes(node)]
    for child, skippable in children:
        _find_calls(child, is_call, found, node, conditional or skippable)


def _wants_items(call: ast.Call, parent: ast.AST | None) -> bool:
    """Whether the program's value goes into a function that consumes it as an
    iterable; raises `Unsupported` where the value is an argument of any other
    function than those of `ON_VALUE` (or a keyword argument of any)."""
    if isinstance(parent, ast.keyword):
        raise Unsupported("the program's value as a keyword argument")
    if not isinstance(parent, ast.Call):
        return False
    name = parent.func.id if isinstance(parent.func, ast.Name) else None
    if name in CONSUMERS and parent.args == [call] and not parent.keywords:
        return True
    if name in ON_VALUE and parent.args[:1] == [call]:
        return False
    raise Unsupported(f"the program's value in {name}()")


def _check(node: ast.AST, call: ast.Call | None) -> None:
    """Raise `Unsupported` unless every node but the program's `call` is one `_eval`
    takes."""
    todo = [node]
    while todo:
        child = todo.pop()
        if child is call:
            continue
        _check_one(child)
        todo.extend(ast.iter_child_nodes(child))


def _check_one(child: ast.AST) -> None:
    if isinstance(child, ast.Name):
        if child.id not in FUNCTIONS:
            raise Unsupported(f"name {child.id}")
    elif isinstance(child, ast.Call):
        if not (isinstance(child.func, ast.Name) and child.func.id in FUNCTIONS):
            raise Unsupported("call")
        if any(k.arg is None for k in child.keywords) or any(isinstance(a, ast.Starred) for a in child.args):
            raise Unsupported("unpacking")
    elif isinstance(child, ast.Compare):
        if any(type(op) not in _COMPARE for op in child.ops):
            raise Unsupported("comparison")
        for op, right in zip(child.ops, child.comparators, strict=True):
            singleton = isinstance(right, ast.Constant) and any(right.value is s for s in _SINGLETONS)
            if type(op) in (ast.Is, ast.IsNot) and not singleton:
                raise Unsupported("`is` other than with True, False or None")
    elif isinstance(child, ast.BinOp):
        if type(child.op) not in _BINARY:
            raise Unsupported("operator")
        if isinstance(child.op, ast.Mod) and isinstance(child.left, ast.Constant):
            if isinstance(child.left.value, (str, bytes)):
                raise Unsupported("% formatting")
    elif isinstance(child, ast.UnaryOp):
        if type(child.op) not in _UNARY:
            raise Unsupported("operator")
    elif isinstance(child, ast.Dict):
        if any(key is None for key in child.keys):
            raise Unsupported("unpacking")
    elif not isinstance(child, _NODES):
        raise Unsupported(type(child).__name__)


_NODES = (
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.Subscript,
    ast.Slice,
    ast.keyword,
    ast.Load,
    ast.expr_context,
    ast.cmpop,
    ast.operator,
    ast.unaryop,
)


def _eval(node: ast.AST, call: ast.Call, value: Any) -> Any:
    if node is call:
        return value
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return FUNCTIONS[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(_eval(e, call, value) for e in node.elts)
    if isinstance(node, ast.List):
        return [_eval(e, call, value) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_eval(e, call, value) for e in node.elts}
    if isinstance(node, ast.Dict):
        return {_eval(k, call, value): _eval(v, call, value) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, call, value))
    if isinstance(node, ast.BinOp):
        return _binary(type(node.op), _eval(node.left, call, value), _eval(node.right, call, value))
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, call, value)
    if isinstance(node, ast.Compare):
        return _compare(node, call, value)
    if isinstance(node, ast.Call):
        fn = FUNCTIONS[node.func.id]  # type: ignore[attr-defined]
        kwargs = {str(k.arg): _eval(k.value, call, value) for k in node.keywords}  # `_check` refused **kwargs
        return fn(*(_eval(a, call, value) for a in node.args), **kwargs)
    if isinstance(node, ast.Subscript):
        return _eval(node.value, call, value)[_eval(node.slice, call, value)]
    if isinstance(node, ast.Slice):
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else _eval(p, call, value) for p in parts))
    raise Unsupported(type(node).__name__)


def _binary(op: type[ast.operator], left: Any, right: Any) -> Any:
    if op is ast.Mod and isinstance(left, (str, bytes)):
        raise TypeError("formatting is not judged")
    if op is ast.Pow and type(left) is int and type(right) is int and right > 0:
        if left.bit_length() * right > MAX_POWER_BITS:
            raise OverflowError("power too large to judge")
    if op is ast.Mult:
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes, list, tuple)) and type(times) is int and len(seq) * times > MAX_ITEMS:
                raise OverflowError("sequence too long to judge")
    return _BINARY[op](left, right)


def _bool_op(node: ast.BoolOp, call: ast.Call, value: Any) -> Any:
    result: Any = None
    for operand in node.values:
        result = _eval(operand, call, value)
        if bool(result) is isinstance(node.op, ast.Or):
            return result
    return result


def _compare(node: ast.Compare, call: ast.Call, value: Any) -> bool:
    left = _eval(node.left, call, value)
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        right = _eval(right_node, call, value)
        if not _COMPARE[type(op)](left, right):
            return False
        left = right
    return True
