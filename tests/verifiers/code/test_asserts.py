"""Which assert tests run as values (`rlvr.verifiers.code.asserts`): only shapes whose
meaning a value and a literal compared outside the sandbox keep; everything else
stays a split test."""

from __future__ import annotations

import pytest

from rlvr.verifiers.code.asserts import check_calls, split_assert

CHECK = "def check(candidate):\n{body}\n"


def body(*lines: str) -> str:
    return "\n".join("    " + line for line in lines)


@pytest.mark.parametrize(
    ("test", "exprs", "expected"),
    [
        (CHECK.format(body=body("assert candidate(1) == 2")), ["f(1)"], [2]),
        (CHECK.format(body=body("assert 2 == candidate(1)")), ["f(1)"], [2]),
        (CHECK.format(body=body("assert candidate(1, 'a') == [1, (2,)], 'msg'")), ["f(1, 'a')"], [[1, (2,)]]),
        (CHECK.format(body=body('"""doc"""', "assert True", "assert candidate() == None")), ["f()"], [None]),
        (CHECK.format(body=body("assert candidate(-1.5) == {1: {2}}")), ["f(-1.5)"], [{1: {2}}]),
        ("METADATA = {'author': 'x'}\n\n" + CHECK.format(body=body("assert candidate(3) == 3")), ["f(3)"], [3]),
        ('"""module doc"""\n' + CHECK.format(body=body("assert candidate([]) == []")), ["f([])"], [[]]),
        (CHECK.format(body=body("assert candidate('\\u00e9\\n') == 'x'")), ["f('é\\n')"], ["x"]),
        ("def check(c):\n    assert c(1) == 1\n    assert c(2) == 4\n", ["f(1)", "f(2)"], [1, 4]),
    ],
)
def test_checks_of_literal_calls_become_values(test: str, exprs: list[str], expected: list[object]) -> None:
    assert check_calls(test, "f") == (exprs, expected)


@pytest.mark.parametrize(
    "test",
    [
        CHECK.format(body=body("assert candidate(1)")),  # truthiness, not equality
        CHECK.format(body=body("assert not candidate(1)")),
        CHECK.format(body=body("assert candidate(1) is True")),
        CHECK.format(body=body("assert candidate(1) != 2")),
        CHECK.format(body=body("assert candidate(1) == 2 == 2")),
        CHECK.format(body=body("assert abs(candidate(1) - 2) < 1e-6")),
        CHECK.format(body=body("assert candidate(x) == 2")),  # a name, not a literal
        CHECK.format(body=body("assert candidate(1 + 1) == 2")),
        CHECK.format(body=body("assert candidate(*[1]) == 2")),
        CHECK.format(body=body("assert candidate(a=1) == 2")),
        CHECK.format(body=body("assert candidate(1) == candidate(2)")),
        CHECK.format(body=body("assert candidate(1) == [i for i in range(2)]")),
        CHECK.format(body=body("assert other(1) == 2")),
        CHECK.format(body=body("x = 1", "assert candidate(x) == 2")),
        CHECK.format(body=body("for i in range(3):", "    assert candidate(i) == i")),
        CHECK.format(body=body("import math", "assert candidate(1) == 2")),
        CHECK.format(body=body("print(1)", "assert candidate(1) == 2")),
        CHECK.format(body=body("assert True")),  # no call at all
        CHECK.format(body=body('"""only a docstring"""')),
        "def check(candidate, extra):\n    assert candidate(1) == 2\n",
        "def check(candidate=None):\n    assert candidate(1) == 2\n",
        "def check(*candidate):\n    assert candidate(1) == 2\n",
        "@decorated\ndef check(candidate):\n    assert candidate(1) == 2\n",
        "def verify(candidate):\n    assert candidate(1) == 2\n",
        CHECK.format(body=body("assert candidate(1) == 2")) * 2,  # two checks
        "import math\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "helper = lambda: 2\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "LIMIT = compute()\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "a.b = 1\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "def helper():\n    return 2\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "check(f)\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "def check(candidate):\n    assert candidate(1 == 2",
        "def check(candidate):\n" + "    assert candidate(" + "[" * 300 + "]" * 300 + ") == 1\n",
        "",
    ],
)
def test_anything_else_stays_a_split_test(test: str) -> None:
    assert check_calls(test, "f") is None


@pytest.mark.parametrize(
    ("test", "split"),
    [
        ("assert f(1) == 2", ("f(1)", 2)),
        ("assert 2 == f(1)", ("f(1)", 2)),
        ("assert f(x) == [1, 'a']", ("f(x)", [1, "a"])),
        ("assert f(1)", None),
        ("assert f(1) == g(2)", None),
        ("x = 1", None),
        ("assert f(1) == 2\nassert f(2) == 3", None),
        ("assert f(1 ==", None),
    ],
)
def test_single_asserts(test: str, split: tuple[str, object] | None) -> None:
    assert split_assert(test) == split
