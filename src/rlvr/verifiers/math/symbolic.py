"""The symbolic stage: LaTeX to sympy with latex2sympy2_extended, then equality.

Every step has a bound so no input can make the parser or sympy run away:

- latex2sympy's ANTLR parser is exponential on some short inputs (`|x|` repeated
  twenty times takes seconds; so do nested superscripts). Parsing runs under a
  budget of the item's CPU time (`budget`) checked inside ANTLR's prediction loop
  (no signals, no threads); when it is spent, `BudgetExceeded` propagates and the
  item is graded `timeout`, which the service does not cache;
- the text is refused before parsing when it is long, deeply nested, or holds
  factorials/binomials of large literals (latex2sympy evaluates binomials eagerly);
- after parsing, a magnitude estimate refuses anything whose value would have more
  than `MAX_LOG10` digits (`9^{9^{9^{9}}}`, `1000000!`) before sympy evaluates it;
- equality never calls `simplify` on large trees: constants compare by evaluation at
  `PRECISION` digits, expressions by `expand` (small powers only) and then by
  sampling at fixed points.

Exact versus approximate: when neither side holds a decimal, values must agree to
`EXACT_TOL` relative error at `PRECISION` digits (two distinct closed forms do not
agree to 30 digits by accident). When only the answer holds a decimal, the gold is
exact and the decimal, read back as the exact fraction it writes, must agree to
`EXACT_TOL` too (`37.6991` is not `12\\pi`, `0.5\\pi` is `\\pi/2`);
`numeric_tolerance` or a decimal in the gold makes `rel_tol` apply.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import sympy
from latex2sympy2_extended import NormalizationConfig, latex2sympy, normalize_latex
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, _Latex2Sympy

from rlvr.verifiers.math import budget, fastparse
from rlvr.verifiers.math.structure import max_nesting

log = logging.getLogger(__name__)

_LOG10_2 = math.log10(2)
MAX_LATEX_CHARS = 1000
# Real answers nest brackets and braces four or five deep; each level multiplies
# what the ANTLR parser explores.
MAX_NESTING = 8
MAX_LOG10 = 5000.0
MAX_EXPAND_POWER = 12
MAX_SIMPLIFY_OPS = 40
PRECISION = 30
EXACT_TOL = 1e-20
# Below this, an exact closed form evaluated at PRECISION digits is zero.
ZERO_FLOOR = 1e-25
SAMPLE_TOL = 1e-9
# How much smaller rounding gets at twice PRECISION's digits, at the least.
ROUNDING_SHRINK = 1e-15
# Two exact expressions that agree this closely at every sample point are one
# identity: each side is evaluated to PRECISION digits, so rounding stays near 1e-28,
# and `x + 10^{-16}` is not `x`.
IDENTITY_TOL = 1e-22
# Fixed, irrational-looking points: an identity that holds at all of them is an
# identity; the negative ones catch |x| versus x.
SAMPLE_POINTS = (0.5772156649, 1.4142135623, 2.7182818284, -0.3183098861, -1.6180339887, 3.1415926535)

_NORMALIZE = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=True, nits=False, boxed="none", equations=False
)
_CONVERT = ConversionConfig(interpret_as_mixed_fractions=True, lowercase_symbols=False)
# Each pattern starts at a place a long run cannot repeat (a digit run's first digit,
# a `\binom`), and big literals are looked for in the captured arguments, so no
# scan backtracks over a run more than once.
_BIG_FACTORIAL_RE = re.compile(r"(?<!\d)\d{4,}(?:\s*\})?\s*!")
_BINOM_ARGS_RE = re.compile(r"\\binom\s*\{([^{}]*)(?:\}\s*\{([^{}]*))?")
_BIG_LITERAL_RE = re.compile(r"\d{5}")


class Refused(ValueError):
    """The input is too large or too deep to evaluate safely."""


class _BudgetedConverter(_Latex2Sympy):  # type: ignore[misc]
    """latex2sympy's converter whose parser checks the budget as it predicts.

    `closure` is where ANTLR's adaptive prediction spends its time, and it is
    looked up on the simulator instance, so wrapping it there affects only this
    parser. (`_Latex2Sympy` is the class `latex2sympy()` itself instantiates.)
    """

    def create_parser(self, latex_str: str) -> Any:
        parser = super().create_parser(latex_str)
        interp = parser._interp
        closure = interp.closure

        def closure_within_budget(*args: Any) -> Any:
            budget.check()
            return closure(*args)

        interp.closure = closure_within_budget
        return parser


def _magnitude(exponent: Any, bound: float) -> float:
    """|exponent| when it is a constant (`(\\sqrt{13} - 5)/6` is about 0.23), else
    `bound`: the digits of its parts overstate a fraction's size. Its numbers are
    below 10^8 (the caller checked), so evaluating it to a few digits is cheap."""
    if exponent.free_symbols:
        return bound
    try:
        return min(bound, abs(complex(sympy.N(exponent, 8))))
    except (TypeError, ValueError, ArithmeticError):
        return bound


def log10_bound(expr: Any, depth: int = 0) -> float:
    """An upper bound on log10 of the largest number evaluating `expr` would build.

    Symbols count as 10 (sampling substitutes small values), so the bound stays
    meaningful for expressions as well as constants.
    """
    if depth > 200:
        return math.inf
    if isinstance(expr, sympy.Integer):
        return max(int(expr).bit_length() * _LOG10_2, _LOG10_2)
    if isinstance(expr, sympy.Rational):
        return max(int(expr.p).bit_length(), int(expr.q).bit_length()) * _LOG10_2
    if isinstance(expr, sympy.Float):
        return max(abs(math.log10(abs(float(expr)))) if expr != 0 else 0.0, _LOG10_2)
    if isinstance(expr, sympy.Pow):
        base, exponent = expr.args
        e_bound = log10_bound(exponent, depth + 1)
        if e_bound > 8:
            return math.inf
        return float(_magnitude(exponent, 10.0**e_bound) * max(log10_bound(base, depth + 1), _LOG10_2))
    if isinstance(expr, sympy.factorial | sympy.gamma | sympy.factorial2):
        n_bound = log10_bound(expr.args[0], depth + 1)
        if n_bound > 6:
            return math.inf
        n = 10.0**n_bound
        return float(n * max(math.log10(n), 1.0))
    args = getattr(expr, "args", ())
    if not args:
        return 1.0
    bounds = [log10_bound(a, depth + 1) for a in args]
    if isinstance(expr, sympy.Mul):
        return sum(bounds)
    # A sum is at most n times its largest term; a function's value or argument
    # is what evaluation must hold.
    return max(bounds) + math.log10(len(bounds)) + 1.0


def _big_binomial(latex: str) -> bool:
    for m in _BINOM_ARGS_RE.finditer(latex):
        if any(arg and _BIG_LITERAL_RE.search(arg) for arg in m.groups()):
            return True
    return False


def _check_text(latex: str) -> None:
    if len(latex) > MAX_LATEX_CHARS:
        raise Refused("expression too long")
    if max_nesting(latex) > MAX_NESTING:
        raise Refused("expression nested too deeply")
    if _BIG_FACTORIAL_RE.search(latex) or _big_binomial(latex):
        raise Refused("factorial or binomial of a huge number")


@lru_cache(maxsize=8192)
def to_sympy(latex: str) -> Any:
    """Parse normalised LaTeX; raises Refused, or ValueError when it does not parse."""
    _check_text(latex)
    budget.check()
    # The common forms are read without ANTLR (`fastparse`); the rest go to latex2sympy.
    expr = fastparse.parse(latex)
    if expr is None:
        expr = _antlr_parse(latex)
    if isinstance(expr, list | tuple):
        raise ValueError("not a single expression")
    if log10_bound(expr) > MAX_LOG10:
        raise Refused("value too large to evaluate")
    return expr


def _antlr_parse(latex: str) -> Any:
    try:
        return _BudgetedConverter(config=_CONVERT).parse(normalize_latex(latex, _NORMALIZE))
    except budget.BudgetExceeded:
        _reset_parser_caches()
        raise
    except RecursionError as exc:
        raise Refused("expression nested too deeply") from exc
    except Exception as exc:
        raise ValueError(f"unparseable: {str(exc).splitlines()[0][:120]}") from exc


_WARM_UP = (
    r"2\sqrt{3}+\frac{\pi}{4}",
    r"(x+1)^{2}-\frac{1}{x}",
    r"\log_{2}5+\ln 3",
    r"\sin(\frac{\pi}{6})\cos x",
    r"3\cdot 2^{10}",
    r"\binom{5}{2}+4!",
    r"y=2x+1",
    r"\left(1,2\right]",
)


def warm_up() -> None:
    """Parse a few typical answers so ANTLR's prediction caches are filled.

    A cold parser spends tens of milliseconds per new construct; doing it once when
    the verifier loads keeps that cost out of the first items' deadlines.
    """
    for latex in _WARM_UP:
        try:
            latex2sympy(latex, normalization_config=_NORMALIZE, conversion_config=_CONVERT)
        except Exception as exc:  # a warm-up miss only costs speed
            log.debug("warm-up parse of %r failed: %s", latex, exc)


def _reset_parser_caches() -> None:
    """Drop ANTLR's class-wide prediction caches after an aborted parse.

    A parse cut short leaves the shared DFA holding the huge, half-built states of
    the pathological input, and later parses then crawl through them outside any
    budget check. Rebuilding costs the next few parses a cold start, nothing more.
    """
    from antlr4.dfa.DFA import DFA
    from antlr4.PredictionContext import PredictionContextCache
    from latex2sympy2_extended.antlr_parser import PSParser

    PSParser.decisionsToDFA[:] = [DFA(state, i) for i, state in enumerate(PSParser.atn.decisionToState)]
    PSParser.sharedContextCache = PredictionContextCache()
    log.info("ANTLR prediction caches reset after a parse exceeded its budget")


def _has_float(expr: Any) -> bool:
    return bool(getattr(expr, "atoms", lambda *_: set())(sympy.Float))


def _num(expr: Any, subs: dict[Any, float] | None = None, digits: int = PRECISION) -> complex | None:
    try:
        value = sympy.N(expr, digits, subs=subs) if subs else sympy.N(expr, digits)
        out = complex(value)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError):
        return None
    if not (math.isfinite(out.real) and math.isfinite(out.imag)):
        return None
    return out


def _close(a: complex, b: complex, tol: float, floor: float = 0.0) -> bool:
    """Relative closeness; `floor` is an absolute slack so `sin(pi)`'s 1e-31 equals 0."""
    diff = abs(a - b)
    return diff <= tol * max(abs(a), abs(b)) or diff <= floor


