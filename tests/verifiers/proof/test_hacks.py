"""What a policy will try instead of a proof: each earns 0, never a mask.

Most are refused before coqc runs (`vernacular.FORBIDDEN`); the `unfiltered` tests run
the same scripts past that filter, to show that the check file and `Print Assumptions`
catch them on their own."""

from __future__ import annotations

import pytest

from rlvr.verifiers.base import Outcome
from rlvr.verifiers.compile.steps import ToolSandbox
from rlvr.verifiers.programs import ProgramRunner
from rlvr.verifiers.proof import ProofGroundTruth, ProofParams, coq
from tests.verifiers.proof.conftest import ADD_COMM, grade

pytestmark = pytest.mark.usefixtures("coq")
STATEMENT = ADD_COMM["statement"]
BAD_PROOF = "Proof.\n  assert (Bad -> False) as H by (intros [k]; exact (k (mk k))).\n  destruct (H (mk H)).\nQed."

GAPS = {
    "admitted": "Proof. intros. Admitted.",
    "admit": "Proof. intros. admit. Qed.",
    "admit_defined": f"{STATEMENT}\nProof. intros n m. induction n. admit. admit. Defined.",
    "axiom": f"Axiom cheat : forall n m : nat, n + m = m + n.\n{STATEMENT}\nProof. exact cheat. Qed.",
    "axioms": f"Axioms (a : False) (b : True).\n{STATEMENT}\nProof. destruct a. Qed.",
    "parameter": f"Parameter cheat : forall n m : nat, n + m = m + n.\n{STATEMENT}\nProof. exact cheat. Qed.",
    "conjecture": f"Conjecture cheat : False.\n{STATEMENT}\nProof. destruct cheat. Qed.",
    "guard": "Unset Guard Checking.\nFixpoint loop (n : nat) : False := loop n.\nSet Guard Checking.\n"
    f"{STATEMENT}\nProof. destruct (loop 0). Qed.",
    "local_guard": "Local Unset Guard Checking.\nFixpoint loop (n : nat) : False := loop (S n).\n"
    f"{STATEMENT}\nProof. destruct (loop 0). Qed.",
    "bypass_guard": "#[bypass_check(guard)] Fixpoint loop (n : nat) : False := loop n.\n"
    f"{STATEMENT}\nProof. destruct (loop 0). Qed.",
    "positivity": "Unset Positivity Checking.\nInductive Bad := mk : (Bad -> False) -> Bad.\n"
    f"{STATEMENT}\n{BAD_PROOF}",
    "bypass_positivity": "#[bypass_check(positivity)] Inductive Bad := mk : (Bad -> False) -> Bad.\n"
    f"{STATEMENT}\n{BAD_PROOF}",
    "definitional_uip": f"Set Definitional UIP.\n{STATEMENT}\nProof. intros. apply Nat.add_comm. Qed.",
    "universes": f"Unset Universe Checking.\n{STATEMENT}\nProof. intros. apply Nat.add_comm. Qed.",
}
OUTSIDE = {
    "declare_ml": 'Declare ML Module "evil_plugin".\nProof. intros. apply Nat.add_comm. Qed.',
    "declare_ml_split": 'Declare\n  ML (* hidden *) Module "evil".\nProof. intros. apply Nat.add_comm. Qed.',
    "load": 'Load "/tmp/proof/Other.v".\nProof. intros. apply Nat.add_comm. Qed.',
    "redirect": 'Redirect "/tmp/proof/Evil" Print nat.\nRequire R.Evil.\nProof. intros. apply Nat.add_comm. Qed.',
    "extraction": 'Extraction "/tmp/proof/Evil.v" nat.\nRequire R.Evil.\nProof. apply Nat.add_comm. Qed.',
    "drop": "Drop.\nProof. intros. apply Nat.add_comm. Qed.",
    "loadpath": 'Add LoadPath "/tmp" as Evil.\nProof. intros. apply Nat.add_comm. Qed.',
    "primitive": "Primitive t := #int63_type.\nProof. intros. apply Nat.add_comm. Qed.",
}


@pytest.mark.parametrize("script", list((GAPS | OUTSIDE).values()), ids=list(GAPS | OUTSIDE))
def test_forbidden_commands_score_zero(script: str) -> None:
    out = grade(script)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert "not allowed" in out.reason
    assert out.signals == ("forbidden_command",)


def test_forbidden_words_in_comments_and_strings_are_not_commands() -> None:
    script = '(* Admitted. Axiom x : False. *)\nProof. (* "admit" *) intros n m. apply Nat.add_comm. Qed.'
    out = grade(script)
    assert (out.score, out.signals) == (1.0, ())


def unfiltered(script: str) -> Outcome:
    """Grade `script` without the forbidden-command filter."""
    params = ProofParams()
    job = coq.prepare(ProofGroundTruth(**ADD_COMM))
    plan, offset = coq.steps(job, script, params)
    return coq.grade(ToolSandbox(ProgramRunner(), params.memory_mb).run(plan), offset)


