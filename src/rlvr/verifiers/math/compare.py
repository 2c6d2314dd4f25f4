"""Deciding whether one extracted answer equals the ground truth, cheapest stage first.

1. `string`: the normalised strings are equal (or, for word answers, equal ignoring case).
2. `numeric`: both sides are plain numbers (`numeric.py`): no sympy.
3. `structure`: lists, sets, tuples, intervals, unions and matrices compare by shape,
   each element taking stage 2 or 4 on its own.
4. `symbolic`: latex2sympy and bounded equality (`symbolic.py`).

`details["stage"]` reports the most expensive stage that was needed.

Candidate lists: when the ground truth is a single value, a final answer that lists
several different values (`3, 4`, `3 \\text{ or } 4`, `\\pm 2`) is a hedge and is
incorrect even if one of them is right. When the ground truth is a list or set,
order does not matter; when it is a tuple or point, order does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import sympy

from rlvr.verifiers.math import numeric, structure, symbolic
from rlvr.verifiers.math.normalize import Normalized, normalize
from rlvr.verifiers.math.numeric import Infinity, Num
from rlvr.verifiers.math.structure import Interval, Matrix, Node, Relation, Scalar, Seq, Union

SYMPY_FAILURES = (RecursionError, TypeError, AttributeError, NotImplementedError)
_STAGE_RANK = {"string": 0, "numeric": 1, "structure": 2, "symbolic": 3}
# Options run A to J (MMLU-Pro has ten); `P` is a point's name, not an option.
_CHOICE_GOLD_RE = re.compile(r"^\(?([A-J])\)?$")
_CHOICE_PRED_RE = re.compile(r"^\(([A-Za-z])\)|^([A-Za-z])$|^([A-Z])(?:[:.)]|\s)")
_OP_SIGN = {"<": 1, "<=": 1, ">": -1, ">=": -1}
_EMPTY_SETS = {"\\emptyset", "\\{\\}", "\\O"}
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
# A trig function of a bare number: `\tan 15`, `\sin(30)`; starts at the command.
_TRIG_NUMBER_RE = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)\s*\(?\s*\d+(?:\.\d+)?(?![\d.^])")
_REALS = {"\\mathbb{R}", "\\R", "(-\\infty,\\infty)"}
# A decimal comma (`1000,99`, `0,111`): one or two digits after it, or a leading zero;
# three digits (`1,000`) are a thousands separator.
_DECIMAL_COMMA_RE = re.compile(r"^[+-]?(?:\d+,\d{1,2}|0,\d+)$")


@dataclass(frozen=True, slots=True)
class View:
    """One answer, normalised and parsed into its shape."""

    raw: str
    norm: Normalized
    node: Node | None
    choice: str | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    equal: bool
    stage: str
    reason: str = ""
    pred: str = ""
    hedge: bool = False


@dataclass(slots=True)
class _Ctx:
    rel_tol: float
    numeric_tolerance: bool
    gold_pct: bool
    pred_pct: bool
    stage: str = "string"
    notes: list[str] = field(default_factory=list)
    hedge: bool = False

    def used(self, stage: str) -> None:
        if _STAGE_RANK[stage] > _STAGE_RANK[self.stage]:
            self.stage = stage


def _special(node: Node) -> Node:
    if isinstance(node, Scalar):
        if node.text in _EMPTY_SETS:
            return Seq("set", ())
        if node.text in _REALS:
            return Interval(Scalar("-\\infty"), Scalar("\\infty"), False, False)
    return node


@lru_cache(maxsize=16384)
def view(answer: str, *, gold: bool = False) -> View:
    norm = normalize(answer)
    choice = None
    if gold:
        m = _CHOICE_GOLD_RE.match(norm.text)
        choice = m.group(1) if m else None
    else:
        m = _CHOICE_PRED_RE.match(norm.text)
        if m is not None:
            choice = next(g for g in m.groups() if g is not None).upper()
    number = _NUMBER_WORDS.get(norm.text.casefold()) if norm.words else None
    if number is not None:
        # `five` is 5; only small integers, where words are usual.
        norm = Normalized(str(number), norm.percent, norm.degrees)
    elif norm.words:
        return View(answer, norm, Scalar(norm.text), choice)
    if structure.max_nesting(norm.text) > symbolic.MAX_NESTING:
        return View(answer, norm, None, choice, "answer nested too deeply")
    try:
        node = _special(structure.parse(norm.text))
    except structure.TooDeep as exc:
        return View(answer, norm, None, choice, str(exc))
    return View(answer, norm, node, choice)


def _as_sympy(text: str, num: Num | Infinity | None) -> Any:
    if isinstance(num, Infinity):
        return -sympy.oo if num.negative else sympy.oo
    if isinstance(num, Num):
        if num.exact:
            return sympy.Rational(num.value.numerator, num.value.denominator)
        # From the exact fraction, so `0.1` is 0.1 to every digit, not a double.
        return sympy.Float(sympy.Rational(num.value.numerator, num.value.denominator), symbolic.PRECISION)
    return symbolic.to_sympy(text)


def _scalars_equal(g: str, p: str, ctx: _Ctx) -> bool:
    if g == p:
        return True
    gn, pn = numeric.parse_number(g), numeric.parse_number(p)
    if gn is not None and pn is not None:
        ctx.used("numeric")
        if isinstance(gn, Num) and isinstance(pn, Num) and (ctx.gold_pct or ctx.pred_pct):
            return numeric.percent_equal(gn, pn, ctx.gold_pct, ctx.pred_pct, ctx.rel_tol, ctx.numeric_tolerance)
        return numeric.numbers_equal(gn, pn, ctx.rel_tol, ctx.numeric_tolerance)
    ctx.used("symbolic")
    try:
        a, b = _as_sympy(g, gn), _as_sympy(p, pn)
    except symbolic.Refused as exc:
        ctx.notes.append(f"refused: {exc}")
        return False
    except ValueError as exc:
        ctx.notes.append(str(exc))
        return False
    try:
        return symbolic.exprs_equal(a, b, ctx.rel_tol, ctx.numeric_tolerance)
    except SYMPY_FAILURES as exc:
        # sympy gave up on the answer's expression (`2\begin{pmatrix}1\end{pmatrix}`
        # recurses without end): an answer that cannot be evaluated is not equal.
        ctx.notes.append(f"not comparable: {type(exc).__name__}")
        return False


def _unordered(gs: tuple[Node, ...], ps: tuple[Node, ...], ctx: _Ctx) -> bool:
    """The same set of values: each gold part is answered, and each answered part is a
    gold part. A solution written twice is still one solution; a wrong extra is wrong."""
    if not gs or not ps or len(ps) > 2 * len(gs):
        return len(gs) == len(ps) == 0
    covered = [False] * len(ps)
    for g in gs:
        hits = [i for i, p in enumerate(ps) if _equal(g, p, ctx)]
        if not hits:
            return False
        for i in hits:
            covered[i] = True
    return all(covered)


def _ordered(gs: tuple[Node, ...], ps: tuple[Node, ...], ctx: _Ctx) -> bool:
    return len(gs) == len(ps) and all(_equal(g, p, ctx) for g, p in zip(gs, ps, strict=True))


def _parts(node: Node) -> tuple[Node, ...]:
    """The alternatives of a union, or of a list compared with one (`(11,7) or (7,11)`
    reads as two open intervals, the answer `(7,11), (11,7)` as a list of two)."""
    if isinstance(node, Union) or (isinstance(node, Seq) and node.kind == "list"):
        return node.parts if isinstance(node, Union) else node.items
    return (node,)


def _flat(node: Node) -> tuple[Node, ...] | None:
    """The entries of a vector-like node (tuple, open pair, one-row/one-column matrix)."""
    if isinstance(node, Seq) and node.kind in ("tuple", "list"):
        # A bare `3, 4` stands for the point `(3, 4)` when the gold is a point.
        return node.items
    if isinstance(node, Interval) and not node.lo_closed and not node.hi_closed:
        return (node.lo, node.hi)
    if isinstance(node, Matrix) and (len(node.rows) == 1 or all(len(r) == 1 for r in node.rows)):
        return tuple(c for r in node.rows for c in r)
    return None


def _relations_equal(g: Relation, p: Relation, ctx: _Ctx) -> bool:
    ctx.used("symbolic")
    if g.op != p.op and not (g.op in _OP_SIGN and p.op in _OP_SIGN):
        return False
    if g.op in _OP_SIGN and (g.op.endswith("=") != p.op.endswith("=")):
        return False
    try:
        gl, gr = symbolic.to_sympy(g.lhs), symbolic.to_sympy(g.rhs)
        pl, pr = symbolic.to_sympy(p.lhs), symbolic.to_sympy(p.rhs)
    except ValueError as exc:
        ctx.notes.append(str(exc))
        return False
    sign = 0 if g.op == "=" else _OP_SIGN[g.op] * _OP_SIGN[p.op]
    try:
        return symbolic.relations_equal(gl, gr, pl, pr, sign)
    except TypeError:
        return False


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _as_interval(r: Relation, ctx: _Ctx) -> Interval | None:
    """A linear inequality in one variable as the interval it describes (`-x > -1` is
    `(-\\infty, 1)`), so that it compares with an interval gold (`x < 1`)."""
    if r.op not in _OP_SIGN:
        return None
    ctx.used("symbolic")
    try:
        d = symbolic.to_sympy(r.lhs) - symbolic.to_sympy(r.rhs)
        (x,) = d.free_symbols
        a = sympy.diff(d, x)
        b = sympy.expand(d - a * x)
        if a.free_symbols or b.free_symbols or not a.is_real or a == 0:
            return None
        bound = sympy.nsimplify(-b / a) if b.is_Float or a.is_Float else -b / a
        op = r.op if a > 0 else _FLIPPED[r.op]
        text = sympy.latex(bound)
    except (ValueError, TypeError, symbolic.Refused):
        return None
    inf, closed = Scalar("\\infty"), op.endswith("=")
    if op.startswith("<"):
        return Interval(Scalar("-\\infty"), Scalar(text), False, closed)
    return Interval(Scalar(text), inf, closed, False)


MAX_MATRIX_CELLS = 100


def _matrix_expr_equal(g: Matrix, text: str, ctx: _Ctx) -> bool:
    """A gold matrix against an expression of matrices (`A + B`, `A B`), evaluated."""
    ctx.used("symbolic")
    shape = (len(g.rows), len(g.rows[0]) if g.rows else 0)
    if shape[0] * shape[1] > MAX_MATRIX_CELLS or any(len(r) != shape[1] for r in g.rows):
        return False
    try:
        expr = symbolic.to_sympy(text)
        if not isinstance(expr, sympy.MatrixBase | sympy.MatrixExpr) or expr.shape != shape:
            return False
        value = expr.as_explicit()
        cells = [[_as_sympy(c.text, numeric.parse_number(c.text)) for c in row] for row in g.rows]  # type: ignore[union-attr]
    except (ValueError, TypeError, AttributeError, symbolic.Refused) as exc:
        ctx.notes.append(str(exc)[:80])
        return False
    return all(
        symbolic.exprs_equal(cells[i][j], value[i, j], ctx.rel_tol, ctx.numeric_tolerance)
        for i in range(shape[0])
        for j in range(shape[1])
    )


def _equal(g: Node, p: Node, ctx: _Ctx) -> bool:
    if isinstance(g, Scalar) and isinstance(p, Scalar):
        return _scalars_equal(g.text, p.text, ctx)
    if isinstance(p, Seq) and p.kind != "tuple" and len(p.items) == 1:
        return _equal(g, p.items[0], ctx)
    if isinstance(g, Seq) and g.kind != "tuple" and len(g.items) == 1:
        return _equal(g.items[0], p, ctx)
    ctx.used("structure")
    if isinstance(g, Scalar) and isinstance(p, Seq) and p.kind != "tuple":
        # Several candidates for one value: right only if every candidate is; none
        # (an empty set) is no value at all.
        if p.items and all(_equal(g, item, ctx) for item in p.items):
            return True
        ctx.hedge = True
        return False
    if isinstance(g, Seq) and isinstance(p, Seq):
        if g.kind == "tuple":
            return _ordered(g.items, p.items, ctx) if p.kind != "set" else False
        return _unordered(g.items, p.items, ctx)
    if isinstance(g, Interval) and isinstance(p, Relation):
        p = _as_interval(p, ctx) or p
    if isinstance(g, Relation) and isinstance(p, Interval):
        g = _as_interval(g, ctx) or g
    if isinstance(g, Interval) and isinstance(p, Interval):
        return (
            g.lo_closed == p.lo_closed
            and g.hi_closed == p.hi_closed
            and _scalars_equal(g.lo.text, p.lo.text, ctx)
            and _scalars_equal(g.hi.text, p.hi.text, ctx)
        )
    if isinstance(g, Union) or isinstance(p, Union):
        gp = _parts(g)
        pp = _parts(p)
        return (len(gp) > 1 or len(pp) > 1) and _unordered(gp, pp, ctx)
    if isinstance(g, Matrix) and isinstance(p, Scalar) and "\\begin" in p.text:
        return _matrix_expr_equal(g, p.text, ctx)
    if isinstance(g, Matrix) and isinstance(p, Matrix):
        return len(g.rows) == len(p.rows) and all(_ordered(gr, pr, ctx) for gr, pr in zip(g.rows, p.rows, strict=True))
    if isinstance(g, Scalar) and g.label and isinstance(p, Relation):
        g = Relation(g.label, "=", g.text)
    if isinstance(p, Scalar) and p.label and isinstance(g, Relation):
        p = Relation(p.label, "=", p.text)
    if isinstance(g, Relation) and isinstance(p, Relation):
        return _relations_equal(g, p, ctx)
    gf, pf = _flat(g), _flat(p)
    if gf is not None and pf is not None:
        return _ordered(gf, pf, ctx)
    return False


def _decimal_point(v: View) -> bool:
    return isinstance(v.node, Scalar) and "." in v.norm.text and numeric.parse_number(v.norm.text) is not None


def _comma_decimals(gold: View, pred: View) -> tuple[View, View]:
    """`1000,99` read as 1000.99 when the other side is a number written with a decimal
    point; otherwise a comma separates list items, as it does in most answers."""
    if _decimal_point(gold) and _DECIMAL_COMMA_RE.match(pred.norm.text):
        return gold, view(pred.norm.text.replace(",", "."))
    if _decimal_point(pred) and _DECIMAL_COMMA_RE.match(gold.norm.text):
        return view(gold.norm.text.replace(",", "."), gold=True), pred
    return gold, pred


def decide(gold: View, pred: View, rel_tol: float, numeric_tolerance: bool = False) -> Decision:
    """Is `pred` the same answer as `gold`?"""
    gold, pred = _comma_decimals(gold, pred)
    gn, pn = gold.norm, pred.norm
    if gn.text == pn.text and gn.text:
        return Decision(True, "string", "normalised strings match", pn.text)
    if gold.choice is not None:
        ok = pred.choice == gold.choice
        return Decision(ok, "string", f"choice {pred.choice or 'none'} vs {gold.choice}", pn.text)
    if gn.words or pn.words:
        ok = " ".join(gn.text.split()).casefold() == " ".join(pn.text.split()).casefold()
        return Decision(ok, "string", "word answers " + ("match" if ok else "differ"), pn.text)
    if gold.node is None or pred.node is None:
        return Decision(False, "string", pred.error or gold.error or "unparseable", pn.text)
    ctx = _Ctx(rel_tol, numeric_tolerance, gn.percent, pn.percent)
    ok = _equal(gold.node, pred.node, ctx)
    if ctx.hedge and not ok:
        reason = "hedging: several candidate values where the ground truth has one"
    else:
        reason = "equivalent" if ok else "not equivalent"
    if ctx.notes:
        reason += " (" + "; ".join(dict.fromkeys(ctx.notes)) + ")"
    return Decision(ok, ctx.stage, reason, pn.text, hedge=ctx.hedge and not ok)


def _in_degrees(answer: str) -> str:
    return _TRIG_NUMBER_RE.sub(lambda m: m.group(0) + "^\\circ", answer)


def _degree_views(gold: View, pred: View) -> tuple[View, View]:
    """`\\tan 15` read as `\\tan 15^\\circ` when the other side measures its trig
    arguments in degrees: one side dropped the sign, not the unit."""
    if gold.norm.degrees == pred.norm.degrees:
        return gold, pred
    if gold.norm.degrees:
        return gold, view(_in_degrees(pred.raw))
    return view(_in_degrees(gold.raw), gold=True), pred


@lru_cache(maxsize=65536)
def decide_cached(gold: View, pred_answer: str, rel_tol: float, numeric_tolerance: bool = False) -> Decision:
    gold_view, pred_view = _degree_views(gold, view(pred_answer))
    return decide(gold_view, pred_view, rel_tol, numeric_tolerance)
