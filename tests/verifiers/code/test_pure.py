"""The grader's half of an assert run as values (`rlvr.verifiers.code.pure`) gives the
verdict Python gives the same assert on the same plain value, for every shape it
takes and every kind of value; it never raises, and it bounds what a value can make
it compute."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.code import pure
from rlvr.verifiers.code.asserts import check_calls

# Asserts over one call of the program (`candidate(0)`).
ASSERTS = [
    "candidate(0) == 1",
    "candidate(0) != 1",
    "candidate(0) == 1.0",
    "candidate(0) == True",
    "candidate(0) is True",
    "candidate(0) is False",
    "candidate(0) is None",
    "candidate(0) is not None",
    "not candidate(0)",
    "candidate(0)",
    "candidate(0) or False",
    "candidate(0) and 1",
    "abs(candidate(0) - 0.5) < 1e-6",
    "round(candidate(0), 2) == 0.5",
    "candidate(0) < 2",
    "0 <= candidate(0) < 10",
    "candidate(0) == [1, 2]",
    "candidate(0) == (1, 2)",
    "candidate(0) == {1: 2}",
    "candidate(0) == {1, 2}",
    "candidate(0) == 'ab'",
    "tuple(candidate(0)) == (1, 2)",
    "list(candidate(0)) == [1, 2]",
    "sorted(candidate(0)) == [1, 2]",
    "set(candidate(0)) == {1, 2}",
    "sum(candidate(0)) == 3",
    "min(candidate(0)) == 1",
    "max(candidate(0)) == 2",
    "frozenset(candidate(0)) == frozenset([1, 2])",
    "len(tuple(candidate(0))) == 2",
    "candidate(0)[0] == 1",
    "candidate(0)[-1] == 2",
    "candidate(0)[1:] == [2]",
    "candidate(0)[::-1] == 'ba'",
    "candidate(0)['a'] == 1",
    "1 in candidate(0)",
    "'a' not in candidate(0)",
    "candidate(0) * 2 == [1, 2, 1, 2]",
    "candidate(0) + 1 == 2",
    "candidate(0) // 2 == 0",
    "candidate(0) % 2 == 1",
    "candidate(0) ** 2 == 1",
    "-candidate(0) == -1",
    "+candidate(0) == 1",
    "candidate(0) / 2 == 0.5",
    "(candidate(0),) == (1,)",
    "[candidate(0), 2] == [1, 2]",
    "{candidate(0): 1} == {1: 1}",
    "candidate(0) == 3 * 5 * 7",
    "candidate(0) == 2.0 / 3.0",
    "candidate(0) == 'ab' + 'c'",
    "candidate(0) == [1] * 2",
    "candidate(0) == -(2 ** 3)",
    "candidate(0) == len('abc')",
    "candidate(0) == sorted([2, 1], reverse=True)",
    "candidate(0) == str(12)",
    "candidate(0) == int('3') + float('0.5')",
]
VALUES: list[Any] = [
    0,
    1,
    2,
    -1,
    3,
    105,
    10**30,
    1.0,
    0.5,
    0.500000001,
    2 / 3,
    3.5,
    -8,
    float("nan"),
    float("inf"),
    True,
    False,
    None,
    "",
    "a",
    "ab",
    "ba",
    "abc",
    "12",
    [1, 2],
    [2, 1],
    [],
    [1, 2, 1, 2],
    [1, 1],
    [None],
    [[1]],
    (1, 2),
    (),
    {1: 2},
    {"a": 1},
    {1, 2},
    frozenset({1, 2}),
    {},
]


def python_verdict(test: str, value: Any) -> bool:
    """What Python itself says of `assert TEST` with the program returning `value`."""
    try:
        return bool(eval(compile(test, "test", "eval"), {"candidate": lambda *_: value}))
    except Exception:
        return False


def judged_verdict(test: str, value: Any) -> bool:
    converted = check_calls(f"def check(candidate):\n    assert {test}\n", "f")
    assert converted is not None, test
    (expr,), (judgement,) = converted
    if expr.startswith("[*"):
        try:  # what the job returns: the call's items, or it fails
            value = [*value]
        except Exception:
            return False
    return judgement.holds(value)


@pytest.mark.parametrize("test", ASSERTS)
def test_the_grader_judges_as_python_does(test: str) -> None:
    disagree = [
        (repr(value), python_verdict(test, value))
        for value in VALUES
        if python_verdict(test, value) != judged_verdict(test, value)
    ]
    assert not disagree


# Plain data as the wire brings it: what a program's value can be once decoded.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, 2, 3, -1, 105]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1.0, 2 / 3, -0.0]),
    st.text(max_size=6),
    st.sampled_from(["a", "ab", "ba", "12"]),
)
PLAIN = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.frozensets(st.one_of(st.integers(-5, 5), st.text(max_size=2)), max_size=4).map(set),
        st.frozensets(st.integers(-5, 5), max_size=4),
        st.dictionaries(st.one_of(st.integers(-5, 5), st.text(max_size=2)), inner, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=PLAIN, test=st.sampled_from(ASSERTS))
def test_the_grader_judges_generated_values_as_python_does(test: str, value: Any) -> None:
    assert judged_verdict(test, value) == python_verdict(test, value)


def test_some_values_pass_and_some_fail_each_assert() -> None:
    """The differential above is not vacuous: no assert passes or fails for every value."""
    for test in ASSERTS:
        verdicts = {python_verdict(test, value) for value in VALUES}
        assert verdicts == {True, False}, test


def judgement(test: str) -> pure.Judged:
    converted = check_calls(f"def check(candidate):\n    assert {test}\n", "f")
    assert converted is not None, test
    return converted[1][0]


@pytest.mark.parametrize(
    ("test", "value"),
    [
        ("candidate(0) * 10**9 == ''", "ab"),
        ("10**9 * candidate(0) == []", [1]),
        ("candidate(0) * (10**6 + 1) == 'x'", "x"),
        ("2 ** candidate(0) > 0", 10**7),
        ("candidate(0) ** (10**7) > 0", 3),
        ("candidate(0) ** 2 > 0", 10**60000),
        ("set(candidate(0)) == {1, 2}", [k * (2**61 - 1) for k in range(1, 20_001)]),
        ("frozenset(candidate(0)) == frozenset()", [k * (2**61 - 1) for k in range(1, 20_001)]),
        ("len(set(candidate(0)[0])) == 1", [[k * (2**61 - 1) for k in range(1, 20_001)]]),
        ("candidate(0) % 2 == 0", "%2000000000d"),
        ("candidate(0) % 2 == 0", b"%2000000000d"),
        ("candidate(0) % (1,) == ''", "%.2000000000f"),
        ("round(candidate(0), -(10**9)) == 0", 7),
        ("round(5, -candidate(0)) == 0", 10**9),
    ],
    ids=[
        "repeat a str",
        "repeat a list",
        "repeat past the cap",
        "power of a value",
        "value to a power",
        "huge base",
        "set of colliding hashes",
        "frozenset of colliding hashes",
        "set inside",
        "format width",
        "bytes format width",
        "format precision",
        "round to far digits",
        "round to digits from the value",
    ],
)
def test_what_a_value_makes_the_grader_compute_is_bounded(test: str, value: Any) -> None:
    assert judgement(test).holds(value) is False


def test_small_powers_and_repeats_are_judged() -> None:
    assert judgement("candidate(0) == 2 ** 10").holds(1024)
    assert judgement("candidate(0) * 3 == 'aaa'").holds("a")
    assert judgement("candidate(0) ** 0.5 == 3.0").holds(9)
    assert judgement("set(candidate(0)) == {0, 2**61 - 1}").holds([0, 2**61 - 1] * 100)
    assert judgement("set(candidate(0)) == {1}").holds([1] * 100_000)
    assert judgement("len(frozenset(candidate(0))) == 32").holds([k * (2**61 - 1) for k in range(32)] * 3)
    assert judgement("round(candidate(0), -2) == 100").holds(123)
    assert judgement("candidate(0) % 7 == 3").holds(10)


def deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [deep(100_000), {"a": deep(50_000)}, [1] * 1_000_000, "x" * 1_000_000, 10**4000, float("nan"), object()],
    ids=["deep list", "deep dict", "long list", "long str", "big int", "nan", "an object"],
)
@pytest.mark.parametrize("test", [*ASSERTS[:20], "sorted(candidate(0)) == [1]", "sum(candidate(0)) == 1"])
def test_the_grader_never_raises(test: str, value: Any) -> None:
    assert judgement(test).holds(value) in (True, False)


def is_the_call(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "candidate"


def test_judging_leaves_the_tests_tree_as_it_was() -> None:
    tree = ast.parse("abs(candidate(1) - 2) < 1e-6", mode="eval").body
    before = ast.dump(tree)
    call, items, judged = pure.judged(tree, is_the_call)
    assert ast.dump(tree) == before
    assert ast.unparse(call) == "candidate(1)" and not items
    assert judged.source == "abs(candidate(1) - 2) < 1e-06"
    assert judged == pure.judged(tree, is_the_call)[2] and len({judged, pure.judged(tree, is_the_call)[2]}) == 1


@pytest.mark.parametrize(
    ("source", "is_constant"),
    [
        ("3 * 19", True),
        ("[1, 0 ** 0]", True),
        ("'ab' + 'c'", True),
        ("-(2 ** 3)", True),
        ("{'a': (1, 2.5, None)}", True),
        # The job evaluates arguments among the program's names: none may be named.
        ("sorted([2, 1])", False),
        ("len('ab')", False),
        ("[abs(-1)]", False),
        ("candidate(1)", False),
        ("[candidate(1)]", False),
        ("x", False),
        ("open('f')", False),
        ("[i for i in range(3)]", False),
        ("lambda: 1", False),
        ("f'{1}'", False),
        ("(1).real", False),
    ],
)
def test_constant_arguments(source: str, is_constant: bool) -> None:
    assert pure.constant(ast.parse(source, mode="eval").body) is is_constant
