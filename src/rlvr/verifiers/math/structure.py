"""The shape of an answer: a value, a list or set, a tuple, an interval or union, a
matrix, or a relation.

Only the *outer* structure is read here (delimiters, top-level separators, relation
operators), so each element can take the cheap numeric path on its own; the LaTeX
inside an element is parsed by latex2sympy, never by this module.

`(a, b)` is ambiguous (open interval or ordered pair); it parses as an open interval
and compares equal to a 2-tuple elementwise, so either reading works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

MAX_ITEMS = 64
MAX_DEPTH = 6


@dataclass(frozen=True, slots=True)
class Scalar:
    text: str
    # The name in front of an assignment (`y` of `y = 2x + 1`), kept so the value can
    # still be read as an equation when the other side is one.
    label: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Seq:
    kind: str  # "list" (bare separators), "set" (`\{...\}`), "tuple" (parentheses, ordered)
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Interval:
    lo: Scalar
    hi: Scalar
    lo_closed: bool
    hi_closed: bool


@dataclass(frozen=True, slots=True)
class Union:
    parts: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Matrix:
    rows: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True, slots=True)
class Relation:
    """A relation that is not an assignment or interval: `x^2+y^2=1`, `2x-y+1=0`."""

    lhs: str
    op: str
    rhs: str


Node = Scalar | Seq | Interval | Union | Matrix | Relation

_OPEN = "([{"
_CLOSE = ")]}"
_MATRIX_RE = re.compile(r"^\\begin\{([pbBvV]?matrix|smallmatrix|array)\}(.*)\\end\{\1\}$", re.DOTALL)
_ARRAY_SPEC_RE = re.compile(r"^\{[lcr|]*\}")
_THOUSANDS_RE = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_IDENT_RE = re.compile(r"^(?!\\infty)(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?[a-zA-Z0-9]+\}?)?(?:'|\([a-z]\))?$")
# Relation operators, longest first; `\le` must not match the start of `\left`.
# What names a value in front of `=`: a tuple of names `(p,q)`,
# a function at a point `f(3)`, a length `|AB|`, a segment `AB`, an angle `\angle ABC`.
# Never a general expression: a gold `x^2+y^2=1` must stay an equation.
_LABEL_RE = re.compile(
    r"^(?:\([a-zA-Z](?:,[a-zA-Z])+\)|[a-zA-Z](?:\^\{?-1\}?)?\([a-zA-Z0-9+\-]{1,6}\)"
    r"|\|[A-Z]{1,3}\||[A-Z]{2,3}|(?:m)?\\angle ?[A-Z]{1,3}"
    # Ratios of named quantities: `\frac{NO}{BO}`, `A:B`, `V_{1}:V_{2}`.
    r"|\\frac\{[A-Z]{1,3}\}\{[A-Z]{1,3}\}|(?:[A-Za-z](?:_\{?[A-Za-z0-9]{1,4}\}?)?|[A-Z]{1,4}):"
    r"(?:[A-Za-z](?:_\{?[A-Za-z0-9]{1,4}\}?)?|[A-Z]{1,4}))$"
)
_REL_RE = re.compile(r"\\(?:le|ge|ne|approx)(?![a-zA-Z])|<|>|=")
_REL_CANON = {"\\le": "<=", "\\ge": ">=", "\\ne": "!=", "\\approx": "="}
_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}


class TooDeep(ValueError):
    """Nesting beyond what any answer needs."""


def max_nesting(s: str) -> int:
    depth = best = 0
    for ch in s:
        if ch in _OPEN:
            depth += 1
            best = max(best, depth)
        elif ch in _CLOSE:
            depth = max(depth - 1, 0)
    return best


def _bracket_step(s: str, i: int) -> tuple[int, int]:
    """How the bracket at `i` changes the depth, and how many characters it takes.

    `(`/`[` both open and `)`/`]` both close, so half-open intervals `[1, 2)` count as
    one group; an escaped brace `\\{`/`\\}` is a bracket too (set delimiters).
    """
    ch = s[i]
    if ch == "\\" and i + 1 < len(s) and s[i + 1] in "{}":
        return (1 if s[i + 1] == "{" else -1), 2
    if ch in _OPEN:
        return 1, 1
    if ch in _CLOSE:
        return -1, 1
    return 0, 1


def _separator_at(s: str, i: int, seps: tuple[str, ...]) -> str | None:
    for sep in seps:
        after = s[i + len(sep) : i + len(sep) + 1]
        # `\le` is no separator at the start of `\left`.
        if s.startswith(sep, i) and not (sep[0] == "\\" and after.isalpha()):
            return sep
    return None


def _split_top(s: str, seps: tuple[str, ...]) -> list[str]:
    """Split on separators that are outside every bracket pair."""
    parts: list[str] = []
    depth = 0
    start = i = 0
    while i < len(s):
        change, width = _bracket_step(s, i)
        sep = _separator_at(s, i, seps) if depth == 0 and change == 0 else None
        if sep is not None:
            parts.append(s[start:i])
            i += len(sep)
            start = i
            continue
        depth += change
        i += width
    parts.append(s[start:])
    return [p.strip() for p in parts]


def _group_end(s: str, open_at: int, open_len: int, close: tuple[str, ...]) -> int:
    """Index just past the delimiter closing the group opened at `open_at`, or -1."""
    depth = 0
    i = open_at + open_len
    while i < len(s):
        if depth == 0:
            for c in close:
                if s.startswith(c, i):
                    return i + len(c)
        change, width = _bracket_step(s, i)
        depth += change
        if depth < 0 and s[i] in _CLOSE:
            return -1
        i += width
    return -1


def _wrapped(s: str) -> tuple[str, str, str] | None:
    """(open, inner, close) when one delimiter pair encloses the whole string."""
    if s.startswith("\\{"):
        end = _group_end(s, 0, 2, ("\\}",))
        return ("\\{", s[2:-2], "\\}") if end == len(s) else None
    if s.startswith("{") and "," in s:
        # `{1,2,3}`: a set written without escaping its braces (TeX would drop them).
        end = _group_end(s, 0, 1, ("}",))
        return ("\\{", s[1:-1], "\\}") if end == len(s) else None
    if s.startswith("\\langle"):
        end = _group_end(s, 0, 7, ("\\rangle",))
        return ("(", s[7:-7], ")") if end == len(s) else None
    if s and s[0] in "([":
        end = _group_end(s, 0, 1, (")", "]"))
        return (s[0], s[1:-1], s[-1]) if end == len(s) else None
    return None


def _items(inner: str, depth: int) -> tuple[Node, ...]:
    parts = _split_top(inner, (",", ";"))
    if len(parts) > MAX_ITEMS:
        raise TooDeep(f"more than {MAX_ITEMS} items")
    return tuple(parse(p, depth + 1) for p in parts if p)


def _matrix(body: str, env: str, depth: int) -> Matrix:
    if env == "array":
        body = _ARRAY_SPEC_RE.sub("", body.strip())
    rows = [r for r in (row.strip() for row in body.split("\\\\")) if r]
    if len(rows) > MAX_ITEMS:
        raise TooDeep("matrix too large")
    cells = tuple(tuple(parse(c.strip(), depth + 1) for c in row.split("&")) for row in rows)
    return Matrix(cells)


def _relation(s: str, depth: int) -> Node | None:
    ops = list(_REL_RE.finditer(s))
    if not ops:
        return None
    # Operators inside brackets belong to an element (`\{x | x>1\}` is rare; leave it whole).
    pieces = _split_top(s, ("\\le", "\\ge", "\\ne", "\\approx", "<", ">", "="))
    if len(pieces) != len(ops) + 1 or not all(pieces):
        return None
    canon = [_REL_CANON.get(m.group(0), m.group(0)) for m in ops]
    if any(m.group(0) == "\\approx" for m in ops) and set(canon) == {"="}:
        # `\sqrt{2} \approx 1.414`: the exact value comes first; the rounding is commentary.
        values = [p for p in pieces if not _IDENT_RE.match(p)]
        return parse(values[0], depth + 1) if values else None
    if all(op == "=" for op in canon):
        # `x = 3`, `y = 2x + 1`, `x = y = 3`: the value is the last side; the names
        # before it are labels.
        if all(_is_label(p) for p in pieces[:-1]):
            value = parse(pieces[-1], depth + 1)
            return replace(value, label=pieces[-2]) if isinstance(value, Scalar) else value
        if len(pieces) == 2:
            return Relation(pieces[0], "=", pieces[1])
        return None
    return _inequality(pieces, canon)


def _is_label(s: str) -> bool:
    return _IDENT_RE.match(s) is not None or _LABEL_RE.match(s) is not None


def _membership(s: str, depth: int) -> Node | None:
    """`x \\in [-2, 7]` is the set it names."""
    pieces = _split_top(s, ("\\in",))
    if len(pieces) == 2 and _is_label(pieces[0]) and pieces[1]:
        return parse(pieces[1], depth + 1)
    return None


def _inequality(pieces: list[str], ops: list[str]) -> Node | None:
    """A chain like `1 < x \\le 2` or `x > 3` as an interval, when it is one."""
    if "=" in ops or "!=" in ops:
        return None
    var = [i for i, p in enumerate(pieces) if _IDENT_RE.match(p)]
    if len(var) != 1:
        return Relation(pieces[0], ops[0], pieces[1]) if len(pieces) == 2 else None
    k = var[0]
    lo: Scalar = Scalar("-\\infty")
    hi: Scalar = Scalar("\\infty")
    lo_closed = hi_closed = False
    # Read each comparison with the variable on the left: `x op bound`.
    if k > 0:
        op = _FLIP[ops[k - 1]]
        bound = Scalar(pieces[k - 1])
        if op.startswith(">"):
            lo, lo_closed = bound, op == ">="
        else:
            hi, hi_closed = bound, op == "<="
    if k < len(ops):
        op = ops[k]
        bound = Scalar(pieces[k + 1])
        if op.startswith(">"):
            lo, lo_closed = bound, op == ">="
        else:
            hi, hi_closed = bound, op == "<="
    if len(pieces) > 3:
        return None
    return Interval(lo, hi, lo_closed, hi_closed)


def parse(s: str, depth: int = 0) -> Node:
    if depth > MAX_DEPTH:
        raise TooDeep("answer nested too deeply")
    s = s.strip()
    m = _MATRIX_RE.match(s)
    if m is not None and "\\end{" not in m.group(2):  # not `A + B`, two matrices
        return _matrix(m.group(2), m.group(1), depth)

    alternatives = _split_top(s, ("\\lor",))
    if len(alternatives) > 1:
        nodes = tuple(parse(a, depth + 1) for a in alternatives if a)
        if all(isinstance(n, Interval) for n in nodes):
            return Union(nodes)
        # `21, 16 or 11` lists three values, not a list and a value.
        flat = (i for n in nodes for i in (n.items if isinstance(n, Seq) and n.kind == "list" else (n,)))
        return Seq("list", tuple(flat))
    pieces = _split_top(s, ("\\cup",))
    if len(pieces) > 1:
        return Union(tuple(parse(p, depth + 1) for p in pieces if p))
    if not _THOUSANDS_RE.match(s):
        groups = _split_top(s, (";",))
        if len(groups) > 1 and any(len(_split_top(g, (",",))) > 1 for g in groups):
            # `p=5,q=2; p=7,q=2`: semicolons separate solutions, commas their parts.
            if len(groups) > MAX_ITEMS:
                raise TooDeep(f"more than {MAX_ITEMS} items")
            return Seq("list", tuple(_solution(g, depth + 1) for g in groups if g))
        parts = _split_top(s, (",", ";"))
        if len(parts) > 1:
            if len(parts) > MAX_ITEMS:
                raise TooDeep(f"more than {MAX_ITEMS} items")
            return Seq("list", _list_items(parts, depth))

    wrapped = _wrapped(s)
    if wrapped is not None:
        open_, inner, close = wrapped
        if open_ == "\\{":
            return Seq("set", _items(inner, depth) if inner.strip() else ())
        items = _items(inner, depth)
        if len(items) == 2 and all(isinstance(i, Scalar) for i in items):
            lo, hi = items
            assert isinstance(lo, Scalar) and isinstance(hi, Scalar)
            return Interval(lo, hi, open_ == "[", close == "]")
        if len(items) == 1 and ((open_ == "(" and close == ")") or isinstance(items[0], Matrix)):
            return items[0]  # `\\left[\\begin{array}...\\end{array}\\right]` is the matrix
        return Seq("tuple", items)

    rel = _membership(s, depth) or _relation(s, depth)
    if rel is not None:
        return rel
    if s.count("\\pm") == 1:
        plus, minus = s.replace("\\pm", "+"), s.replace("\\pm", "-")
        return Seq("list", (Scalar(_tidy_sign(plus)), Scalar(_tidy_sign(minus))))
    return Scalar(s)


def _list_items(parts: list[str], depth: int) -> tuple[Node, ...]:
    """The items of a list; `\\pm 1, \\pm 7` is the four values -1, 1, -7, 7."""
    items: list[Node] = []
    for part in parts:
        if not part:
            continue
        node = parse(part, depth + 1)
        if isinstance(node, Seq) and node.kind == "list" and "\\pm" in part:
            items.extend(node.items)
        else:
            items.append(node)
    return tuple(items)


def _solution(group: str, depth: int) -> Node:
    """One solution of several (`p=5,q=2`): its parts in order, as a point."""
    node = parse(group, depth)
    return Seq("tuple", node.items) if isinstance(node, Seq) and node.kind == "list" else node


def _tidy_sign(s: str) -> str:
    return s[1:] if s.startswith("+") else s
