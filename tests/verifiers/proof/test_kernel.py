"""The kernel re-check (coqchk) and the assumptions it leaves: Coq 8.16.1's VM bug
(coq/coq#16957) proves `0 = 1` with `Print Assumptions` saying "closed", and coqchk
rejects it; the standard library's primitives are no axioms, a user's are."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.base import Outcome
from rlvr.verifiers.compile.steps import ToolSandbox
from rlvr.verifiers.programs import ProgramRunner
from rlvr.verifiers.proof import ProofGroundTruth, ProofParams, coq
from tests.verifiers.proof.conftest import ADD_COMM, grade

pytestmark = pytest.mark.usefixtures("coq")
ZERO_ONE: dict[str, Any] = {"statement": "Theorem zero_one : 0 = 1.", "name": "zero_one"}
# coq/coq#16957 (test-suite/bugs/bug_16957.v): `change_no_check` on a section's `Let`
# leaves the VM's cached value of it stale, so `vm_compute` believes x = 1 where x := 0.
BUG = "change_no_check 0 with 1 in {x}; vm_compute; {finish}"
VM_BUG_EXPLOITS: dict[str, tuple[dict[str, Any], str]] = {
    "definition": (
        ZERO_ONE,
        "Section S.\n  Let x := 0.\n"
        f"  Definition foo : x = 1 := ltac:({BUG.format(x='x', finish='reflexivity')}).\nEnd S.\n"
        "Theorem zero_one : 0 = 1.\nProof. exact foo. Qed.",
    ),
    "symmetric_defined": (
        {"statement": "Theorem one_zero : 1 = 0.", "name": "one_zero"},
        "Section Bad.\n  Let n := 0.\n"
        f"  Definition one_n : 1 = n := ltac:({BUG.format(x='n', finish='exact eq_refl')}).\nEnd Bad.\n"
        "Theorem one_zero : 1 = 0.\nProof. apply one_n. Defined.",
    ),
    "in_a_module": (
        {"statement": "Theorem boom : False.", "name": "boom"},
        "Module Hidden.\n  Section Inner.\n    Let zero := 0.\n"
        f"    Definition eq01 : zero = 1 := ltac:({BUG.format(x='zero', finish='reflexivity')}).\n"
        "  End Inner.\nEnd Hidden.\nTheorem boom : False.\nProof. exact (O_S 0 Hidden.eq01). Qed.",
    ),
    "let_then_lemma": (
        ZERO_ONE,
        "Section S.\n  Let x := 0.\n"
        f"  Let y : x = 1 := ltac:({BUG.format(x='x', finish='reflexivity')}).\n"
        "  Lemma l : x = 1. Proof. exact y. Qed.\nEnd S.\nTheorem zero_one : 0 = 1.\nProof. exact l. Qed.",
    ),
    "true_statement": (
        ADD_COMM,
        "Section S.\n  Let x := 0.\n"
        f"  Definition foo : x = 1 := ltac:({BUG.format(x='x', finish='reflexivity')}).\nEnd S.\n"
        "Theorem add_comm : forall n m : nat, n + m = m + n.\nProof. intros n m. destruct (O_S 0 foo). Qed.",
    ),
}


def unfiltered(script: str, ground_truth: dict[str, Any]) -> Outcome:
    """Grade `script` without the forbidden-command filter, every step in one job."""
    params = ProofParams()
    plan, offset = coq.steps(coq.prepare(ProofGroundTruth(**ground_truth)), script, params)
    return coq.grade(ToolSandbox(ProgramRunner(), params.memory_mb).run(plan), offset)


@pytest.mark.parametrize(("gt", "script"), list(VM_BUG_EXPLOITS.values()), ids=list(VM_BUG_EXPLOITS))
def test_vm_bug_is_refused(gt: dict[str, Any], script: str) -> None:
    out = grade(script, gt)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert out.details["forbidden"] == "change_no_check"
    assert out.signals == ("forbidden_command",)


@pytest.mark.parametrize(("gt", "script"), list(VM_BUG_EXPLOITS.values()), ids=list(VM_BUG_EXPLOITS))
def test_vm_bug_past_the_filter_fails_the_kernel_recheck(gt: dict[str, Any], script: str) -> None:
    out = unfiltered(script, gt)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False), out.reason
    # coqc compiled it and the check file passed it: only coqchk stands in the way.
    assert out.details["steps"] == {
        "statement": "ok",
        "statement_recheck": "ok",
        "response": "ok",
        "check": "ok",
        "kernel_recheck": "error",
    }
    assert out.details["kernel_recheck"] == "failed"
    assert "kernel re-check (coqchk)" in out.reason
    assert out.signals == ("kernel_recheck_failed",)


def test_correct_proof_passes_the_kernel_recheck() -> None:
    out = grade("Proof. intros. apply Nat.add_comm. Qed.")
    assert out.score == 1.0 and out.details["kernel_recheck"] == "ok"
    assert out.signals == ()


# coq/coq#20455: Coq 8.16's guard checker, and coqchk's, accept this fixpoint, which
# does not terminate, and so prove False with no axiom.
GUARD_BUG = (
    "Definition not_zero n := match n with 0 => False | S _ => True end.\n"
    "Definition not_one n := match n with 0 => False | S n => not_zero n end.\n"
    "Fixpoint issue (n : nat) {struct n} : not_zero n -> False.\n"
    "  refine (match n with\n  | 0 => fun h => h\n  | S subn => fun h =>\n"
    "    let f (b : bool) (e : b = true) (x : nat) (Hx : not_one x) :=\n"
    "      let arg := (match (if b then x else subn) with 0 => subn | S subsubn => subsubn end) in\n"
    "      issue arg _\n    in f true eq_refl 5 I\n  end).\n"
    "  subst b. destruct x; cbn in Hx.\n  - now exfalso.\n  - assumption.\nDefined.\n"
    "Theorem zero_one : 0 = 1.\nProof. destruct (issue 1 I). Qed."
)
GUARD_BUG_SPELLINGS = {
    "fixpoint": GUARD_BUG,
    "cofixpoint_word": GUARD_BUG.replace("Fixpoint issue", "CoFixpoint issue"),
    "fix_term": GUARD_BUG.replace(
        "Fixpoint issue (n : nat) {struct n} : not_zero n -> False.\n  refine (",
        "Definition issue : forall n : nat, not_zero n -> False.\n  refine (fix issue (n : nat) {struct n} := ",
    ),
    "fix_tactic": "Theorem zero_one : 0 = 1.\nProof. fix IH 0. exact IH. Qed.",
    "commented_keyword": GUARD_BUG.replace("Fixpoint issue", "Fixpoint (* x *) issue"),
}


@pytest.mark.parametrize("script", GUARD_BUG_SPELLINGS.values(), ids=GUARD_BUG_SPELLINGS.keys())
def test_recursion_of_the_response_s_own_is_refused_by_default(script: str) -> None:
    out = grade(script, ZERO_ONE)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False), out
    assert out.details["forbidden"] in ("Fixpoint", "CoFixpoint", "fix"), out


def test_a_helper_fixpoint_is_graded_when_recursion_is_allowed() -> None:
    helper = (
        "Fixpoint double (n : nat) : nat := match n with 0 => 0 | S m => S (S (double m)) end.\n"
        "Theorem add_comm : forall n m : nat, n + m = m + n.\n"
        "Proof. intros n m. rewrite (PeanoNat.Nat.add_comm n m). reflexivity. Qed."
    )
    refused = grade(helper)
    # Refused by the request's settings, not an attempt on the checker: no signal.
    assert (refused.score, refused.signals) == (0.0, ())
    assert grade(helper, allow_recursion=True).score == 1.0


@pytest.mark.xfail(strict=True, reason="coq/coq#20455: with recursion allowed, Coq 8.16's guard checker is trusted")
def test_guard_checker_bug_is_an_open_hole_when_recursion_is_allowed() -> None:
    out = grade(GUARD_BUG, ZERO_ONE, allow_recursion=True)
    assert out.score == 0.0, out


UINT63: dict[str, Any] = {
    "statement": "Theorem prim : (1 + 2 = 3)%uint63.",
    "name": "prim",
    "imports": ["Numbers.Cyclic.Int63.Uint63"],
}
PRIMITIVE_PROOFS: dict[str, tuple[dict[str, Any], str]] = {
    "uint63": (UINT63, "Proof. reflexivity. Qed."),
    "uint63_vm": (UINT63, "Proof. vm_compute. reflexivity. Qed."),
    "float": (
        {
            "statement": "Theorem fadd : PrimFloat.eqb (PrimFloat.add 1 2) 3 = true.",
            "name": "fadd",
            "imports": ["Floats.PrimFloat"],
            "preamble": "Open Scope float_scope.",
        },
        "Proof. reflexivity. Qed.",
    ),
    "array": (
        {
            "statement": "Theorem alen : PArray.length (PArray.make 3 true) = 3%uint63.",
            "name": "alen",
            "imports": ["Numbers.Cyclic.Int63.Uint63", "Array.PArray"],
        },
        "Proof. reflexivity. Qed.",
    ),
    "array_in_response_only": (
        {"statement": "Theorem small : 2 < 5.", "name": "small"},
        "Require Import PArray Uint63.\nTheorem small : 2 < 5.\n"
        "Proof. assert (PArray.length (PArray.make 2 0) = 2)%uint63 by reflexivity. repeat constructor. Qed.",
    ),
}


@pytest.mark.parametrize(("gt", "script"), list(PRIMITIVE_PROOFS.values()), ids=list(PRIMITIVE_PROOFS))
def test_standard_primitives_are_not_axioms(gt: dict[str, Any], script: str) -> None:
    out = grade(script, gt)
    assert (out.score, out.verdict, out.mask) == (1.0, "correct", False), out.reason


USER_PRIMITIVE = (
    "Primitive myadd : PrimInt63.int -> PrimInt63.int -> PrimInt63.int := #int63_add.\n"
    "Theorem prim : (1 + 2 = 3)%uint63.\nProof. assert (H : (myadd 1 2 = 3)%uint63) by reflexivity. exact H. Qed."
)


def test_user_primitive_is_refused() -> None:
    out = grade(USER_PRIMITIVE, UINT63)
    assert (out.score, out.mask, out.details["forbidden"]) == (0.0, False, "Primitive")


def test_user_primitive_past_the_filter_is_an_axiom() -> None:
    out = unfiltered(USER_PRIMITIVE, UINT63)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert "myadd" in out.reason


def test_assumption_named_like_a_primitive_is_an_axiom() -> None:
    # A module of the response's own named as the standard library's: a top-level
    # `Variable` in it is an axiom, however its name prints.
    script = (
        "Module PrimInt63.\n  Variable int : False.\nEnd PrimInt63.\n"
        "Theorem prim : (1 + 2 = 3)%uint63.\nProof. destruct PrimInt63.int. Qed."
    )
    out = grade(script, UINT63)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert "not closed" in out.reason and "False" in out.reason


# A red team's route past the recursion refusal: Ltac2's `Constr.Unsafe` makes a
# fixpoint of an ordinary function, and the guard-checker bug proves False with it.
LTAC2_FIX = GUARD_BUG.split("Fixpoint")[0] + (
    "Definition F : (forall n : nat, not_zero n -> False) -> forall n : nat, not_zero n -> False.\n"
    "  refine (fun issue n => match n with\n  | 0 => fun h => h\n  | S subn => fun h =>\n"
    "    let f (b : bool) (e : b = true) (x : nat) (Hx : not_one x) :=\n"
    "      let arg := (match (if b then x else subn) with 0 => subn | S subsubn => subsubn end) in\n"
    "      issue arg _\n    in f true eq_refl 5 I\n  end).\n"
    "  subst b. destruct x; cbn in Hx.\n  - now exfalso.\n  - assumption.\nDefined.\n"
    "From Ltac2 Require Import Ltac2.\n"
    "Ltac2 mkrec (c : constr) :=\n  match Constr.Unsafe.kind c with\n"
    "  | Constr.Unsafe.Lambda b body => Constr.Unsafe.make (Constr.Unsafe.Fix (Array.make 1 0) 0 "
    "(Array.make 1 b) (Array.make 1 body))\n  | _ => Control.throw Not_found\n  end.\n"
    "Definition issue : forall n : nat, not_zero n -> False.\n"
    "  let c := Std.eval_cbv { Std.rBeta := false; Std.rMatch := false; Std.rFix := false; Std.rCofix := false; "
    "Std.rZeta := false; Std.rDelta := false; Std.rConst := [reference:(F)] } 'F in\n"
    "  let t := mkrec c in exact $t.\nDefined.\n"
)
LTAC2_SPELLINGS = {
    "zero_one": (ZERO_ONE, LTAC2_FIX + "Theorem zero_one : 0 = 1.\nProof. exact (match issue 1 I with end). Qed."),
    "add_comm": (ADD_COMM, LTAC2_FIX + "Theorem add_comm : forall n m : nat, n + m = m + n.\n"
                 "Proof. exact (match issue 1 I with end). Qed."),
    "qualified_require": (ZERO_ONE, LTAC2_FIX.replace("From Ltac2 Require Import Ltac2.", "Require Import Ltac2.Ltac2.")
                          + "Theorem zero_one : 0 = 1.\nProof. exact (match issue 1 I with end). Qed."),
    "ltac2_in_term": (ZERO_ONE, "Require Import Ltac2.Ltac2.\nTheorem zero_one : 0 = 1.\n"
                      "Proof. exact ltac2:(Control.throw Not_found). Qed."),
}


@pytest.mark.parametrize(("truth", "script"), LTAC2_SPELLINGS.values(), ids=LTAC2_SPELLINGS.keys())
def test_ltac2_is_refused_so_it_cannot_build_recursion(truth: dict[str, Any], script: str) -> None:
    out = grade(script, truth)
    assert (out.score, out.mask, out.details.get("forbidden")) == (0.0, False, "Ltac2"), out
    # Allowing recursion does not allow Ltac2.
    assert grade(script, truth, allow_recursion=True).score == 0.0


def test_a_ground_truth_may_not_load_ltac2_for_the_response() -> None:
    with pytest.raises(ValueError, match="Ltac2"):
        ProofGroundTruth(**{**ZERO_ONE, "imports": ["Ltac2.Ltac2"]})


REALS: dict[str, Any] = {
    "statement": "Theorem rc : forall x y : R, (x + y = y + x)%R.",
    "name": "rc",
    "imports": ["Reals"],
}


@pytest.mark.parametrize(
    "proof",
    ["Proof. intros; apply Rplus_comm. Qed.", "Proof. intros. ring. Qed.", "Proof. intros. lra. Qed."],
)
def test_proofs_about_the_reals_rest_on_the_reals_own_axioms_only(proof: str) -> None:
    truth = {**REALS, "imports": ["Reals", "Lra"]}
    out = grade(proof, truth)
    assert (out.score, out.verdict) == (1.0, "correct"), out


def test_the_reals_axioms_are_not_allowed_where_the_ground_truth_has_no_reals() -> None:
    # Functional extensionality, loaded by the response itself for a theorem of nat.
    script = (
        "Require Import Coq.Logic.FunctionalExtensionality.\n"
        "Theorem add_comm : forall n m : nat, n + m = m + n.\n"
        "Proof. intros n m. assert (H : (fun _ : nat => n + m) = (fun _ => m + n)).\n"
        "  { apply functional_extensionality. intros. apply PeanoNat.Nat.add_comm. }\n"
        "  exact (f_equal (fun g => g 0) H). Qed."
    )
    out = grade(script)
    assert (out.score, out.mask) == (0.0, False) and "functional_extensionality_dep" in out.reason, out


def test_native_compute_and_primitive_projections_are_fine() -> None:
    native = grade("Proof. native_compute. reflexivity. Qed.", UINT63)
    assert native.score == 1.0, native
    projections = (
        "Set Primitive Projections.\nRecord P := { p1 : nat }.\n"
        "Theorem add_comm : forall n m : nat, n + m = m + n.\nProof. intros; apply PeanoNat.Nat.add_comm. Qed.\n"
    )
    assert grade(projections).score == 1.0
    assert grade("Primitive Projections := #int63_add.\n" + projections).details.get("forbidden") == "Primitive"


@pytest.mark.parametrize(
    "script",
    [
        "Definition t := Set.\nPrimitive Projections : PrimInt63.int -> PrimInt63.int -> PrimInt63.int := #int63_add.",
        "Definition t := Set. Primitive Projections := #int63_add.",
        "Set Primitive Projections := 1.",
    ],
)
def test_the_primitive_command_is_refused_even_when_named_like_the_option(script: str) -> None:
    proof = "\nTheorem prim : (1 + 2 = 3)%uint63.\nProof. reflexivity. Qed."
    out = grade(script + proof, UINT63)
    assert (out.score, out.details.get("forbidden")) == (0.0, "Primitive"), out


def test_the_reals_axioms_follow_the_ground_truth_s_code_not_its_comments() -> None:
    funext = (
        "Require Import Coq.Logic.FunctionalExtensionality.\n"
        "Theorem add_comm : forall n m : nat, n + m = m + n.\n"
        "Proof. intros n m. assert (H : (fun _ : nat => n + m) = (fun _ => m + n)).\n"
        "  { apply functional_extensionality. intros. apply PeanoNat.Nat.add_comm. }\n"
        "  exact (f_equal (fun g => g 0) H). Qed."
    )
    for preamble in ("(* no Reals here *)", "Definition NoReals := 0.", 'Definition s := "Reals".'):
        out = grade(funext, {**ADD_COMM, "preamble": preamble})
        assert out.score == 0.0, (preamble, out)


@pytest.mark.parametrize("imports", [["RIneq"], ["Rbase"], ["Coq.Reals.Reals"], ["Psatz", "Rbase"], ["Reals"]])
def test_every_module_that_loads_the_reals_allows_their_axioms(imports: list[str]) -> None:
    truth = {**REALS, "imports": imports}
    out = grade("Proof. intros; apply Rplus_comm. Qed.", truth)
    assert (out.score, out.verdict) == (1.0, "correct"), out
