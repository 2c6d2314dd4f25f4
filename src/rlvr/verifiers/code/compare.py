"""Comparing what the program produced with what the ground truth expects.

The rules (the verifier's description carries them, beside what common judges do):

- The expected value decides how numbers compare. An expected `int` matches only an
  equal `int`, or a `float` that is integral and exactly equal (`3.0` for `3`); no
  tolerance, so 123456700 is not 123456789. An expected `float` matches an `int` or a
  `float` within `max(REL_TOL * |expected|, ABS_TOL)`, absolute or relative error
  1e-6 as testlib's checkers have it (a value near 0 printed to another precision,
  `0.0000004` for `0.000000`, is right); `nan` matches only `nan`, an infinity only
  itself.
- `bool` is not a number here: `True` never stands in for an expected `1` (a count of
  one). An expected bool in an assert's comparison (`python_equal`) takes the int 1 or 0
  too, the truth value a C-style predicate returns (`assert is_odd(3) == True` passes
  for `n % 2`, as Python's `==` and so MBPP's harness have it); in call-based JSON it
  takes only itself (`true` is not `1`, as LeetCode's serialised answers compare).
- Containers match by exact type (a list is not a tuple), length and members; set
  members and dict keys are matched by Python equality, then by these rules. Where a
  ground truth says its call-based outputs are wrapped in a list of one
  (`outputs_wrapped`, as APPS and TACO store them), the value inside passes too, as
  their harness accepts `outputs[i][0]` (`grading`).
- stdout: lines split on `\\n` (a CRLF is one line end), tokens on whitespace, trailing
  blank lines ignored, the number of lines and of tokens per line not. A token that is
  an integer in the expected output must be an integer of the same value in the
  program's; one that is a decimal or exponent numeral matches any numeral within the
  float tolerance; any other token matches only itself.

Every function here is total: values come from the program (decoded from exact-type
wire data, plain built-ins only, so `==` on them runs no program code), and whatever
they hold, a comparison answers True or False and never raises.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

REL_TOL = 1e-6
ABS_TOL = 1e-6
# A sentinel no decoded value can be equal to.
_MISSING = object()


def float_close(actual: int | float, expected: float) -> bool:
    """Whether `actual` is within the tolerance of the float `expected`."""
    if math.isnan(expected):
        return type(actual) is float and math.isnan(actual)
    if math.isinf(expected):
        return bool(actual == expected)
    tol = max(REL_TOL * abs(expected), ABS_TOL)
    try:
        return abs(actual - expected) <= tol  # nan and inf compare False
    except OverflowError:  # an int past the float range: compare exactly
        return abs(Fraction(actual) - Fraction(expected)) <= tol


def number_equal(actual: Any, expected: int | float) -> bool:
    """The number rules above; `expected` is an exact `int` or `float`."""
    if type(actual) is not int and type(actual) is not float:
        return False
    if type(expected) is int:
        return bool(actual == expected)  # int == float is exact in Python
    return float_close(actual, expected)


def json_equal(actual: Any, expected: Any) -> bool:
    """For call-based tests: JSON data (null, bool, numbers, strings, lists, objects)."""
    te = type(expected)
    if te is int or te is float:
        return number_equal(actual, expected)
    if type(actual) is not te:
        return False
    if te is list:
        return len(actual) == len(expected) and all(json_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if te is dict:
        return _dicts_equal(actual, expected, json_equal)
    return te in (str, bool, type(None)) and bool(actual == expected)


def python_equal(actual: Any, expected: Any) -> bool:
    """For `assert EXPR == LITERAL`: the literal's plain data, by the rules above."""
    te = type(expected)
    if te is int or te is float:
        return number_equal(actual, expected)
    if te is bool:
        return (type(actual) is bool or type(actual) is int) and bool(actual == expected)
    if type(actual) is not te:
        return False
    if te is list or te is tuple:
        return len(actual) == len(expected) and all(python_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if te is dict:
        return _dicts_equal(actual, expected, python_equal)
    if te is set or te is frozenset:
        return _sets_equal(actual, expected)
    if te is complex:
        return float_close(actual.real, expected.real) and float_close(actual.imag, expected.imag)
    return te in (str, bytes, type(None), type(...)) and bool(actual == expected)


def _matching(member: Any, pool: dict[Any, Any]) -> Any:
    """The member of the trusted `pool` that Python finds equal to `member`."""
    try:
        return pool.get(member, _MISSING)
    except TypeError:  # unhashable: equal to no member of a set or key of a dict
        return _MISSING


def _sets_equal(actual: Any, expected: Any) -> bool:
    # Each member finds its counterpart by Python equality (hash, then ==) and must
    # then match it by the rules too, as every other value does. Members of a set are
    # distinct, so equal sizes and a counterpart for each make a one-to-one match.
    if len(actual) != len(expected):
        return False
    pool = {e: e for e in expected}
    for member in actual:
        found = _matching(member, pool)
        if found is _MISSING or not python_equal(member, found):
            return False
    return True


def _dicts_equal(actual: Any, expected: Any, equal: Callable[[Any, Any], bool]) -> bool:
    if len(actual) != len(expected):
        return False
    keys = {k: k for k in expected}
    for key, value in actual.items():
        found = _matching(key, keys)
        if found is _MISSING or not python_equal(key, found) or not equal(value, expected[found]):
            return False
    return True


# ---------------------------------------------------------------- stdout


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def numeral_kind(token: str) -> str | None:
    """`int` for `[+-]digits`, `float` for a decimal or exponent numeral (`1.5`, `.5`,
    `2.`, `1e-9`), None for anything else (`nan`, `inf`, `1_000`, `0x1f`, non-ASCII digits)."""
    body = token[1:] if token[:1] in ("+", "-") else token
    mantissa, exp_mark, exponent = body.lower().partition("e")
    if exp_mark and not _digits(exponent[1:] if exponent[:1] in ("+", "-") else exponent):
        return None
    whole, dot, frac = mantissa.partition(".")
    if not (whole or frac) or (whole and not _digits(whole)) or (frac and not _digits(frac)):
        return None
    return "float" if dot or exp_mark else "int"


def _int_value(token: str) -> tuple[bool, str]:
    """An integer token as (negative, digits without leading zeros): compared as text,
    so any length costs linear time and `-0` is `0`."""
    digits = token.lstrip("+-").lstrip("0")
    return token.startswith("-") and digits != "", digits


def token_equal(got: str, want: str) -> bool:
    if got == want:
        return True
    kind = numeral_kind(want)
    if kind is None:
        return False
    got_kind = numeral_kind(got)
    if kind == "int":
        return got_kind == "int" and _int_value(got) == _int_value(want)
    return got_kind is not None and float_close(float(got), float(want))


def _lines(text: str) -> list[list[str]]:
    # A lone CR is whitespace within a line (str.split), as a judge reading tokens sees it.
    lines = [line.split() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def stdout_equal(actual: str, expected: str) -> tuple[bool, str]:
    """Whether the output matches (the rules above), and if not, where it first differs."""
    got, want = _lines(actual), _lines(expected)
    if len(got) != len(want):
        return False, f"expected {len(want)} line(s) of output, got {len(got)}"
    for n, (g, w) in enumerate(zip(got, want, strict=True), 1):
        if len(g) != len(w) or not all(token_equal(a, b) for a, b in zip(g, w, strict=True)):
            return False, f"line {n} differs"
    return True, ""