@pytest.mark.parametrize(
    "name", ["admitted", "admit_defined", "axiom", "parameter", "guard", "bypass_positivity", "universes"]
)
def test_unfiltered_gaps_are_caught_by_the_checker(name: str) -> None:
    out = unfiltered(GAPS[name])
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False), out.reason
    # coqc itself refuses to save a proof with given-up goals: a failed proof, no axiom.
    assert out.signals == (() if name == "admit_defined" else ("axiom",)), out.reason


def test_unfiltered_guard_hack_is_named_in_assumptions() -> None:
    out = unfiltered(GAPS["guard"])
    assert "assumed to be guarded" in out.reason


def test_unfiltered_redirect_cannot_make_a_module() -> None:
    assert unfiltered(OUTSIDE["redirect"]).score == 0.0


TOP_LEVEL_ASSUMPTIONS = {
    "hypothesis": f"Hypothesis cheat : forall n m : nat, n + m = m + n.\n{STATEMENT}\nProof. exact cheat. Qed.",
    "variable": f"Variable cheat : forall n m : nat, n + m = m + n.\n{STATEMENT}\nProof. exact cheat. Qed.",
    "variables": f"Variables (f : False) (t : True).\n{STATEMENT}\nProof. destruct f. Qed.",
    "context": f"Context (f : False).\n{STATEMENT}\nProof. destruct f. Qed.",
    "stmt_module": f"Require R.Stmt.\n{STATEMENT}\nProof. exact R.Stmt.add_comm. Qed.",
}


@pytest.mark.parametrize("script", list(TOP_LEVEL_ASSUMPTIONS.values()), ids=list(TOP_LEVEL_ASSUMPTIONS))
def test_top_level_assumptions_are_not_closed(script: str) -> None:
    out = grade(script)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert "not closed under the global context" in out.reason
    assert out.signals == ("axiom",)


def test_section_variables_are_fine() -> None:
    script = (
        "Section S.\n  Variable k : nat.\n  Hypothesis H : k = k.\n"
        "  Lemma helper : forall m : nat, k + m = m + k.\n  Proof. intros. apply Nat.add_comm. Qed.\nEnd S.\n"
        f"{STATEMENT}\nProof. exact helper. Qed."
    )
    out = grade(script)
    assert (out.score, out.signals) == (1.0, ())


REDEFINITIONS = {
    "nat": "Inductive nat := O.\nDefinition add (n m : nat) := O.\nInfix \"+\" := add.\n"
    f"{STATEMENT}\nProof. intros. reflexivity. Qed.",
    "eq": 'Definition eq (A : Type) (x y : A) := True.\nNotation "x = y" := (eq _ x y) : type_scope.\n'
    f"{STATEMENT}\nProof. intros. exact I. Qed.",
    "plus_notation": 'Notation "a + b" := (Nat.mul a b).\n'
    f"{STATEMENT}\nProof. intros. apply Nat.mul_comm. Qed.",
    "eq_notation": 'Notation "x = y" := (x <= x + y) : type_scope.\n'
    f"{STATEMENT}\nProof. intros. apply Nat.le_add_r. Qed.",
    "other_statement": "Theorem add_comm : forall n : nat, n = n.\nProof. reflexivity. Qed.",
    "weaker_statement": "Theorem add_comm : forall n m : nat, n + m = m + n -> n + m = m + n.\n"
    "Proof. auto. Qed.",
    "definition": "Definition add_comm := 0.",
}


@pytest.mark.parametrize("script", list(REDEFINITIONS.values()), ids=list(REDEFINITIONS))
def test_redefinitions_and_other_statements_score_zero(script: str) -> None:
    out = grade(script)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False), out.reason
    # Refused by coqc or the check file, as a wrong proof is: nothing a signal names.
    assert out.signals == ()


@pytest.mark.parametrize(
    "statement",
    [
        "Theorem add_comm (n m : nat) : n + m = m + n.",
        "Theorem add_comm {n m : nat} : n + m = m + n.",
        "Lemma add_comm : forall a b, a + b = b + a.",
    ],
)
def test_same_type_under_the_same_name_is_fine(statement: str) -> None:
    # Binders written another way, implicit or renamed: the same type, so the same theorem.
    assert grade(f"{statement}\nProof. intros. apply Nat.add_comm. Qed.").score == 1.0


@pytest.mark.parametrize(
    "script",
    [
        "Proof. intros. let rec f x := f x in f 0. Qed.",
        "Proof. intros. assert (Nat.pow 3 40 = 0) by (vm_compute; reflexivity). Abort.",
        "Proof. intros. repeat rewrite Nat.add_comm. Qed.",
    ],
    ids=["ltac_loop", "vm_compute", "rewrite_loop"],
)
def test_proof_that_runs_forever_times_out(script: str) -> None:
    out = grade(script, timeout_s=3)
    assert out.score == 0.0 and not out.mask
    assert out.verdict in ("timeout", "incorrect")
    if "vm_compute" in script:  # that one may run out of memory first
        return
    # A recursion that is not a tail call may exhaust coqc's stack before the clock, on a
    # fast machine: the script's fault as much as a timeout is, and as unmasked.
    overflowed = "let rec" in script and "Stack overflow" in out.reason
    assert out.verdict == "timeout" or overflowed, out.reason
