"""Class 5: integers compare exactly, a tolerance applies only where the expected
value is a float, and bool is a number only where Python's `==` decides (an assert),
never in call-based JSON. Families of near misses, generated from the rule, in each of
the comparator's three entry points and through the verifier."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.code import compare
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_formats import needs_gxx, needs_node

INTS = [0, 1, -1, 7, 1000, 123456789, -123456789, 10**9 + 7, 2**31 - 1, 2**53, 2**53 + 1, 10**18, 10**30, -(10**40)]


def _near_misses(n: int) -> list[int]:
    """Ints a relative tolerance of 1e-6 (or 1e-5, as APPS has) would let through."""
    step = max(1, abs(n) // 10**7)
    return sorted({n + 1, n - 1, n + step, n - step, n + max(1, abs(n) // 10**6), n - max(1, abs(n) // 10**6)} - {n})


INT_MISSES = [(n, m) for n in INTS for m in _near_misses(n)]


@pytest.mark.parametrize(("expected", "actual"), INT_MISSES)
def test_near_int_fails_everywhere(expected: int, actual: int) -> None:
    assert not compare.python_equal(actual, expected)
    assert not compare.json_equal(actual, expected)
    assert not compare.json_equal([actual], [expected])
    assert not compare.python_equal((1, actual), (1, expected))
    assert not compare.token_equal(str(actual), str(expected))
    assert not compare.stdout_equal(f"1 {actual}\n", f"1 {expected}\n")[0]


@pytest.mark.parametrize("n", INTS)
def test_equal_int_passes_everywhere(n: int) -> None:
    assert compare.python_equal(n, n) and compare.json_equal(n, n) and compare.token_equal(str(n), str(n))
    assert compare.stdout_equal(f"{n}\r\n", f"{n}\n") == (True, "")


@pytest.mark.parametrize("n", INTS)
def test_float_for_int_only_when_integral_and_exact(n: int) -> None:
    as_float = float(n)
    assert compare.python_equal(as_float, n) is (as_float == n)  # 2**53 + 1 has no float
    assert compare.json_equal(as_float, n) is (as_float == n)
    for off in (0.5, 1e-9 * max(1, abs(n)), 1e-7):
        if as_float + off != as_float:
            assert not compare.python_equal(as_float + off, n)
            assert not compare.json_equal(as_float + off, n)
    for bad in (math.nan, math.inf, -math.inf):
        assert not compare.python_equal(bad, n) and not compare.json_equal(bad, n)


@pytest.mark.parametrize("n", INTS)
@pytest.mark.parametrize("spelling", ["{}.0", "{}e0", "{}.", "{}.000", "0x{}", "{}_0", "{} ", "{}L", "{}.5"])
def test_stdout_int_token_takes_a_numeral_of_its_exact_value(n: int, spelling: str) -> None:
    # LiveCodeBench's Decimal comparison: 240.0 is 240; hex, underscores and suffixes are text.
    token = spelling.format(n).strip()
    assert compare.token_equal(token, str(n)) is (spelling in ("{}.0", "{}e0", "{}.", "{}.000", "{} "))


@pytest.mark.parametrize(
    ("got", "want"), [("007", "7"), ("+7", "7"), ("-0", "0"), ("+0", "-0"), ("000", "0"), ("-007", "-7")]
)
def test_stdout_int_tokens_compare_by_value(got: str, want: str) -> None:
    assert compare.token_equal(got, want)
    # the other way round only where the expected token is not zero-padded (`007`: a code)
    padded = got.lstrip("+-").startswith("0") and len(got.lstrip("+-")) > 1
    assert compare.token_equal(want, got) is not padded


# A bool never stands in for an expected number (nor a float for an expected bool).
BOOL_FOR_NUMBER: list[tuple[Any, Any]] = [
    (True, 1),
    (False, 0),
    (True, 1.0),
    (1.0, True),
    ([True], [1]),
    ({"a": True}, {"a": 1}),
    ({True}, {1}),
    ((1, True), (1, 1)),
]


@pytest.mark.parametrize(("actual", "expected"), BOOL_FOR_NUMBER)
def test_bool_is_not_a_number(actual: Any, expected: Any) -> None:
    assert not compare.python_equal(actual, expected)
    if type(expected) in (bool, int, float, list):
        assert not compare.json_equal(actual, expected)


# The int 1 or 0 a C-style predicate returns, where a bool is expected: equal to an
# assert (as Python's `==`), never in call-based JSON.
INT_FOR_BOOL: list[tuple[Any, Any]] = [
    (1, True),
    (0, False),
    ((0,), (False,)),
    ([1, 0], [True, False]),
    ({"a": 1}, {"a": True}),
    ({1: "x"}, {True: "x"}),
    (frozenset({(0, 1)}), frozenset({(False, True)})),
]


@pytest.mark.parametrize(("actual", "expected"), INT_FOR_BOOL)
def test_an_int_stands_for_a_bool_in_an_assert_only(actual: Any, expected: Any) -> None:
    assert compare.python_equal(actual, expected) is (actual == expected) is True
    if type(expected) in (bool, int, float, list):
        assert not compare.json_equal(actual, expected)


BOOL_MISSES: list[tuple[Any, Any]] = [
    (True, 2),
    (2, True),
    (False, 1),
    (True, 0.5),
    (1.5, True),
    (0.0000001, False),  # an expected bool asks for no tolerance
    ([True, 2], [1, 1]),
    ({True}, {2}),
    (True, "True"),
    (None, False),
    ((True,), [1]),
]


@pytest.mark.parametrize(("actual", "expected"), BOOL_MISSES)
def test_a_bool_an_assert_would_fail_fails(actual: Any, expected: Any) -> None:
    assert not compare.python_equal(actual, expected)
    if float not in (type(actual), type(expected)):  # an expected float has its tolerance
        assert not compare.python_equal(expected, actual)


FLOATS = [0.1, 1.0, -2.5, 1 / 3, 123456.789, 1e-12, 6.02e23, -1e300, 1e-300, 0.0]


@pytest.mark.parametrize("e", FLOATS)
def test_float_tolerance_applies_where_expected_is_float(e: float) -> None:
    tol = max(compare.REL_TOL * abs(e), compare.ABS_TOL)
    for inside in (e + tol * 0.5, e - tol * 0.5, e):
        assert compare.python_equal(inside, e) and compare.json_equal(inside, e)
        assert compare.token_equal(repr(inside), repr(e))
    for outside in (e + tol * 4, e - tol * 4):
        assert not compare.python_equal(outside, e) and not compare.json_equal(outside, e)
        assert not compare.token_equal(repr(outside), repr(e))


@pytest.mark.parametrize(
    ("actual", "expected"), [(2, 2.0), (10**20, 1e20), (2**1024, 1.7976931348623157e308), (3, 3.0000001)]
)
def test_int_for_float_within_tolerance(actual: int, expected: float) -> None:
    assert compare.python_equal(actual, expected) and compare.json_equal(actual, expected)


@pytest.mark.parametrize("actual", [10**400, -(10**400), 10**309])
@pytest.mark.parametrize("expected", [1.0, 1e308, -1e308, math.inf, math.nan])
def test_ints_past_float_range(actual: int, expected: float) -> None:
    assert not compare.python_equal(actual, expected)


@pytest.mark.parametrize(("a", "e"), [(math.nan, math.nan), (math.inf, math.inf), (-math.inf, -math.inf)])
def test_special_floats_match_only_themselves(a: float, e: float) -> None:
    assert compare.python_equal(a, e)
    for other in (0.0, 1e308, -a if not math.isnan(a) else 1.0):
        assert not compare.python_equal(other, e)


@settings(max_examples=300, deadline=None)
@given(st.integers(), st.integers())
def test_ints_equal_iff_equal(a: int, b: int) -> None:
    assert compare.python_equal(a, b) is (a == b)
    assert compare.json_equal(a, b) is (a == b)
    assert compare.token_equal(str(a), str(b)) is (a == b)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**20), max_value=10**20), st.floats(allow_nan=True, allow_infinity=True))
def test_float_for_int_iff_exactly_equal(n: int, f: float) -> None:
    assert compare.python_equal(f, n) is (f == n)


@pytest.mark.parametrize(("actual", "expected"), [([1, 2], (1, 2)), ((1, 2), [1, 2]), ({1: 2}, [[1, 2]]), (b"a", "a")])
def test_container_types_are_exact(actual: Any, expected: Any) -> None:
    assert not compare.python_equal(actual, expected)


# ---------------------------------------------------------------- through the verifier

WRONG = 123456700
RIGHT = 123456789


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("value", [WRONG, RIGHT, float(RIGHT), float(WRONG), True, RIGHT + 1])
@pytest.mark.parametrize("mode", ["values", "call", "stdio"])
def test_modes_grade_ints_exactly(mode: str, value: Any) -> None:
    right = type(value) is not bool and value == RIGHT
    if mode == "stdio":
        gt: dict[str, Any] = {"inputs": ["\n"], "outputs": [f"{RIGHT}\n"]}
        program = f"print({value!r})"
    elif mode == "call":
        gt = {"fn_name": "f", "inputs": [[]], "outputs": [RIGHT]}
        program = f"def f():\n    return {value!r}\n"
    else:
        gt = {"tests": [f"assert f() == {RIGHT}"]}
        program = f"def f():\n    return {value!r}\n"
    out = grade(program, gt)
    assert out.score == (1.0 if right else 0.0), out.reason
    assert not out.mask


@needs_gxx
@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("printed", [str(WRONG), str(RIGHT), f"{RIGHT}.0", f"{RIGHT}.5", f"{RIGHT + 1}", f"0{RIGHT}"])
def test_cpp_stdout_ints_exact(printed: str) -> None:
    program = f'#include <cstdio>\nint main() {{ std::puts("{printed}"); }}\n'
    out = grade(program, {"inputs": [""], "outputs": [f"{RIGHT}\n"], "language": "cpp"})
    assert out.score == (1.0 if printed in (str(RIGHT), f"{RIGHT}.0", f"0{RIGHT}") else 0.0), out.reason


@needs_node
@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize(
    ("returned", "right"),
    [(str(WRONG), False), (str(RIGHT), True), ("true", False), ("1e-300", False), (f"{RIGHT}.00001", False)],
)
def test_javascript_call_ints_exact(returned: str, right: bool) -> None:
    program = f"function f() {{\n  return {returned};\n}}\n"
    gt = {"fn_name": "f", "inputs": [[]], "outputs": [RIGHT], "language": "javascript"}
    assert grade(program, gt).score == (1.0 if right else 0.0)


# A float answer near 0 printed to another precision than the reference's: judges that
# take absolute or relative error 1e-6 (testlib's rcmp6) accept these; a purely relative
# tolerance would turn each into a 0 for a correct program.
NEAR_ZERO = [
    ("0.000000", "0.0000004", True),
    ("0.000000", "-0.0000004", True),
    ("0.000001", "0.0000014", True),
    ("0.000001", "0.00000149", True),
    ("-0.000000", "0.000000", True),
    ("0.000000", "4e-7", True),
    ("0.0", "0.000002", False),
    ("0.000001", "0.0000031", False),
    ("0.000000", "1e-5", False),
]


@pytest.mark.parametrize(("expected", "printed", "right"), NEAR_ZERO)
def test_near_zero_floats_take_an_absolute_tolerance(expected: str, printed: str, right: bool) -> None:
    assert compare.token_equal(printed, expected) is right
    assert compare.python_equal(float(printed), float(expected)) is right
    assert compare.json_equal(float(printed), float(expected)) is right


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize(("expected", "printed", "right"), NEAR_ZERO[::2])
@pytest.mark.parametrize("mode", ["call", "stdio"])
def test_near_zero_floats_through_the_verifier(mode: str, expected: str, printed: str, right: bool) -> None:
    if mode == "stdio":
        gt: dict[str, Any] = {"inputs": ["\n"], "outputs": [f"{expected}\n"]}
        program = f"print({printed!r})"
    else:
        gt = {"fn_name": "f", "inputs": [[]], "outputs": [float(expected)]}
        program = f"def f():\n    return {printed}\n"
    out = grade(program, gt)
    assert out.score == (1.0 if right else 0.0) and not out.mask, out.reason


# (program, assert-style tests, call-based outputs for the same inputs): an int where
# the expected value is a bool.
BOOL_PROGRAMS = {
    "odd_as_remainder": (
        "def f(n):\n    return n % 2\n",
        ["assert f(3) == True", "assert f(4) == False"],
        [True, False],
    ),
    "odd_as_bit": ("def f(n):\n    return n & 1\n", ["assert f(3) == True", "assert f(8) == False"], [True, False]),
    "found_as_count": (
        "def f(n):\n    return [1, 2, 3].count(n)\n",
        ["assert f(3) == True", "assert f(7) == False"],
        [True, False],
    ),
    "ints_in_a_list": (
        "def f(n):\n    return [n % 2, int(n % 3 == 1)]\n",
        ["assert f(3) == [True, False]", "assert f(4) == [False, True]"],
        [[True, False], [False, True]],
    ),
}


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("name", sorted(BOOL_PROGRAMS))
def test_an_assert_takes_an_int_for_a_bool_and_call_mode_does_not(name: str) -> None:
    program, tests, outputs = BOOL_PROGRAMS[name]
    assert grade(program, {"tests": tests}).score == 1.0
    inputs = [[int(t.split("f(")[1].split(")")[0])] for t in tests]
    out = grade(program, {"fn_name": "f", "inputs": inputs, "outputs": outputs})
    assert out.score == 0.0 and not out.mask, out.reason


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize(
    ("program", "tests"),
    [
        ("def f(n):\n    return n > 2\n", ["assert f(3) == 1", "assert f(1) == 0"]),
        ("def f(n):\n    return float(n > 2)\n", ["assert f(3) == True", "assert f(1) == False"]),
        ("def f(n):\n    return [n > 2]\n", ["assert f(3) == [1]", "assert f(1) == [0]"]),
    ],
    ids=["bool_for_count", "float_for_bool", "bools_for_counts"],
)
def test_a_bool_for_a_number_or_a_float_for_a_bool_fails_an_assert(program: str, tests: list[str]) -> None:
    out = grade(program, {"tests": tests})
    assert out.score == 0.0 and not out.mask, out.reason


@pytest.mark.usefixtures("isolated")
def test_a_wrong_bool_still_fails_an_assert() -> None:
    out = grade("def f(n):\n    return n % 3\n", {"tests": ["assert f(5) == True", "assert f(3) == False"]})
    assert out.score == 0.0 and not out.mask, out.reason