def _expand_is_cheap(expr: Any) -> bool:
    for p in expr.atoms(sympy.Pow):
        exp = p.args[1]
        if not exp.is_number or abs(float(exp)) > MAX_EXPAND_POWER:
            return False
    return True


def _samples(a: Any, b: Any) -> Iterator[tuple[int, complex, complex]]:
    """The values of `a` and `b` at each fixed point where both evaluate."""
    symbols = a.free_symbols | b.free_symbols
    for i in range(len(SAMPLE_POINTS)):
        budget.check()
        subs = _point(symbols, i)
        va, vb = _num(a, subs), _num(b, subs)
        if va is not None and vb is not None:
            yield i, va, vb


def _point(symbols: set[Any], i: int) -> dict[Any, float]:
    # A different value for each symbol, so `x - y` is not sampled as 0.
    return {s: SAMPLE_POINTS[i] + 0.1173 * j * (i + 1) for j, s in enumerate(sorted(symbols, key=str))}


def _sampled_equal(a: Any, b: Any, tol: float) -> bool | None:
    """Compare at fixed points; None when too few points evaluate on both sides. Below
    a double's resolution the difference itself is evaluated at PRECISION digits, at
    the first point: two expressions that differ anywhere differ there (`x + 10^{-16}`
    is not `x`), and one more evaluation is all it costs."""
    agree = 0
    for i, va, vb in _samples(a, b):
        if not _close(va, vb, max(tol, SAMPLE_TOL)) and not _zero_and_noise(a, b, va, vb, i):
            return False
        if agree == 0 and tol < SAMPLE_TOL:
            d = _num(a - b, _point(a.free_symbols | b.free_symbols, i))
            if d is None or abs(d) > tol * max(abs(va), abs(vb), 1.0):
                return False
        agree += 1
    return True if agree >= 3 else None


