"""Real theorems: each known proof earns 1, each known non-proof 0 with coqc's error."""

from __future__ import annotations

from typing import Any

import pytest

from tests.verifiers.proof.conftest import grade
from tests.verifiers.proof.theorems import THEOREMS

pytestmark = pytest.mark.usefixtures("coq")
IDS = [gt["name"] for gt, _, _ in THEOREMS]


@pytest.mark.parametrize(("gt", "proof"), [(gt, proof) for gt, proof, _ in THEOREMS], ids=IDS)
def test_known_proof_checks(gt: dict[str, Any], proof: str) -> None:
    out = grade(proof, gt)
    assert (out.score, out.verdict, out.mask) == (1.0, "correct", False), out.reason
    assert out.signals == ()


@pytest.mark.parametrize(("gt", "non_proof"), [(gt, bad) for gt, _, bad in THEOREMS], ids=IDS)
def test_known_non_proof_is_incorrect_with_coqs_error(gt: dict[str, Any], non_proof: str) -> None:
    out = grade(non_proof, gt)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert "Error" in out.reason and out.reason.startswith("line ")
    assert out.signals == ()


def test_script_is_the_last_coq_fence() -> None:
    response = (
        "First try:\n```coq\nProof. intros. reflexivity. Qed.\n```\nBetter:\n"
        "```coq\nProof. intros n m. apply Nat.add_comm. Qed.\n```\nDone."
    )
    assert grade(response).score == 1.0
    assert grade("```coq\nProof. intros n m. apply Nat.add_comm. Qed.\n```\n```coq\nProof. Qed.\n```").score == 0.0


def test_error_line_counts_in_the_responses_own_text() -> None:
    out = grade("Proof.\n  intros n m.\n  apply no_such_lemma.\nQed.")
    assert out.reason.startswith("line 3,") and "no_such_lemma" in out.reason


def test_empty_response_is_no_answer() -> None:
    out = grade("```coq\n\n```")
    assert (out.score, out.verdict) == (0.0, "no_answer")
