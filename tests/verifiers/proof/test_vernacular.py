"""The word filter (`vernacular.forbidden`) on the spellings an adversary would try:
tactics that skip type-checking, Ltac2's binding of OCaml functions, and every
command that reads or writes a file. Read without Coq."""

from __future__ import annotations

import pytest

from rlvr.verifiers.proof import vernacular

UNCHECKED = {
    "exact_no_check": "Proof. exact_no_check I. Qed.",
    "vm_cast_no_check": "Proof. vm_cast_no_check (eq_refl 1). Qed.",
    "native_cast_no_check": "Proof. native_cast_no_check (eq_refl 1). Qed.",
    "change_no_check": "Proof. change_no_check 0 with 1 in x. Qed.",
    "convert_concl_no_check": "Proof. convert_concl_no_check (1 = 1). Qed.",
    "in_ltac_definition": "Ltac cheat := change_no_check 0 with 1.\nProof. cheat. Qed.",
    "in_tactic_notation": 'Tactic Notation "cheat" constr(t) := exact_no_check t.\nProof. cheat I. Qed.',
    "in_term_notation": "Notation cheat := ltac:(exact_no_check I).\nDefinition x : False := cheat.",
    "in_ltac_term": "Definition x : 0 = 1 := ltac:(vm_cast_no_check (eq_refl 0)).",
    "after_comment": "Proof. (* fine *)change_no_check(0) with 1. Qed.",
    "ltac2_std": "From Ltac2 Require Import Ltac2.\nProof. Std.exact_no_check 'I. Qed.",
    "ltac2_eval": "Ltac2 Eval Std.vm_cast_no_check 'I.",
    "ltac2_notation": 'Ltac2 Notation "cheat" := Std.native_cast_no_check \'I.',
    "external": 'Ltac2 @ external cheat : constr -> unit := "coq-core.plugins.ltac2" "tac_exactnocheck".',
    "external_no_space": 'Ltac2 @external cheat : constr -> unit := "ltac2" "tac_exactnocheck".',
    "external_comment": 'Ltac2 (* x *) @ (* y *) external cheat : unit := "ltac2" "f".',
    "external_lines": 'Ltac2\n  @\n  external cheat : unit := "ltac2" "f".',
    "external_attribute": '#[local] Ltac2 @ external cheat : unit := "ltac2" "f".',
}
FILES = {
    "print_universes": 'Print Universes "/tmp/proof/Stmt.vo".',
    "print_sorted_universes": 'Print Sorted Universes "/tmp/proof/u.dot".',
    "print_universes_subgraph": 'Print Universes Subgraph (nat) "/tmp/proof/u.dot".',
    "extraction_file": 'Extraction "/tmp/proof/Stmt.ml" nat.',
    "separate_extraction": "Separate Extraction nat.",
    "recursive_extraction_library": "Recursive Extraction Library Datatypes.",
    "extraction_library": "Extraction Library Datatypes.",
    "extraction_output_directory": 'Set Extraction Output Directory "/tmp/proof".',
    "extraction_testcompile": "Extraction TestCompile nat.",
    "redirect": 'Redirect "/tmp/proof/Stmt" Print nat.',
    "load": 'Load "/tmp/proof/Other.v".',
    "load_verbose": "Load Verbose Other.",
    "cd": 'Cd "/tmp".',
    "pwd": "Pwd.",
    "add_loadpath": 'Add LoadPath "/tmp" as Evil.',
    "add_rec_loadpath": 'Add Rec LoadPath "/tmp" as Evil.',
    "remove_loadpath": 'Remove LoadPath "/tmp".',
    "add_ml_path": 'Add ML Path "/tmp".',
    "declare_ml": 'Declare ML Module "evil".',
    "locate_file": 'Locate File "Stmt.vo".',
    "locate_library": "Locate Library R.Stmt.",
    "extra_dependency": 'From Coq Extra Dependency "Init/Prelude.v" as p.',
    "print_loadpath": "Print LoadPath.",
    "print_ml_path": "Print ML Path.",
    "native_profiling": 'Set NativeCompute Profile Filename "/tmp/proof/x".',
    "quit": "Quit.",
    "drop": "Drop.",
}


@pytest.mark.parametrize("script", list((UNCHECKED | FILES).values()), ids=list(UNCHECKED | FILES))
def test_refused(script: str) -> None:
    assert vernacular.forbidden(script)


@pytest.mark.parametrize(
    "script",
    [
        "Proof. change (0 + 1) with 1. exact eq_refl. Qed.",
        "Proof. (* change_no_check, exact_no_check *) exact I. Qed.",
        'Proof. idtac "Print Universes". exact I. Qed.',
        "Definition exact_no_check_free := 0.",
        "Universes u v.\nDefinition t := Type@{u}.",
        "Definition external := 1.",
        "Definition Ltac2_free := 1.",
        "Set Primitive Projections.",
        "#[local] Unset Primitive Projections.",
    ],
    ids=[
        "change",
        "comment",
        "string",
        "longer_identifier",
        "universes_command",
        "external_name",
        "ltac2_in_a_longer_name",
        "primitive_projections",
        "unset_primitive_projections",
    ],
)
def test_not_refused(script: str) -> None:
    assert vernacular.forbidden(script) == ""
