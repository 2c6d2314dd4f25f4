"""The ANTLR-free parser agrees with latex2sympy on every form it accepts, and leaves
the forms it could read differently to latex2sympy (issue 11, speed)."""

from __future__ import annotations

import pytest
import sympy

from rlvr.verifiers.math import fastparse, symbolic

ACCEPTED = [
    r"\frac{3\sqrt{2}}{2}", r"\frac{1}{x+1}", r"4\sqrt{5}", "2x+3", r"\frac{1}{x}+1", r"\frac{3}{\sqrt{2}}",
    r"\sqrt{20}", r"\sqrt{2}+1", "x^2+2x+1", "(x+1)^{-1}", r"\frac{\pi}{4}", r"\sqrt{a^2+b^2}", r"5\sqrt{4}",
    r"\pi/4", r"\frac{1}{4}\pi", "(x-1)^2", r"1.5\sqrt{2}", "-x^2", "2^{10}", r"\sqrt[3]{8}", "-3/4", "4ac",
    r"2\cdot3", r"3\times 10^{3}", r"-\frac{1}{2}", r"\frac{-3}{4}", r"2\pi r", r"12\pi", r"0.5\pi",
    "(1+x)(1-x)", r"\sqrt{2}\sqrt{3}", "10^{-3}", "2^x", "-2^2", "x^2y", r"x\frac{1}{2}", "{x+1}^2",
]  # fmt: skip
LEFT_TO_ANTLR = [
    r"2\frac{1}{2}", r"-2\frac{1}{2}", "1/2x", r"\ln 5", "e^2", "2i", "x=1", r"\frac12", "a^b^c", r"\sin x",
    "x2", "", "(1", r"\log_2 5", "3!", r"\sqrt{2", "2^",
]  # fmt: skip
POINTS = (0.37, 1.73, -2.1)


def _value(expr: sympy.Expr, point: float) -> complex:
    symbols = sorted(expr.free_symbols, key=str)
    return complex(sympy.N(expr, 20, subs={s: point + 0.3 * k for k, s in enumerate(symbols)}))


@pytest.mark.parametrize("latex", ACCEPTED)
def test_agrees_with_latex2sympy(latex: str) -> None:
    fast = fastparse.parse(latex)
    assert fast is not None
    slow = symbolic._antlr_parse(latex)
    assert fast.free_symbols == slow.free_symbols
    for point in POINTS:
        a, b = _value(fast, point), _value(slow, point)
        assert abs(a - b) <= 1e-12 * max(1.0, abs(a)), (point, fast, slow)


@pytest.mark.parametrize("latex", LEFT_TO_ANTLR)
def test_leaves_other_forms_to_latex2sympy(latex: str) -> None:
    assert fastparse.parse(latex) is None


def test_huge_powers_are_built_unevaluated_and_refused() -> None:
    expr = fastparse.parse("9^{9^{9^{9}}}")
    assert expr is not None and isinstance(expr, sympy.Pow)
    symbolic.to_sympy.cache_clear()
    with pytest.raises(symbolic.Refused):
        symbolic.to_sympy("9^{9^{9^{9}}}")
