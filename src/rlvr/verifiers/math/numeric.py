"""The numeric fast path: plain numbers parsed and compared without sympy.

Most answers in real data sets are numbers, so this path must be cheap: a handful of
anchored regexes and `fractions.Fraction` arithmetic, microseconds per answer.

Exactness rule: a value written with a decimal point or an
exponent (`0.5`, `1.5e3`, `1.5\\times10^{3}`) is *inexact*; integers and fractions
are *exact*. When the gold is exact, the answer must have exactly its value: `0.5`
is `1/2` and `2.0` is `2`, but `0.3333333` is not `1/3` (a policy must not learn to
compute numerically instead of solving). When the gold is itself a decimal, a
relative tolerance applies. `numeric_tolerance=True` restores the older rule: a
decimal answer is compared with the tolerance whatever the gold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

# Exponents beyond this are not numbers an answer key holds; refuse rather than
# build a huge Fraction (`1e999999999` would take forever to materialise).
MAX_EXPONENT = 400
MAX_DIGITS = 400

_INT = r"\d+(?:,\d{3})+|\d+"
_DEC = rf"(?:{_INT})(?:\.\d*)?|\.\d+"
_SIGN = r"[+-]?"
_DECIMAL_RE = re.compile(rf"^({_SIGN})({_DEC})$")
_SCI_RE = re.compile(
    rf"^({_SIGN})({_DEC})(?:[eE]([+-]?\d+)|(?:\\times|\\cdot|\*|x)10\^(?:\{{([+-]?\d+)\}}|([+-]?\d)))$"
)
_POW10_RE = re.compile(r"^([+-]?)10\^(?:\{([+-]?\d+)\}|(\d))$")
_ARG = r"(?:\{\s*([+-]?\d+)\s*\}|(\d))"
_FRAC_RE = re.compile(rf"^({_SIGN})(?:(\d+))?\\frac{_ARG}{_ARG}$")
_SLASH_RE = re.compile(r"^([+-]?)\(?([+-]?\d+)\)?/\(?(\d+)\)?$")
_INFINITY_RE = re.compile(r"^([+-]?)\\infty$")


@dataclass(frozen=True, slots=True)
class Num:
    """A parsed number. `exact` is False for decimals and scientific notation."""

    value: Fraction
    exact: bool = True

    def __str__(self) -> str:
        if self.value.denominator == 1:
            return str(self.value.numerator)
        return f"{self.value.numerator}/{self.value.denominator}" if self.exact else str(float(self.value))


@dataclass(frozen=True, slots=True)
class Infinity:
    negative: bool

    def __str__(self) -> str:
        return "-oo" if self.negative else "oo"


def _int(text: str) -> int | None:
    digits = text.replace(",", "")
    if len(digits) > MAX_DIGITS:
        return None
    return int(digits)


def _decimal(text: str) -> Fraction | None:
    digits = text.replace(",", "")
    if len(digits) > MAX_DIGITS:
        return None
    return Fraction(digits if digits != "." else "0")


def _signed(sign: str, value: Fraction) -> Fraction:
    return -value if sign == "-" else value


def parse_number(s: str) -> Num | Infinity | None:
    """Parse a normalised answer as a number; None when it is anything else."""
    if not s or len(s) > 2 * MAX_DIGITS:
        return None
    m = _DECIMAL_RE.match(s)
    if m is not None:
        value = _decimal(m.group(2))
        if value is None:
            return None
        return Num(_signed(m.group(1), value), exact="." not in m.group(2))
    m = _FRAC_RE.match(s)
    if m is not None:
        sign, whole = m.group(1), m.group(2)
        num, den = _int(m.group(3) or m.group(4)), _int(m.group(5) or m.group(6))
        if num is None or den is None or den == 0:
            return None
        frac = Fraction(num, den)
        # `2\frac{1}{2}` is the mixed number 2½, as textbooks write it.
        if whole is not None:
            frac = int(whole) + frac
        return Num(_signed(sign, frac))
    m = _SLASH_RE.match(s)
    if m is not None:
        num, den = int(m.group(2)), int(m.group(3))
        if den == 0 or len(m.group(2)) > MAX_DIGITS or len(m.group(3)) > MAX_DIGITS:
            return None
        return Num(_signed(m.group(1), Fraction(num, den)))
    m = _SCI_RE.match(s)
    if m is not None:
        mantissa = _decimal(m.group(2))
        exponent = int(m.group(3) or m.group(4) or m.group(5))
        if mantissa is None or abs(exponent) > MAX_EXPONENT:
            return None
        return Num(_signed(m.group(1), mantissa * Fraction(10) ** exponent), exact=False)
    m = _POW10_RE.match(s)
    if m is not None:
        exponent = int(m.group(2) or m.group(3))
        if abs(exponent) > MAX_EXPONENT:
            return None
        return Num(_signed(m.group(1), Fraction(10) ** exponent))
    m = _INFINITY_RE.match(s)
    if m is not None:
        return Infinity(m.group(1) == "-")
    return None


def close(a: Fraction, b: Fraction, rel_tol: float) -> bool:
    """|a - b| <= rel_tol * max(|a|, |b|), in exact arithmetic (zero equals only zero)."""
    if a == b:
        return True
    # The tolerance as the decimal the user wrote (1e-6 is not exactly 2**-k).
    return abs(a - b) <= Fraction(repr(rel_tol)) * max(abs(a), abs(b))


def numbers_equal(gold: Num | Infinity, pred: Num | Infinity, rel_tol: float, numeric_tolerance: bool = False) -> bool:
    if isinstance(gold, Infinity) or isinstance(pred, Infinity):
        return isinstance(gold, Infinity) and isinstance(pred, Infinity) and gold.negative == pred.negative
    if gold.exact and (pred.exact or not numeric_tolerance):
        return gold.value == pred.value
    return close(gold.value, pred.value, rel_tol)


def percent_equal(
    gold: Num, pred: Num, gold_pct: bool, pred_pct: bool, rel_tol: float, numeric_tolerance: bool = False
) -> bool:
    """Equality when either side carried a percent sign.

    `50\\%` matches `50` (the sign is often dropped) and `0.5` (the
    same value); a gold of `50` matches `50\\%` for the first reason.
    """
    if numbers_equal(gold, pred, rel_tol, numeric_tolerance):
        return True
    hundred = Fraction(100)
    if gold_pct and not pred_pct:
        return numbers_equal(Num(gold.value / hundred, gold.exact), pred, rel_tol, numeric_tolerance)
    if pred_pct and not gold_pct:
        return numbers_equal(gold, Num(pred.value / hundred, pred.exact), rel_tol, numeric_tolerance)
    return False
