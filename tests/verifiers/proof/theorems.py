"""A small suite of real theorems (Software Foundations-style lemmas on nat, bool and
lists, written here), each with a proof that checks in Coq 8.16 and a non-proof that
looks plausible: a wrong tactic, a missing case, a lemma that does not apply."""

from __future__ import annotations

from typing import Any

DOUBLE = "Fixpoint double (n : nat) : nat := match n with O => O | S k => S (S (double k)) end."
REV = (
    "Fixpoint rev {A : Type} (l : list A) : list A := match l with nil => nil | cons x t => rev t ++ (x :: nil) end."
)

# (ground truth, a proof, a non-proof)
THEOREMS: list[tuple[dict[str, Any], str, str]] = [
    (
        {"statement": "Theorem add_0_r : forall n : nat, n + 0 = n.", "name": "add_0_r"},
        "Proof.\n  induction n as [| n IH].\n  - reflexivity.\n  - simpl. rewrite IH. reflexivity.\nQed.",
        "Proof.\n  intros n. reflexivity.\nQed.",
    ),
    (
        {"statement": "Theorem add_comm : forall n m : nat, n + m = m + n.", "name": "add_comm", "imports": ["Arith"]},
        "```coq\nTheorem add_comm : forall n m : nat, n + m = m + n.\nProof. intros n m. apply Nat.add_comm. Qed.\n```",
        "```coq\nTheorem add_comm : forall n m : nat, n + m = m + n.\nProof. intros n m. simpl. reflexivity. Qed.\n```",
    ),
    (
        {
            "statement": "Lemma mul_comm : forall a b : nat, a * b = b * a.",
            "name": "mul_comm",
            "imports": ["Lia"],
        },
        "Proof. intros. lia. Qed.",
        "Proof. intros. induction a; simpl; auto. Qed.",
    ),
    (
        {
            "statement": "Theorem negb_involutive : forall b : bool, negb (negb b) = b.",
            "name": "negb_involutive",
        },
        "Proof. intros []; reflexivity. Qed.",
        "Proof. intros b. destruct b. reflexivity. Qed.",
    ),
    (
        {
            "statement": "Theorem andb_true_elim2 : forall b c : bool, andb b c = true -> c = true.",
            "name": "andb_true_elim2",
        },
        "Proof.\n  intros [] [] H; simpl in H; try discriminate; reflexivity.\nQed.",
        "Proof.\n  intros b c H. destruct b; simpl in H; exact H.\nQed.",
    ),
    (
        {
            "statement": "Lemma double_plus : forall n, double n = n + n.",
            "name": "double_plus",
            "imports": ["Arith"],
            "preamble": DOUBLE,
        },
        "Proof.\n  induction n as [| n IH]; simpl.\n  - reflexivity.\n"
        "  - rewrite IH, Nat.add_succ_r. reflexivity.\nQed.",
        "Proof.\n  induction n as [| n IH]; simpl.\n  - reflexivity.\n  - rewrite IH. reflexivity.\nQed.",
    ),
    (
        {
            "statement": "Theorem app_nil_r' : forall (A : Type) (l : list A), l ++ nil = l.",
            "name": "app_nil_r'",
            "imports": ["Lists.List"],
        },
        "Proof.\n  intros A l. induction l as [| x t IH]; simpl.\n  - reflexivity.\n  - rewrite IH. reflexivity.\nQed.",
        "Proof.\n  intros A l. destruct l; reflexivity.\nQed.",
    ),
    (
        {
            "statement": "Theorem rev_length : forall (A : Type) (l : list A), length (rev l) = length l.",
            "name": "rev_length",
            "imports": ["Lists.List", "Arith"],
            "preamble": REV,
        },
        "Proof.\n  intros A l. induction l as [| x t IH]; simpl.\n  - reflexivity.\n"
        "  - rewrite app_length, IH. simpl. rewrite Nat.add_comm. reflexivity.\nQed.",
        "Proof.\n  intros A l. induction l as [| x t IH]; simpl.\n  - reflexivity.\n  - rewrite IH. reflexivity.\nQed.",
    ),
    (
        {"statement": "Example le_3_5 (n : nat) : 3 <= n -> 5 <= n + 2.", "name": "le_3_5", "imports": ["Lia"]},
        "Proof. intros. lia. Qed.",
        "Proof. intros H. apply le_S. exact H. Qed.",
    ),
]
