"""An assert test whose left side itself decides a comparison or a type check does not
run in values mode: there the program's process would answer it with the program's
own `__eq__`, `__contains__`, `__lt__` or `__class__`, and only the answer would cross."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.code import asserts
from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

LIAR = (
    "class Liar:\n"
    "    __class__ = int\n"
    "    def __eq__(self, other): return True\n"
    "    def __ne__(self, other): return False\n"
    "    def __lt__(self, other): return True\n"
    "    def __gt__(self, other): return True\n"
    "    def __le__(self, other): return True\n"
    "    def __ge__(self, other): return True\n"
    "    def __contains__(self, item): return True\n"
    "    def __hash__(self): return 0\n"
    "def f(x):\n"
    "    return Liar()\n"
)
HONEST = "def f(x):\n    return [x * 2]\n"
WRONG = "def f(x):\n    return [x * 3]\n"

# Each judges f(2) == [4] one way or another, inside the left side of `assert ... == LITERAL`.
TESTS = [
    "assert (f(2) == [4]) == True",
    "assert True == (f(2) == [4])",
    "assert (f(2) != [4]) == False",
    "assert ([4] == f(2)) == True",
    "assert (f(2) == [4] == f(2)) == True",
    "assert (f(2) >= [4] and f(2) <= [4]) == True",
    "assert (4 in f(2)) == True",
    "assert (6 not in f(2)) == True",
    "assert ((f(2) == [4]),) == (True,)",
    "assert [f(2) == [4]] == [True]",
    "assert all([f(2) == [4]]) == True",
    "assert {'ok': f(2) == [4]} == {'ok': True}",
    "assert isinstance(f(2), list) == True",
    "assert (isinstance(f(2)[0], int)) == True",
]


@pytest.mark.parametrize("test", TESTS)
def test_the_left_side_does_not_judge_in_the_program(test: str) -> None:
    assert asserts.split_assert(test) is None


@pytest.mark.parametrize("test", TESTS)
def test_a_liar_gets_nothing(test: str) -> None:
    outcome = grade(LIAR, {"tests": [test]})
    assert (outcome.score, outcome.mask) == (0.0, False), outcome


@pytest.mark.parametrize("test", TESTS)
def test_an_honest_program_still_passes(test: str) -> None:
    outcome = grade(HONEST, {"tests": [test]})
    assert (outcome.score, outcome.mask) == (1.0, False), outcome


@pytest.mark.parametrize("test", [t for t in TESTS if "isinstance" not in t])
def test_a_wrong_program_still_fails(test: str) -> None:
    outcome = grade(WRONG, {"tests": [test]})
    assert (outcome.score, outcome.mask) == (0.0, False), outcome


@pytest.mark.parametrize(
    ("test", "expr", "value"),
    [
        ("assert f(2) == [4]", "f(2)", [4]),
        ("assert [4] == f(2)", "f(2)", [4]),
        ("assert len(f(2)) == 1", "len(f(2))", 1),
        ("assert sorted(f(2)) == [4]", "sorted(f(2))", [4]),
        ("assert f(2)[0] + 1 == 5", "f(2)[0] + 1", 5),
    ],
)
def test_plain_values_still_run_in_one_process(test: str, expr: str, value: Any) -> None:
    assert asserts.split_assert(test) == (expr, value)