def _zero_and_noise(a: Any, b: Any, va: complex, vb: complex, i: int) -> bool:
    """One side is exactly 0 and the other only the rounding of PRECISION digits (an
    identity such as `\\sin^2 x + \\cos^2 x - 1` is 1e-31 there), which no relative
    tolerance accepts. Twice the digits shrink rounding, never a value (`10^{-30} x`)."""
    expr, value = (b, vb) if va == 0 else (a, va)
    if not (va == 0 or vb == 0) or abs(value) > ZERO_FLOOR:
        return False
    finer = _num(expr, _point(a.free_symbols | b.free_symbols, i), 2 * PRECISION)
    return finer is not None and abs(finer) <= abs(value) * ROUNDING_SHRINK


def _exact_decimals(expr: Any) -> Any:
    """`expr` with each decimal as the exact value it writes, held at PRECISION digits.

    latex2sympy keeps a decimal's digits (`str` gives them back) but holds it in
    binary: `0.1` is off by 1e-17, which an exact comparison would see.
    """
    floats = expr.atoms(sympy.Float)
    if not floats:
        return expr
    return expr.xreplace({f: sympy.Float(sympy.Rational(str(f)), PRECISION) for f in floats})


def _tolerance(gold: Any, pred: Any, rel_tol: float, numeric_tolerance: bool) -> float:
    if _has_float(gold) or (numeric_tolerance and _has_float(pred)):
        return max(rel_tol, EXACT_TOL)
    return EXACT_TOL


