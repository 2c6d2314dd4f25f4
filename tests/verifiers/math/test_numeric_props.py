"""Property tests of the numeric fast path: every spelling of a number parses to it,
exactness follows how it is written, and no number ever reaches sympy."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.base import GradeInput, Verdict
from rlvr.verifiers.math import MathParams, MathVerifier, compare, symbolic
from rlvr.verifiers.math.normalize import normalize
from rlvr.verifiers.math.numeric import Num, numbers_equal, parse_number

VERIFIER = MathVerifier()
PARAMS = MathParams()
ints = st.integers(min_value=-(10**12), max_value=10**12)
fractions = st.fractions(max_denominator=10**6).filter(lambda f: f.denominator > 1)


def grade(gold: str, answer: str, **params: object) -> Verdict:
    p = MathParams(**params) if params else PARAMS
    return VERIFIER.verify(GradeInput("", f"so $\\boxed{{{answer}}}$"), p, VERIFIER.prepare(p, gold)).verdict


def _thousands(n: int) -> str:
    return f"{n:,}"


@given(ints)
def test_integer_spellings_parse_exactly(n: int) -> None:
    for text in (str(n), _thousands(n), _thousands(n).replace(",", "{,}")):
        num = parse_number(normalize(text).text)
        assert isinstance(num, Num) and num.exact and num.value == n


@given(ints)
def test_integer_with_decimal_point_is_inexact_but_equal(n: int) -> None:
    num = parse_number(f"{n}.0")
    assert isinstance(num, Num) and not num.exact
    assert numbers_equal(num, Num(Fraction(n)), 1e-6)


@given(fractions)
def test_fraction_spellings_agree(f: Fraction) -> None:
    sign = "-" if f < 0 else ""
    p, q = abs(f.numerator), f.denominator
    spellings = [f"{sign}\\frac{{{p}}}{{{q}}}", f"{sign}{p}/{q}", f"\\frac{{{f.numerator}}}{{{q}}}"]
    for text in spellings:
        num = parse_number(text)
        assert isinstance(num, Num) and num.exact and num.value == f, text


@given(fractions, st.integers(min_value=2, max_value=9))
def test_multiples_of_a_fraction_are_the_same_rational(f: Fraction, k: int) -> None:
    a = parse_number(f"\\frac{{{f.numerator * k}}}{{{f.denominator * k}}}")
    b = parse_number(f"\\frac{{{f.numerator}}}{{{f.denominator}}}")
    assert isinstance(a, Num) and isinstance(b, Num) and numbers_equal(a, b, 0.0)


@given(fractions)
def test_distinct_rationals_never_equal(f: Fraction) -> None:
    g = f + Fraction(1, 10**9)
    assert not numbers_equal(Num(f), Num(g), 1e-6)


@given(st.decimals(min_value=-(10**6), max_value=10**6, places=4, allow_nan=False, allow_infinity=False))
def test_decimal_equals_its_exact_fraction(d: object) -> None:
    text = str(d)
    num = parse_number(text)
    assert isinstance(num, Num) and not num.exact
    exact = Fraction(text)
    assert numbers_equal(num, Num(exact), 1e-12)


@given(
    st.fractions(min_value=Fraction(1, 1000), max_value=10**6),
    st.floats(min_value=0.0, max_value=0.9, allow_nan=False),
)
def test_relative_tolerance_is_respected(value: Fraction, share: float) -> None:
    tol = 1e-6
    inside = Num(value * (1 + Fraction(share) * Fraction(tol)), exact=False)
    outside = Num(value * (1 + 3 * Fraction(tol)), exact=False)
    assert numbers_equal(inside, Num(value), tol)
    assert not numbers_equal(outside, Num(value), tol)


@given(st.integers(min_value=-9, max_value=9), st.integers(min_value=-30, max_value=30))
def test_scientific_notation(mantissa: int, exponent: int) -> None:
    expected = Fraction(mantissa) * Fraction(10) ** exponent
    e = exponent
    spellings = (f"{mantissa}.0\\times10^{{{e}}}", f"{mantissa}.0e{e}", f"{mantissa}.0\\cdot10^{{{e}}}")
    for text in spellings:
        num = parse_number(text.replace(" ", ""))
        assert isinstance(num, Num) and num.value == expected, text


@settings(max_examples=150, deadline=None)
@given(ints, st.sampled_from(["{}", "{}.", "x = {}", "{}\\text{{ cm}}", "\\${}", "{},", "\u2212{}"]))
def test_numbers_never_reach_sympy(n: int, template: str) -> None:
    def boom(*_: object) -> None:
        raise AssertionError("a number reached sympy")

    unicode_minus = template.startswith("\u2212")
    answer = template.format(abs(n) if unicode_minus else n)
    expected_value = -abs(n) if unicode_minus else n
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(symbolic, "to_sympy", boom)
        compare.decide_cached.cache_clear()
        assert grade(str(expected_value), answer) is Verdict.CORRECT, answer
        assert grade(str(expected_value + 1), answer) is Verdict.INCORRECT


@settings(max_examples=100, deadline=None)
@given(fractions)
def test_fraction_versus_decimal_through_the_verifier(f: Fraction) -> None:
    gold = f"\\frac{{{f.numerator}}}{{{f.denominator}}}"
    assert grade(gold, f"{f.numerator}/{f.denominator}") is Verdict.CORRECT
    sci = f"{float(f):.12e}".replace("e", "\\times10^{") + "}"
    # Issue 11, class 6: a rounded decimal is refused for an exact gold unless opted in.
    assert grade(gold, sci, numeric_tolerance=True) is Verdict.CORRECT
    exact = Fraction(f"{float(f):.12e}") == f
    assert grade(gold, sci) is (Verdict.CORRECT if exact else Verdict.INCORRECT)
    rounded = f"{float(f):.2f}"
    if Fraction(rounded) != f and abs(Fraction(rounded) - f) > abs(f) * Fraction(1, 10**6):
        assert grade(gold, rounded) is Verdict.INCORRECT
