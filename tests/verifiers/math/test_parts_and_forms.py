r"""Issue 11, classes 4 and 5: answers in several parts, and equivalent forms. Each
rule has rows where it must not fire: a one-value gold still refuses a hedge, and a
label never turns an equation gold into a number."""

from __future__ import annotations

import pytest

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier

C, I = "correct", "incorrect"  # noqa: E741  (short labels keep the rows readable)
V = MathVerifier()
P = MathParams()


def grade(gold: str, response: str) -> str:
    return V.verify(GradeInput("", response), P, V.prepare(P, gold)).verdict.value


def boxed(answer: str) -> str:
    return f"Thus the answer is $\\boxed{{{answer}}}$."


SEVERAL = [
    # Several boxes that together are the gold, in any order for solution sets.
    ("1, -2", r"The roots are $\boxed{1}$ and $\boxed{-2}$.", C),
    ("1, -2", r"$x = \boxed{-2}$ or $x = \boxed{1}$", C),
    (r"\{1, -2\}", r"\boxed{1}, \boxed{-2}", C),
    ("(2,1),(1,2)", r"\boxed{(1,2)} and \boxed{(2,1)}", C),
    ("k=45, n=2", r"\boxed{k=45} and \boxed{n=2}", C),
    ("1, -2", r"\boxed{1} and \boxed{-3}", I),
    ("1, -2", r"\boxed{1}, \boxed{-2}, \boxed{3}", I),
    ("1, -2", r"\boxed{1}", I),
    # A list inside one box.
    ("1, -2", boxed(r"1 \text{ and } -2"), C),
    ("1, -2", boxed("-2, 1"), C),
    ("1,-2", boxed("x = 1 or x = -2"), C),
    ("(2,1),(1,2)", boxed("(1,2),(2,1)"), C),
    ("k=45, n=2", boxed("n = 2, k = 45"), C),
    ("1, -2", boxed("1, 2"), I),
    # A short gold that boxes each part, and sets written with bare braces.
    (r"\(\boxed{1}\) and \(\boxed{-2}\).", boxed("-2, 1"), C),
    (r"\boxed{1} papers and \boxed{2} bins", boxed("1, 2"), C),
    (r"\boxed{1} papers and \boxed{2} bins", boxed("1, 3"), I),
    ("{1,2,3}", r"\boxed{1} and \boxed{2} and \boxed{3}", C),
    (r"\boxed{1} then many words later \boxed{2}", boxed("1, 2"), I),  # far apart: the last box is the gold
    ("{1,2,3}", boxed(r"\{3, 2, 1\}"), C),
    ("{1,2,3}", boxed(r"\{1, 2\}"), I),
    # A one-value gold: several different answers remain a hedge.
    ("-2", r"\boxed{1}, \boxed{-2}", I),
    ("-2", boxed("1, -2"), I),
    ("-2", boxed(r"1 \text{ or } -2"), I),
    ("-2", r"\boxed{-2} and \boxed{-2.0}", C),
]

FORMS = [
    # Equation labels.
    ("(3,2)", boxed("(p,q)=(3,2)"), C),
    ("(3,2)", boxed("(p, q) = (3, 2)"), C),
    ("(3,2)", boxed("(p,q)=(2,3)"), I),
    ("1", boxed("f(x)=1"), C),
    ("5", boxed("f(3)=5"), C),
    ("5", boxed("g^{-1}(2)=5"), C),
    ("1", boxed("|AB|=1"), C),
    ("12", boxed("AB=12"), C),
    ("12", boxed("AB=13"), I),
    ("x^2+y^2=1", boxed("1"), I),  # an equation gold is not its right-hand side
    ("2", boxed("x+y=2"), I),  # a general expression is no label
    # Membership and inequalities versus intervals.
    ("[-2,7]", boxed(r"x \in [-2,7]"), C),
    ("[-2,7]", boxed(r"-2 \le x \le 7"), C),
    ("[-2,7]", boxed(r"-2 \leq x \leq 7"), C),
    (r"x \in [-2,7]", boxed("[-2,7]"), C),
    ("[-2,7]", boxed(r"x \in (-2,7]"), I),
    ("[-2,7]", boxed(r"-2 < x \le 7"), I),
    ("(0,1)", boxed("0<f(x)<1"), C),
    ("(0,1)", boxed("0<f(x)\\le 1"), I),
    # Degrees in trigonometric arguments.
    (r"\tan 15^\circ", boxed(r"\tan 15"), C),
    (r"\tan 15", boxed(r"\tan 15^\circ"), C),
    (r"\cos 40^\circ", boxed(r"\cos(40)"), C),
    (r"\sin 30^\circ", boxed(r"\frac{1}{2}"), C),
    (r"\tan 15^\circ", boxed(r"\tan 16"), I),
    (r"\tan 15^\circ", boxed(r"\tan 15^\circ + 1"), I),
    # Units and squared units.
    ("15", boxed("15 cm²"), C),
    ("15", boxed(r"15\text{ cm}^2"), C),
    ("15", boxed(r"15 \text{ square centimeters}"), C),
    ("15", boxed(r"15\ \mathrm{m}^3"), C),
    ("15", boxed("16 cm²"), I),
    # `\text{E}` versus `E`, word answers in any case.
    ("E", boxed(r"\text{E}"), C),
    ("E", boxed(r"\textbf{(E)}"), C),
    (r"\text{E}", boxed("E"), C),
    ("E", boxed(r"\text{D}"), I),
    ("Evelyn", boxed(r"\text{evelyn}"), C),
    ("even", boxed("EVEN"), C),
    ("even", boxed("odd"), I),
    # Other spellings of the same thing.
    ("125", r"The distance is $\boxed{125\textnormal{ miles}}.$", C),
    (r"x \neq 3", boxed("x != 3"), C),
    (r"x \neq 3", boxed("x != 4"), I),
    # LaTeX escaped twice, as a JSON mishap writes it.
    ("[-2,7]", boxed(r"-2 \\le x \\le 7"), C),
    (r"\frac{1}{2}", boxed(r"\\frac{1}{2}"), C),
    ("4", r"so \\boxed{004}.", C),
    (r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}", boxed(r"\begin{pmatrix}1 & 2 \\3 & 4\end{pmatrix}"), C),
    # Small integers as words.
    ("5", boxed("five"), C),
    ("5", boxed(r"\text{Five}"), C),
    ("twelve", boxed("12"), C),
    ("20", boxed("twenty"), C),
    ("5", boxed("six"), I),
    ("0", boxed("zero"), C),
]


@pytest.mark.parametrize(("gold", "response", "verdict"), SEVERAL)
def test_several_answers(gold: str, response: str, verdict: str) -> None:
    assert grade(gold, response) == verdict


@pytest.mark.parametrize(("gold", "response", "verdict"), FORMS)
def test_equivalent_forms(gold: str, response: str, verdict: str) -> None:
    assert grade(gold, response) == verdict
