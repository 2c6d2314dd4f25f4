"""Every row of the labelled table in `cases.py`, graded as a worker grades it."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier


def _load_cases() -> list[tuple[Any, ...]]:
    # Loaded by path: the test folders are not packages.
    spec = importlib.util.spec_from_file_location("math_cases", Path(__file__).with_name("cases.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.CASES)


CASES = _load_cases()
VERIFIER = MathVerifier()
# The labels say what a row is, not how fast it is graded on a loaded machine: a budget
# far above any row's grading time (ms here), yet finite, so that a row that really
# evaluated (a factorial of 10^10^10) would still show as `timeout`, not pass.
BUDGET_S = 20.0


def _id(case: tuple[Any, ...]) -> str:
    category, gold, response = case[0], case[1], case[2]
    return f"{category}:{gold[:20]}|{response[-30:]}"


def test_table_covers_every_category() -> None:
    counts = Counter(c[0] for c in CASES)
    assert len(CASES) >= 300
    required = {
        "integer", "fraction", "decimal_tolerance", "scientific", "thousands", "unicode", "trailing_punct",
        "units", "degrees", "percent", "radical", "pi", "log", "trig", "binom_factorial", "expression",
        "equation", "set", "tuple", "interval", "inequality", "matrix", "choice", "text", "extraction",
        "extraction_mode", "gold_format", "hedging", "self_correction", "dos",
    }  # fmt: skip
    assert required <= set(counts), required - set(counts)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_case(case: tuple[Any, ...]) -> None:
    _, gold, response, expected = case[:4]
    params = MathParams(**{"symbolic_budget_s": BUDGET_S, **(case[4] if len(case) > 4 else {})})
    prepared = VERIFIER.prepare(params, gold)
    outcome = VERIFIER.verify(GradeInput("", response), params, prepared)
    assert outcome.verdict.value == expected, (outcome.reason, outcome.details)
    assert outcome.score == (1.0 if expected == "correct" else 0.0)
    assert "stage" in outcome.details
