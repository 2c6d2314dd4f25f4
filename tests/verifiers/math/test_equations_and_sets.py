"""Equations, inequalities, solution sets, decimal commas and matrix expressions, each
class with right and wrong variants (the forms Math-Verify's suite and real outputs use)."""

from __future__ import annotations

import pytest

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier

VERIFIER = MathVerifier()
PARAMS = MathParams()


def score(gold: str, response: str) -> float:
    return VERIFIER.verify(GradeInput("", response), PARAMS, VERIFIER.prepare(PARAMS, gold)).score


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("$34x+45y-20z+100=0$", "$-34x-45y+20z-100=0$"),
        ("$2x+4y-3=0$", "$y=-\\frac{1}{2}x+\\frac{3}{4}$"),
        ("$x^2/4 + y^2/3 = 1$", "$x^2/16 + y^2/12 = 1/4$"),
        ("$y = 2x + 1$", "The line is $2x - y + 1 = 0$"),
        ("$x + y = 5$", "So $3x + 3y = 15$"),
        ("$x-2y+z-1=0$", "The plane is $2x-4y+2z=2$"),
    ],
)
def test_a_scaled_equation_is_the_same_equation(gold: str, response: str) -> None:
    assert score(gold, response) == 1.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("$34x+45y-20z+100=0$", "$-34x-45y+20z+100=0$"),
        ("$2x+4y-3=0$", "$y=-\\frac{1}{2}x+\\frac{1}{4}$"),
        ("$y = 2x + 1$", "The line is $y = 2x + 2$"),
        ("$x + y = 5$", "So $x + y = 15$"),
    ],
)
def test_a_different_equation_is_wrong(gold: str, response: str) -> None:
    assert score(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("$x < 1$", "$-x > -1$"),
        ("$x <= 1$", "$-x >= -1$"),
        ("$x < 3$", "$2x < 6$"),
        ("$x > -2$", "$-2x < 4$"),
        ("$x \\ge \\frac{1}{2}$", "$4x - 2 \\ge 0$"),
        ("$(-\\infty, 3)$", "$3 - x > 0$"),
        ("$[5, \\infty)$", "$-x \\le -5$"),
    ],
)
def test_a_linear_inequality_is_the_interval_it_describes(gold: str, response: str) -> None:
    assert score(gold, response) == 1.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("$x < 1$", "$-x < -1$"),  # flipped the wrong way
        ("$x < 1$", "$-x \\ge -1$"),  # closed where the gold is open
        ("$x > -2$", "$-2x > 4$"),
        ("$(-\\infty, 3)$", "$x - 3 > 0$"),
        ("$[5, \\infty)$", "$-x < -5$"),
    ],
)
def test_a_different_inequality_is_wrong(gold: str, response: str) -> None:
    assert score(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("$z = 1 + 1 = 2$", "$z = 3+3 = 2$", 1.0),
        ("$z = 1 + 1 = 2$", "\\boxed{2}", 1.0),
        ("$1 = \\zzz = x = 0$", "$0$", 1.0),
        ("$a = 2 \\cdot 3 = 6$", "\\boxed{6}", 1.0),
        ("$z = 1 + 1 = 2$", "\\boxed{3}", 0.0),
        ("$a = 2 \\cdot 3 = 6$", "\\boxed{2 \\cdot 3 = 7}", 0.0),
        ("$x^2 + y^2 = 1$", "\\boxed{1}", 0.0),  # one equation is the answer itself, not its last side
    ],
)
def test_a_gold_written_as_a_chain_states_its_last_value(gold: str, response: str, expected: float) -> None:
    assert score(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("$(11,7)or(7,11)$", "$\\boxed{(7,11),\\ (11,7)}$"),
        ("$(11,7) \\text{ or } (7,11)$", "$\\boxed{(11,7), (7,11)}$"),
        ("$p=5,q=2;p=7,q=2$", "$(5,2),(7,2)$"),
        ("$p=5,q=2;p=7,q=2$", "$(7,2),(5,2)$"),
        ("$21,16$ or $11$", "$21,16,11$"),
        ("$21,16$ or $11$", "$11, 21, 16$"),
        ("\\boxed{p = -1 \\text{ and } p = \\dfrac{15}{8}}", "$p=-1,p=\\frac{15}{8}$"),
        ("\\boxed{W(n) = 1 \\text{ and } W(n) = -1}", "W(x)=1orW(x)=-1"),
        ("$(1,2),(3,4)$", "\\boxed{(3,4), (1,2), (3,4)}"),  # a solution written twice is one solution
        ("$1, 2, 3$", "\\boxed{3, 2, 1, 2}"),
    ],
)
def test_a_solution_set_in_any_order_and_form(gold: str, response: str) -> None:
    assert score(gold, response) == 1.0


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("$(11,7)or(7,11)$", "$\\boxed{(7,11)}$"),  # a solution missing
        ("$(11,7)or(7,11)$", "$\\boxed{(7,11), (11,7), (1,1)}$"),  # a wrong extra
        ("$p=5,q=2;p=7,q=2$", "$(2,5),(2,7)$"),  # parts of each solution swapped
        ("$21,16$ or $11$", "$21,16$"),
        ("$1, 2, 3$", "\\boxed{1, 2, 3, 4}"),
        ("$1, 2, 3$", "\\boxed{1, 1, 1, 1, 1, 1, 1, 2, 3}"),  # padding past twice the gold's size
        ("\\boxed{p = -1 \\text{ and } p = \\dfrac{15}{8}}", "$p=-1,p=\\frac{8}{15}$"),
    ],
)
def test_a_wrong_solution_set_is_wrong(gold: str, response: str) -> None:
    assert score(gold, response) == 0.0


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("1000.99", "\\boxed{1000,99}", 1.0),
        ("1,22", "\\boxed{1.22}", 1.0),
        ("0,111", "\\boxed{0.111}", 1.0),
        ("2.5", "\\boxed{2,5}", 1.0),
        ("1000.99", "the total is 1,000.99€", 1.0),
        ("1000.99", "The area is 1,000.99m²", 1.0),
        ("12.5", "\\boxed{12,50 €}", 1.0),
        ("3", "\\boxed{3,4}", 0.0),  # a list (or 3.4): never 3
        ("2.5", "\\boxed{2,6}", 0.0),
        ("1000.99", "\\boxed{1000,98}", 0.0),
        ("$3, 4$", "\\boxed{3,4}", 1.0),  # with a list gold, the comma still separates
        ("$5m^2$", "\\boxed{5}", 0.0),  # `5m^2` glued to an integer is a product, not an area
    ],
)
def test_decimal_commas_currency_and_glued_areas(gold: str, response: str, expected: float) -> None:
    assert score(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        (
            "$\\begin{pmatrix}6 & 8 \\\\ 10 & 12\\end{pmatrix}$",
            "$\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}$",
            1.0,
        ),
        (
            "$\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}$",
            "$\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix} \\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}$",
            1.0,
        ),
        (
            "$\\begin{pmatrix}1 & 2 \\\\3 & 4\\end{pmatrix}$",
            "Special matrix: $ \\left[\\begin{array}{cc}1 & 2 \\\\3 & 4\\end{array}\\right] $",
            1.0,
        ),
        (
            "$\\begin{pmatrix}6 & 8 \\\\ 10 & 12\\end{pmatrix}$",
            "$\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}5 & 6 \\\\ 7 & 9\\end{pmatrix}$",
            0.0,
        ),
        (
            "$\\begin{pmatrix}2 & 0 \\\\ 0 & 2\\end{pmatrix}$",
            "$\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix} \\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}$",
            0.0,
        ),
        (
            "$\\begin{pmatrix}1 & 2 \\\\3 & 4\\end{pmatrix}$",
            "$\\left[\\begin{array}{cc}1 & 2 \\\\4 & 3\\end{array}\\right]$",
            0.0,
        ),
    ],
)
def test_matrices_as_written_or_as_an_expression(gold: str, response: str, expected: float) -> None:
    assert score(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("0", r"$\sin^{2}(x)+\cos^{2}(x)-1$", 1.0),
        ("0", r"$(x+1)^2-x^2-2x-1$", 1.0),
        ("0", r"$\frac{x^2-1}{x-1}-x-1$", 1.0),
        ("0", r"$\cos(2x)-\cos^2 x+\sin^2 x$", 1.0),
        ("0", r"$\tan x \cos x - \sin x$", 1.0),
        ("0", r"$(a+b)^2-a^2-2ab-b^2$", 1.0),
        ("0.0", r"$\sin^{2}(x)+\cos^{2}(x)-1$", 1.0),
        (r"$\sin^{2}(x)+\cos^{2}(x)-1$", "$0$", 1.0),
        ("1", r"$\sin^{2}(x)+\cos^{2}(x)$", 1.0),
        ("0", r"$x$", 0.0),
        ("0", r"$\sin(\pi x)$", 0.0),
        ("0", r"$x^2-x\cdot x+1$", 0.0),
        ("0", r"$10^{-30} x$", 0.0),
    ],
)
def test_an_identity_equal_to_zero_matches_a_zero_gold(gold: str, response: str, expected: float) -> None:
    """Evaluated at 30 digits, an identity is 1e-31 rather than 0, and 0 is close to
    nothing relatively: the sampled comparison allows the evaluation's own noise."""
    assert score(gold, response) == expected


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("3", "... Final Answer: Jane started growing Sphere 3 hours ago. I hope it is correct.", 1.0),
        ("8", "Final Answer: the train needs 8 more minutes.", 1.0),
        ("12", "Therefore, there are 12 distinct sequences that meet the three given conditions.", 1.0),
        ("40", "So the answer is 40 apples in total.", 1.0),
        ("3", "Final Answer: Jane started growing Sphere 4 hours ago.", 0.0),
        ("3", "Final Answer: 3 hours after 5 p.m. she stops.", 0.0),  # two numbers: no single value
        ("12", "Therefore, there are 13 distinct sequences that meet the three given conditions.", 0.0),
    ],
)
def test_a_value_stated_in_a_sentence(gold: str, response: str, expected: float) -> None:
    assert score(gold, response) == expected


def test_the_exponent_of_a_power_is_sized_by_its_value_not_its_digits() -> None:
    gold = "$x_{1}=10^{\\frac{-5+\\sqrt{13}}{6}}, x_{2}=10^{\\frac{-5-\\sqrt{13}}{6}}$"
    first = "so $\\boxed{10^{\\frac{\\sqrt{13} - 5}{6}}} \\quad \\text{and} \\quad "
    right = first + "\\boxed{10^{-\\frac{5 + \\sqrt{13}}{6}}}$"
    wrong = first + "\\boxed{10^{-\\frac{5 + \\sqrt{11}}{6}}}$"
    assert score(gold, right) == 1.0
    assert score(gold, wrong) == 0.0
    assert score("$10^{10^{10}}$", "$10^{10^{10}}+1$") == 0.0  # still refused, not evaluated


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("$x = 5$", "so $x = 10/2 = 6$"),
        ("$y = 2x + 1$", "The line is $y = 2x + 1 = 3$"),
        ("$x = 5$", "The value is $x = 6$"),
    ],
)
def test_a_chain_in_the_response_is_read_by_its_last_side_only(gold: str, response: str) -> None:
    assert score(gold, response) == 0.0