def _constants_equal(a: Any, b: Any, tol: float) -> bool:
    """The difference is evaluated at PRECISION digits before it becomes a double, so
    an exact tolerance is exact (12pi and its 16-digit decimal differ in the 17th)."""
    va, vb, diff = _num(a), _num(b), _num(a - b)
    if va is None or vb is None or diff is None:
        return False
    scale = max(abs(va), abs(vb))
    return abs(diff) <= tol * scale or abs(diff) <= (ZERO_FLOOR if tol == EXACT_TOL else 0.0)


def exprs_equal(a: Any, b: Any, rel_tol: float, numeric_tolerance: bool = False) -> bool:
    """Equality of two parsed scalar expressions (no sets, no relations); `a` is the gold."""
    if a == b:
        return True
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        return False
    tol = _tolerance(a, b, rel_tol, numeric_tolerance)
    if tol == EXACT_TOL:
        b = _exact_decimals(b)
    if not a.free_symbols and not b.free_symbols:
        return _constants_equal(a, b, tol)
    # The identity test first: both sides at PRECISION digits at points no identity
    # holds at by accident. Only what it cannot decide (too few points evaluate) goes
    # to expansion and simplification, which can run long on correct answers.
    sampled = _sampled_equal(a, b, IDENTITY_TOL if tol == EXACT_TOL else max(tol, SAMPLE_TOL))
    if sampled is not None:
        return sampled
    diff = a - b
    if _expand_is_cheap(diff) and sympy.expand(diff) == 0:
        return True
    if sympy.count_ops(diff) <= MAX_SIMPLIFY_OPS:
        budget.check()
        return bool(sympy.simplify(diff) == 0)
    return False


def relations_equal(a_lhs: Any, a_rhs: Any, b_lhs: Any, b_rhs: Any, sign: int) -> bool:
    """`l1 op r1` versus `l2 op r2`: equal when (l1 - r1) / (l2 - r2) is a constant.

    `sign` 0 (equations): any non-zero constant (`2x = 2` is `x = 1`). `sign` +1 or -1
    (inequalities, same or flipped operator): the constant must have that sign.
    """
    d1, d2 = a_lhs - a_rhs, b_lhs - b_rhs
    if not (d1.free_symbols | d2.free_symbols):
        return False
    ratio: complex | None = None
    points = 0
    for _, v1, v2 in _samples(d1, d2):
        if abs(v2) < 1e-12 or abs(v1) < 1e-12:
            if not (abs(v2) < 1e-12 and abs(v1) < 1e-12):
                return False
            continue
        r = v1 / v2
        if ratio is None:
            ratio = r
        elif not _close(r, ratio, SAMPLE_TOL):
            return False
        points += 1
    if ratio is None or points < 3:
        return False
    if sign == 0:
        return True
    return abs(ratio.imag) < 1e-12 and ratio.real * sign > 0
