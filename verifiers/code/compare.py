"""Comparing what the program produced with what the ground truth expects.

Values arrive decoded from exact-type wire data (plain built-ins only), so `==` on
them can run no program code; the comparisons are still written out so that bool is
never equal to int and floats match within a tolerance.
"""

from __future__ import annotations

import math
from typing import Any

REL_TOL = 1e-6
ABS_TOL = 1e-9


def _is_number(x: Any) -> bool:
    return type(x) is int or type(x) is float


def numbers_close(a: int | float, b: int | float) -> bool:
    if type(a) is int and type(b) is int:
        return a == b
    try:
        fa, fb = float(a), float(b)
    except OverflowError:
        return a == b
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return math.isclose(fa, fb, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def json_equal(actual: Any, expected: Any) -> bool:
    """For call-based tests: JSON data, numbers compared with a tolerance."""
    if _is_number(actual) and _is_number(expected):
        return numbers_close(actual, expected)
    if type(actual) is not type(expected):
        return False
    if isinstance(actual, list):
        return len(actual) == len(expected) and all(json_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(json_equal(actual[k], expected[k]) for k in actual)
    return bool(actual == expected)


def python_equal(actual: Any, expected: Any) -> bool:
    """For `assert EXPR == LITERAL`: Python's equality on plain data, except that bool
    and int differ and floats match within a tolerance."""
    if _is_number(actual) and _is_number(expected):
        return numbers_close(actual, expected)
    if type(actual) is not type(expected):
        return False
    if type(actual) in (list, tuple):
        return len(actual) == len(expected) and all(python_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if type(actual) is dict:
        return actual.keys() == expected.keys() and all(python_equal(actual[k], expected[k]) for k in actual)
    if type(actual) is complex:
        return numbers_close(actual.real, expected.real) and numbers_close(actual.imag, expected.imag)
    return bool(actual == expected)


def _token_equal(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        fa, fb = float(a), float(b)
    except ValueError:
        return False
    return math.isfinite(fa) and math.isfinite(fb) and math.isclose(fa, fb, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _lines(text: str) -> list[list[str]]:
    lines = [line.split() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def stdout_equal(actual: str, expected: str) -> tuple[bool, str]:
    """Whitespace within a line and trailing blank lines are ignored; the number of
    lines is not; tokens that are both numbers match within a tolerance."""
    got, want = _lines(actual), _lines(expected)
    if len(got) != len(want):
        return False, f"expected {len(want)} line(s) of output, got {len(got)}"
    for n, (g, w) in enumerate(zip(got, want, strict=True), 1):
        if len(g) != len(w) or not all(_token_equal(a, b) for a, b in zip(g, w, strict=True)):
            return False, f"line {n} differs"
    return True, ""
