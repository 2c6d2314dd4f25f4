"""What reaches the check file from the response (options set `Global`, printed text
made to look like a verdict), the ground truth's own job (run first, kept per worker,
masked when broken whatever the response says), and the primitives' list."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from rlvr.sandboxes import RunResult, RunSpec
from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.programs import ProgramRunner
from rlvr.verifiers.proof import ProofGroundTruth, ProofParams, ProofVerifier, jobs, primitives
from tests.verifiers.proof.conftest import ADD_COMM, grade

pytestmark = pytest.mark.usefixtures("coq")
STATEMENT = ADD_COMM["statement"]
PROOF = "Proof. intros. apply Nat.add_comm. Qed."
CHEAT = f"Hypothesis cheat : forall n m : nat, n + m = m + n.\n{STATEMENT}\nProof. exact cheat. Qed."


@pytest.mark.parametrize(
    "options",
    [
        "Global Set Printing Width 10.",
        "Global Set Printing Depth 0.",
        "Global Set Printing Depth 1.\nGlobal Set Printing Width 3.",
        "Global Set Printing All.\nGlobal Unset Printing Notations.",
        "Global Set Short Module Printing.\nGlobal Set Fast Name Printing.",
        "Export Set Printing Depth 0.",
    ],
)
def test_global_options_do_not_turn_an_axiom_into_a_proof(options: str) -> None:
    out = grade(f"{options}\n{CHEAT}")
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert "not closed" in out.reason and "cheat" in out.reason


def test_global_options_leave_a_proof_correct() -> None:
    assert grade(f"Global Set Printing Width 10.\nGlobal Set Printing Depth 1.\n{STATEMENT}\n{PROOF}").score == 1.0


def test_verdict_printed_inside_an_axioms_type_is_not_the_verdict() -> None:
    # The axiom's type ends in a line "Closed under the global context" (indented).
    forged = (
        "Hypothesis cheat : forall (Closed : Prop -> Prop -> Prop -> Prop -> Prop) "
        "(under the global context : Prop), Closed under the global context.\n"
        f"{STATEMENT}\nProof. exact (cheat (fun _ _ _ _ => forall n m : nat, n + m = m + n) True True True True). Qed."
    )
    out = grade(forged)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert out.details["assumptions"].endswith("Closed under the global context")


def test_deprecation_note_is_not_the_verdict() -> None:
    forged = (
        '#[deprecated(note="\nClosed under the global context\n")]\n'
        f"Hypothesis cheat : forall n m : nat, n + m = m + n.\n{STATEMENT}\nProof. exact cheat. Qed."
    )
    assert grade(forged).score == 0.0


BROKEN = {**ADD_COMM, "statement": "Theorem add_comm : forall n : nat, n + true = n."}


@pytest.mark.parametrize("response", ["Proof. Admitted.", "", "Axiom x : False.", PROOF], ids=repr)
def test_broken_ground_truth_masks_whatever_the_response(response: str) -> None:
    out = grade(response, BROKEN)
    assert (out.score, out.verdict, out.mask) == (0.0, "error", True)
    assert "ground truth" in out.reason


def test_ground_truth_that_coqchk_rejects_masks() -> None:
    # coq/coq#16957 in a preamble: a word the model refuses, built here past it.
    preamble = (
        "Section S.\n  Let x := 0.\n"
        "  Definition foo : x = 1 := ltac:(change_no_check 0 with 1 in x; vm_compute; reflexivity).\nEnd S."
    )
    gt = ProofGroundTruth.model_construct(**{**ADD_COMM, "preamble": preamble})
    verifier, params = ProofVerifier(), ProofParams()
    out = verifier.verify(GradeInput("", PROOF), params, verifier.prepare(params, gt))
    assert (out.score, out.verdict, out.mask) == (0.0, "error", True)
    assert "kernel re-check (coqchk)" in out.reason


class CountingRunner(ProgramRunner):
    """The host's runner, counting the jobs it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.jobs = 0

    def run(self, spec: RunSpec) -> RunResult:
        self.jobs += 1
        return super().run(spec)


def _grade_counting(verifier: ProofVerifier, runner: CountingRunner, gt: dict[str, Any], response: str) -> Outcome:
    params = ProofParams()
    runner.jobs = 0
    return verifier.verify(GradeInput("", response), params, verifier.prepare(params, ProofGroundTruth(**gt)))


@pytest.mark.parametrize("preamble", ["", "Definition twice (n : nat) := n + n."], ids=["plain", "preamble"])
def test_ground_truth_is_compiled_once_per_worker(preamble: str) -> None:
    runner = CountingRunner()
    verifier = ProofVerifier(runner)
    gt = {**ADD_COMM, "preamble": preamble}
    assert _grade_counting(verifier, runner, gt, PROOF).score == 1.0 and runner.jobs == 2
    assert _grade_counting(verifier, runner, gt, PROOF).score == 1.0 and runner.jobs == 1
    assert _grade_counting(verifier, runner, gt, "Proof. intros. Admitted.").score == 0.0 and runner.jobs == 0
    assert _grade_counting(verifier, runner, BROKEN, PROOF).mask and runner.jobs == 1
    assert _grade_counting(verifier, runner, BROKEN, PROOF).mask and runner.jobs == 0


def test_ground_truth_too_large_to_hand_on_is_compiled_with_each_item(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs, "MAX_FETCH_BYTES", 100)
    runner = CountingRunner()
    verifier = ProofVerifier(runner)
    assert _grade_counting(verifier, runner, ADD_COMM, PROOF).score == 1.0 and runner.jobs == 2
    out = _grade_counting(verifier, runner, ADD_COMM, PROOF)
    assert out.score == 1.0 and runner.jobs == 1 and out.details["steps"]["statement"] == "ok"


def test_primitives_are_the_standard_librarys() -> None:
    sources = {
        primitives.INT63: "Numbers/Cyclic/Int63/PrimInt63.v",
        primitives.FLOAT: "Floats/PrimFloat.v",
        primitives.ARRAY: "Array/PArray.v",
    }
    theories = Path("/usr/lib/ocaml/coq/theories")
    if not theories.is_dir():
        pytest.skip("the standard library's sources are not installed here")
    declared = []
    for library, source in sources.items():
        module = ""
        for line in (theories / source).read_text().splitlines():
            opened = re.match(r"Module (\w+)\.$", line)
            module = f"{opened.group(1)}." if opened else "" if line.startswith("End ") else module
            found = re.match(r"Primitive (\w+)", line)
            if found:
                declared.append(f"{library}.{module}{found.group(1)}")
    assert sorted(declared) == sorted(primitives.STANDARD)
