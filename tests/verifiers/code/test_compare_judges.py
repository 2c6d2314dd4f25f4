"""Round 3, class 6: correct programs the comparison refused. A frozenset where an
assert's literal is a set, a leading blank line in stdout and `240.0` for an expected
`240` pass, as the datasets' own graders (MBPP's `==`, LiveCodeBench's stripped lines
and `Decimal` tokens) have them; every wrong answer near them still fails, with
`Decimal` itself as the oracle of which numerals are equal."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.code import compare
from tests.verifiers.code.conftest import grade

# ---------------------------------------------------------------- set and frozenset

SET_FAMILY: list[tuple[Any, Any]] = [
    (frozenset({1, 2}), {1, 2}),
    ({1, 2}, frozenset({1, 2})),
    (frozenset(), set()),
    ({"a": frozenset({1})}, {"a": {1}}),
    ([frozenset({(1, 2)})], [{(1, 2)}]),
    ({frozenset({1})}, {frozenset({1})}),
    (frozenset({1, 0}), {True, False}),  # and an int for a bool, as in any assert
]


@pytest.mark.parametrize(("actual", "expected"), SET_FAMILY)
def test_set_and_frozenset_are_one_family(actual: Any, expected: Any) -> None:
    assert compare.python_equal(actual, expected)


SET_MISSES: list[tuple[Any, Any]] = [
    (frozenset({1, 2}), {1, 3}),
    (frozenset({1}), {1, 2}),
    ([1, 2], {1, 2}),
    ((1, 2), frozenset({1, 2})),
    ({1: None, 2: None}, {1, 2}),
    (frozenset({1, 2}), [1, 2]),
    (frozenset({True}), {1}),  # a bool never stands in for an expected number
    (frozenset({"1"}), {1}),
    (frozenset({1.0000001}), {1.0}),  # members are found by Python equality, as MBPP's `==`
]


@pytest.mark.parametrize(("actual", "expected"), SET_MISSES)
def test_other_containers_and_members_still_differ(actual: Any, expected: Any) -> None:
    assert not compare.python_equal(actual, expected)


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize(
    ("test", "right"),
    [
        ("assert f(2) == {0, 1}", True),
        ("assert g(2) == {2: {2}}", True),
        ("assert [f(1)] == [{0}]", True),
        ("assert f(2) == {0, 1} and True", True),
        ("assert f(2) == {0, 2}", False),
        ("assert f(2) == [0, 1]", False),
        ("assert g(2) == {2: {3}}", False),
    ],
)
def test_a_frozenset_passes_a_set_assert_through_the_verifier(test: str, right: bool) -> None:
    program = "def f(n):\n    return frozenset(range(n))\n\ndef g(n):\n    return {n: frozenset({n})}\n"
    out = grade(program, {"tests": [test]})
    assert (out.score, out.mask) == (1.0 if right else 0.0, False), out.reason


# ---------------------------------------------------------------- stdout lines

LINES: list[tuple[str, str, bool]] = [
    ("\n240\n", "240\n", True),
    ("\n\n  \n240\n5\n", "240\n5\n", True),
    ("\r\n240\r\n", "240", True),
    ("240\n\n\n", "\n240", True),
    ("   \n\t\n", "", True),
    ("240\n\n5\n", "240\n5\n", False),  # a blank line between lines of text counts
    ("240 5\n", "240\n5\n", False),
    ("\n240\n", "240\n6\n", False),
    ("", "240\n", False),
]


@pytest.mark.parametrize(("got", "want", "right"), LINES)
def test_blank_lines_around_the_output_are_ignored(got: str, want: str, right: bool) -> None:
    assert compare.stdout_equal(got, want)[0] is right


# ---------------------------------------------------------------- stdout numbers

# (printed, expected, passes): each spelling decided as LiveCodeBench's Decimal tokens
# decide it, except that `inf`, `nan`, underscores and non-ASCII digits are text here.
NUMBERS: list[tuple[str, str, bool]] = [
    ("240.0", "240", True),
    ("240.", "240", True),
    ("240.000", "240", True),
    ("2.4e2", "240", True),
    ("2.4E+2", "240", True),
    ("24000e-2", "240", True),
    ("+240", "240", True),
    ("0240", "240", True),
    ("-0.0", "0", True),
    ("0e999999999999999999999999", "0", True),
    ("1e18", "1000000000000000000", True),
    ("1000000000000000001", "1000000000000000000", False),
    ("1.000000000000000001e18", "1000000000000000000", False),
    ("999999999999999999.9", "1000000000000000000", False),
    ("240.0000001", "240", False),
    ("239.9999999", "240", False),
    ("240.5", "240", False),
    ("-240", "240", False),
    ("2.4e3", "240", False),
    ("1e-400", "0", False),
    ("0x1p3", "8", False),
    ("0xF0", "240", False),
    ("24_0", "240", False),
    ("٢٤٠", "240", False),
    ("inf", "240", False),
    ("Infinity", "inf", False),
    ("nan", "nan", True),  # the same text
    ("NaN", "nan", False),
    ("1e400", "1" + "0" * 400, True),
    ("1e401", "1" + "0" * 400, False),
    ("1e500", "1e400", False),
    ("10e399", "1e400", True),
    ("1e99999999999999999999", "1e400", False),
    ("inf", "1e400", False),
    ("0.30000000000000004", "0.3", True),  # a decimal expected: the float tolerance
    ("0.3000011", "0.3", False),
    ("3e-1", "0.3", True),
    ("1e99999999999999999999", "1.5", False),
]


@pytest.mark.parametrize(("got", "want", "right"), NUMBERS)
def test_numeric_tokens(got: str, want: str, right: bool) -> None:
    assert compare.token_equal(got, want) is right
    assert compare.stdout_equal(f"\n1 {got}\n", f"1 {want}\n")[0] is right


signs = st.sampled_from(["", "-", "+"])
exponents = st.text("0123456789", min_size=1, max_size=3)
ascii_digits = st.text("0123456789", min_size=1, max_size=25)
int_tokens = st.builds(lambda s, d: s + d, st.sampled_from(["", "-", "+"]), ascii_digits)
numerals = st.builds(
    lambda sign, whole, dot, frac, exp: sign + whole + dot + frac + exp,
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", max_size=20),
    st.sampled_from(["", "."]),
    st.text("0123456789", max_size=20),
    st.one_of(st.just(""), st.builds(lambda m, s, d: m + s + d, st.sampled_from("eE"), signs, exponents)),
).filter(lambda t: compare.numeral_kind(t) is not None)


@settings(max_examples=500, deadline=None)
@given(numerals, int_tokens)
def test_an_expected_integer_takes_exactly_what_decimal_finds_equal(got: str, want: str) -> None:
    # but a zero-padded one (`0011`) is a code or a bit string, and only itself spells it
    assert compare.token_equal(got, want) is (got == want if _padded(want) else Decimal(got) == Decimal(want))


def _padded(token: str) -> bool:
    digits = token.lstrip("+-")
    return len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()


@settings(max_examples=300, deadline=None)
@given(st.one_of(numerals, int_tokens))
def test_every_numeral_is_one_for_decimal_and_equal_to_its_respellings(token: str) -> None:
    value = Decimal(token)  # never more lenient than LiveCodeBench in what is a number
    for respelled in (token, f"{value:e}", f"{value:f}", str(value)):
        assert compare.token_equal(respelled, token) is (respelled == token or not _padded(token))


@pytest.mark.parametrize(
    ("got", "want"), [("11", "0011"), ("7", "007"), ("110", "0110"), ("-1.5", "-01.5"), ("11.0", "0011"), ("+7", "07")]
)
def test_a_zero_padded_expected_token_takes_only_itself(got: str, want: str) -> None:
    assert not compare.token_equal(got, want)
    assert compare.token_equal(want, want)
    assert compare.stdout_equal(f"\n{want}\n\n", want) == (True, "")


def test_blank_lines_around_the_output_cost_no_loop_per_line() -> None:
    # a mebibyte of newlines is cut at C speed (a Python loop per line took ~1 s per test)
    assert compare.stdout_equal("\n" * (1 << 20) + "240\n" + "\n" * (1 << 20), "240") == (True, "")
    assert compare.stdout_equal("\n\n" + "1\n\n2", "1\n2")[0] is False  # an interior blank line counts


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize(
    ("printed", "right"),
    [("print(); print(240.0)", True), ("print(float(10**18))", False), ("print(240.5)", False), ("print(2.4e2)", True)],
)
def test_numbers_and_blank_lines_through_the_verifier(printed: str, right: bool) -> None:
    gt = {"inputs": ["\n"], "outputs": ["240\n" if "10**18" not in printed else f"{10**18 + 1}\n"]}
    out = grade(printed, gt)
    assert (out.score, out.mask) == (1.0 if right else 0.0, False), out.reason
