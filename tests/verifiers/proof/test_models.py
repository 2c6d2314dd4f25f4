"""Ground truth and params that could never grade are refused before any grading,
naming the field; a statement that parses but does not check masks its items."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rlvr.verifiers.proof import ProofGroundTruth, ProofParams
from tests.verifiers.proof.conftest import ADD_COMM, grade

BAD_GROUND_TRUTH: dict[str, tuple[dict[str, Any], str]] = {
    "empty_statement": ({"statement": ""}, "statement"),
    "no_keyword": ({"statement": "add_comm : forall n m : nat, n + m = m + n."}, "statement"),
    "other_name": ({"statement": "Theorem other : forall n : nat, n = n."}, "not the ground truth's name"),
    "two_sentences": ({"statement": "Theorem add_comm : True. Axiom x : False."}, "single sentence"),
    "no_final_dot": ({"statement": "Theorem add_comm : True"}, "end with '.'"),
    "no_type": ({"statement": "Theorem add_comm."}, "':'"),
    "unbalanced": ({"statement": "Theorem add_comm : (forall n : nat, n = n."}, "parentheses"),
    "open_comment": ({"statement": "Theorem add_comm : True. (* "}, "unterminated"),
    "bad_name": ({"name": "1abc"}, "name"),
    "name_with_space": ({"name": "add comm"}, "name"),
    "empty_name": ({"name": ""}, "name"),
    "keyword_name": ({"name": "forall", "statement": "Theorem forall : True."}, "reserved"),
    "checker_name": ({"name": "rlvr_goal", "statement": "Theorem rlvr_goal : True."}, "reserved"),
    "bad_import": ({"imports": ["Arith. Load x"]}, "imports"),
    "preamble_axiom": ({"preamble": "Axiom cheat : False."}, "preamble"),
    "preamble_ml": ({"preamble": 'Declare ML Module "x".'}, "preamble"),
    "unknown_field": ({"solution": "x"}, "solution"),
}


@pytest.mark.parametrize(("change", "named"), list(BAD_GROUND_TRUTH.values()), ids=list(BAD_GROUND_TRUTH))
def test_bad_ground_truth_names_the_field(change: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError) as info:
        ProofGroundTruth(**{**ADD_COMM, **change})
    assert named in str(info.value)


def test_missing_fields_are_named() -> None:
    with pytest.raises(ValidationError) as info:
        ProofGroundTruth.model_validate({"name": "x"})
    assert "statement" in str(info.value)


@pytest.mark.parametrize(
    "statement",
    [
        "Theorem add_comm : forall n m : nat, n + m = m + n.",
        "Lemma add_comm (n m : nat) : n + m = m + n.",
        "Theorem add_comm : forall n m : nat, (* a comment. with dots. *) n + m = m + n.",
        "Theorem add_comm : forall n m : nat, Nat.add n m = Nat.add m n.",
    ],
)
def test_good_statements_are_accepted(statement: str) -> None:
    assert ProofGroundTruth(**{**ADD_COMM, "statement": statement}).name == "add_comm"


@pytest.mark.parametrize(
    ("params", "named"), [({"language": "lean"}, "language"), ({"timeout_s": 0}, "timeout_s"), ({"x": 1}, "x")]
)
def test_bad_params_name_the_field(params: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError) as info:
        ProofParams(**params)
    assert named in str(info.value)


@pytest.mark.usefixtures("coq")
@pytest.mark.parametrize(
    "change",
    [
        {"statement": "Theorem add_comm : forall n : nat, n + true = n."},
        {"statement": "Theorem add_comm : no_such_thing."},
        {"imports": ["NoSuchLibrary"]},
        {"preamble": "Definition broken := 1 + true."},
    ],
    ids=["ill_typed", "unknown_name", "missing_library", "broken_preamble"],
)
def test_ground_truth_that_does_not_check_masks(change: dict[str, Any]) -> None:
    out = grade("Proof. intros. apply Nat.add_comm. Qed.", {**ADD_COMM, **change})
    assert (out.score, out.verdict, out.mask) == (0.0, "error", True)
    assert "ground truth" in out.reason
