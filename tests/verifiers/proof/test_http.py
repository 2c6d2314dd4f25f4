"""`proof` through a real `rlvr serve`: listed with its schemas and Coq's version, a
batch graded, bad ground truth masked naming the field (a 422 under `strict`)."""

from __future__ import annotations

import httpx
import pytest

from tests.verifiers.proof.conftest import ADD_COMM

pytestmark = pytest.mark.usefixtures("coq")


def test_listed_with_schemas_and_examples(http: httpx.Client) -> None:
    listed = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    proof = listed["proof"]
    assert proof["source"] == "builtin" and proof["availability"]["languages"] == {"coq": True}
    assert proof["availability"]["coq_version"].startswith("The Coq Proof Assistant, version 8.")
    assert proof["ground_truth_schema"]["examples"][0]["name"] == "add_comm"
    assert proof["params_schema"]["properties"]["language"]["const"] == "coq"
    assert proof["params_schema"]["examples"] == [{"language": "coq", "timeout_s": 20.0}]


def test_batch_over_http(http: httpx.Client) -> None:
    responses = [
        "```coq\nTheorem add_comm : forall n m : nat, n + m = m + n.\nProof. intros. apply Nat.add_comm. Qed.\n```",
        "Proof. intros. Admitted.",
        "Proof. intros. reflexivity. Qed.",
        "Axiom cheat : False. Proof. destruct cheat. Qed.",
    ]
    items = [{"response": r, "verifier": "proof", "ground_truth": ADD_COMM} for r in responses]
    r = http.post("/v1/grade", json={"items": items})
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [(res["reward"], res["verdict"], res["mask"]) for res in results] == [
        (1.0, "correct", False),
        (0.0, "incorrect", False),
        (0.0, "incorrect", False),
        (0.0, "incorrect", False),
    ]


def test_bad_ground_truth_is_masked_naming_the_field(http: httpx.Client) -> None:
    bad = {**ADD_COMM, "statement": "Theorem other : True."}
    items = [
        {"response": "Proof. intros. apply Nat.add_comm. Qed.", "verifier": "proof", "ground_truth": ADD_COMM},
        {"response": "Proof. auto. Qed.", "verifier": "proof", "ground_truth": bad},
    ]
    r = http.post("/v1/grade", json={"items": items})
    assert r.status_code == 200, r.text
    good, masked = r.json()["results"]
    assert (good["reward"], masked["verdict"], masked["mask"]) == (1.0, "error", True)
    assert "statement" in masked["reason"]
    r = http.post("/v1/grade", json={"items": items, "strict": True})
    assert r.status_code == 422
    assert "items[1].ground_truth" in r.text and "statement" in r.text
    r = http.post("/v1/grade", json={"items": [{**items[0], "params": {"language": "lean"}}], "strict": True})
    assert r.status_code == 422 and "language" in r.text
