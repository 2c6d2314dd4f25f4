"""Math-Verify's own regression suite (the `gold, pred, expected` tables of the tests in
its 0.9.0 sdist, `corpus/math_verify_suite.jsonl`): rlvr agrees with at least 245 of
the 259 labels, and every case where it does not is listed here with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier

SUITE = Path(__file__).parent / "corpus" / "math_verify_suite.jsonl"

# (gold, pred) -> why rlvr's answer differs from Math-Verify's label.
RLVR_IS_RIGHT = {
    ("$\\frac{1}{12}$", "$0.0833333333333333$"): "a rounded decimal for an exact gold (issue 11, class 6)",
    ("$(\\begin{pmatrix}\\frac{1}{3}\\\\ \\frac{1}{5} \\end{pmatrix})$",): "0.33 is not 1/3 (class 6)",
    ("$(\\frac{3}{5},\\frac{8}{3}]$", "$(0.6,2.6667]$"): "2.6667 is not 8/3 (class 6)",
    ("$9$", "Answer $ \n 9 \n $"): "a math span across lines still states 9",
    ("$9$", "Answer \\( \n 9 \n \\)"): "a math span across lines still states 9",
    ("$x \\in [-2,7]$", "$-2 \\\\le x \\\\le 7$"): "membership and a double inequality are one set (class 5)",
}
RLVR_DIFFERS = {
    ("$(1,3)$", "${1,3}$"): "the open interval (or point) (1,3) is not the two-element set {1,3}",
    ("$100%$",): "'increases by 100%' states no value with a copula; not read as the answer",
    (" So the answer is: \\[ \\boxed{32349} \\]",): "'32, 349' is read with its comma as a thousands separator",
    ("$12$",): "the closing chat-template junk ends the final sentence before the count is reached",
    ("2.74", "Soucis : 2,74 $ a.."): "a French sentence fragment with no marker of a final answer",
    ("1000.99", "not it's not 10 it's 1,000.99m²"): "a negated value first; the sentence is not read as an answer",
    ("$1\\leq|z|\\leq \\frac{3}{2}$",): "an inequality in |z| is not solved into a union of intervals",
    ("\\\\boxed{W(n) = 1 \\\\text{ and } W(n) = -1",): "the gold's escaped, unclosed box is not read as two equations",
}
TARGET = 245


def cases() -> list[dict[str, object]]:
    return [json.loads(line) for line in SUITE.read_text().splitlines()]


def listed(gold: str, pred: str) -> str | None:
    for table in (RLVR_IS_RIGHT, RLVR_DIFFERS):
        for key, why in table.items():
            if key[0] == gold and (len(key) == 1 or key[1] == pred):
                return why
    return None


@pytest.fixture(scope="module")
def graded() -> list[tuple[dict[str, object], bool]]:
    verifier, params = MathVerifier(), MathParams()
    out = []
    for case in cases():
        gold = verifier.prepare(params, case["gold"])
        outcome = verifier.verify(GradeInput("", str(case["pred"])), params, gold)
        out.append((case, outcome.score == 1.0))
    return out


def test_the_suite_is_all_there() -> None:
    assert len(cases()) == 259


def test_rlvr_agrees_with_at_least_245_labels(graded: list[tuple[dict[str, object], bool]]) -> None:
    agree = sum(got == bool(case["label"]) for case, got in graded)
    assert agree >= TARGET, agree


def test_every_disagreement_is_listed_with_its_reason(graded: list[tuple[dict[str, object], bool]]) -> None:
    unlisted = [
        (case["gold"], case["pred"], case["label"])
        for case, got in graded
        if got != bool(case["label"]) and listed(str(case["gold"]), str(case["pred"])) is None
    ]
    assert not unlisted, unlisted
