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
- Containers match by exact type (a list is not a tuple), length and members, except
  that `set` and `frozenset` are one family (Python's `==` and so MBPP's harness take a
  frozenset for a set literal), as `int` and `float` are; set members and dict keys are
  matched by Python equality, then by these rules. Where a ground truth says its
  call-based outputs are wrapped in a list of one (`outputs_wrapped`, as APPS and TACO
  store them), the value inside passes too, as their harness accepts `outputs[i][0]`
  (`grading`).
- stdout, as LiveCodeBench's grader reads it (APPS's takes these too): lines split on
  `\\n` (a CRLF is one line end), tokens on whitespace; blank lines before the first and
  after the last line of text are ignored (LiveCodeBench strips the whole output), the
  number of lines and of tokens per line are not. A token that is an integer in the
  expected output matches any numeral of exactly that value (`240`, `240.0`, `240.`,
  `2.4e2`, `+240`, `0240` for `240`, as LiveCodeBench's `Decimal` comparison has it; no
  tolerance, so 10**18 + 1 is not 10**18), except an expected token with a leading zero
  (`0011`, `007`: a bit string or a padded code), which matches only itself; one that is a decimal or exponent numeral
  matches any numeral within the float tolerance, or of exactly its value where it is
  past the float range (`1e400`); any other token matches only itself. A numeral is
  `[+-]digits[.digits][e[+-]digits]` in ASCII: `inf`, `nan`, `0x1p3`, `1_000` and
  non-ASCII digits are text (stricter than `Decimal`, which reads all but hex).

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
# A numeral's exponent longer than this has a value no expected token of a bounded
# length can spell (and is not read into an int: Python caps int() at 4300 digits).
MAX_EXPONENT_DIGITS = 18
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
    if te is set or te is frozenset:
        return (type(actual) is set or type(actual) is frozenset) and _sets_equal(actual, expected)
    if type(actual) is not te:
        return False
    if te is list or te is tuple:
        return len(actual) == len(expected) and all(python_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if te is dict:
        return _dicts_equal(actual, expected, python_equal)
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


def _exact_value(token: str) -> tuple[bool, str, int] | None:
    """A numeral's exact value as (negative, significant digits, exponent of the last
    one), zero as (False, "", 0); None where the exponent is past `MAX_EXPONENT_DIGITS`
    (no expected token of a bounded length has such a value). Text operations only: any
    length costs linear time, and no huge int or Decimal is built."""
    body = token[1:] if token[:1] in ("+", "-") else token
    mantissa, _, exponent = body.lower().partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    if not digits:
        return False, "", 0
    exp_digits = exponent.lstrip("+-").lstrip("0")
    if len(exp_digits) > MAX_EXPONENT_DIGITS:
        return None
    exp = int(exp_digits or "0") * (-1 if exponent.startswith("-") else 1)
    significant = digits.rstrip("0")
    return token.startswith("-"), significant, exp - len(frac) + len(digits) - len(significant)


def _exactly_equal(got: str, want: str) -> bool:
    value = _exact_value(want)
    return value is not None and _exact_value(got) == value


def token_equal(got: str, want: str) -> bool:
    if got == want:
        return True
    if _zero_padded(want):
        return False
    kind = numeral_kind(want)
    if kind is None or numeral_kind(got) is None:
        return False
    if kind == "int":
        return _exactly_equal(got, want)
    expected = float(want)
    if math.isinf(expected):  # a finite numeral past the float range: its exact value
        return _exactly_equal(got, want)
    return float_close(float(got), expected) or _exactly_equal(got, want)


def _zero_padded(token: str) -> bool:
    """Whether an expected token's digits start with a zero that carries meaning (`0011`,
    `007`, `-01.5`): a bit string or a padded code, where the answer without its zeros
    is wrong, so it is text (stricter than LiveCodeBench's `Decimal`)."""
    digits = token[1:] if token[:1] in "+-" else token
    return len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()


def _body(text: str) -> str:
    # Blank lines around the text, and a lone CR (whitespace within a line, as str.split
    # has it, as a judge reading tokens sees it), cut at C speed: a program printing a
    # mebibyte of newlines must not cost the grader a Python loop per line.
    return text.replace("\r\n", "\n").strip()


def _line_count(body: str) -> int:
    return body.count("\n") + 1 if body else 0


def _lines(body: str) -> list[list[str]]:
    return [line.split() for line in body.split("\n")] if body else []


def stdout_equal(actual: str, expected: str) -> tuple[bool, str]:
    """Whether the output matches (the rules above), and if not, where it first differs."""
    got_body, want_body = _body(actual), _body(expected)
    if _line_count(got_body) != _line_count(want_body):
        return False, f"expected {_line_count(want_body)} line(s) of output, got {_line_count(got_body)}"
    got, want = _lines(got_body), _lines(want_body)
    for n, (g, w) in enumerate(zip(got, want, strict=True), 1):
        if len(g) != len(w) or not all(token_equal(a, b) for a, b in zip(g, w, strict=True)):
            return False, f"line {n} differs"
    return True, ""
