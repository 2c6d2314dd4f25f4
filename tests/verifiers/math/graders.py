"""rlvr's and Math-Verify's verdicts on one labelled corpus row, as the corpus tests
compare them (`{gold, response}`, and the question where the row has one)."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier

_VERIFIER = MathVerifier()
_PARAMS = MathParams()


def rlvr_says_correct(row: dict[str, Any]) -> bool:
    item = GradeInput(row.get("question", ""), row["response"])
    return _VERIFIER.verify(item, _PARAMS, _VERIFIER.prepare(_PARAMS, row["gold"])).score == 1.0


def math_verify_says_correct(row: dict[str, Any]) -> bool:
    math_verify = pytest.importorskip("math_verify")
    try:
        gold = math_verify.parse(row["gold"])
        return bool(math_verify.verify(gold, math_verify.parse(row["response"])))
    except Exception:  # Math-Verify's own failures count against it, as in the bench
        return False
