"""`ifeval` through a real `rlvr serve`: found through the `rlvr.verifiers` entry point,
schemas with examples in `/v1/verifiers`, a batch graded, bad ground truth a 4xx that
names the field before anything is graded."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

GT = {
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words", "startend:quotation"],
    "kwargs": [{}, {"num_words": 4, "relation": "less than"}, {}],
}


def _item(response: str, ground_truth: Any, **params: str) -> dict[str, Any]:
    return {"prompt": "p", "response": response, "verifier": "ifeval", "ground_truth": ground_truth, "params": params}


def test_listed_with_schemas_and_examples(http: httpx.Client) -> None:
    listed = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    ifeval = listed["ifeval"]
    assert ifeval["available"] is True and ifeval["source"] == "builtin"
    assert ifeval["ground_truth_schema"]["examples"] and ifeval["params_schema"]["examples"]
    ids = ifeval["ground_truth_schema"]["properties"]["instruction_id_list"]["items"]["enum"]
    assert len(ids) == 50 and "punctuation:no_comma" in ids and "validate_lowercase" in ids


def test_batch_graded(http: httpx.Client) -> None:
    items = [
        _item('"two words"', GT),
        _item("two words", GT),
        _item("two words", GT, reward="fraction"),
        _item('Here:\n"two words"', GT, mode="loose"),
        _item("   ", GT),
    ]
    resp = http.post("/v1/grade", json={"items": items})
    assert resp.status_code == 200, resp.text
    results = resp.json()["results"]
    assert [r["verdict"] for r in results] == ["correct", "incorrect", "partial", "correct", "no_answer"]
    assert [r["reward"] for r in results] == pytest.approx([1.0, 0.0, 2 / 3, 1.0, 0.0])
    assert all(r["mask"] is False for r in results)
    assert results[1]["details"]["instructions"][2] == {"id": "startend:quotation", "pass": False}


@pytest.mark.parametrize(
    ("ground_truth", "named"),
    [
        ({"instruction_id_list": ["keywords:nonsense"], "kwargs": [{}]}, "instruction_id_list[0]"),
        ({"instruction_id_list": ["count:word_count_range"], "kwargs": [{}]}, "one of IFBench's new constraints"),
        ({"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}, {}]}, "kwargs has 2 entries"),
        ({"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 5}]},
         "kwargs[0].relation"),
        ({"instruction_id_list": ["keywords:frequency"],
          "kwargs": [{"keyword": "x", "frequency": "2", "relation": "at least"}]}, "kwargs[0].frequency"),
    ],
)  # fmt: skip
def test_bad_ground_truth_is_masked_naming_the_field(
    http: httpx.Client, ground_truth: dict[str, Any], named: str
) -> None:
    resp = http.post("/v1/grade", json={"items": [_item("fine", ground_truth), _item('"two words"', GT)]})
    assert resp.status_code == 200, resp.text
    bad, good = resp.json()["results"]
    assert bad["verdict"] == "error" and bad["mask"] is True and named in bad["reason"], bad
    assert good["verdict"] == "correct", good


def test_bad_params_are_masked_naming_the_field(http: httpx.Client) -> None:
    resp = http.post("/v1/grade", json={"items": [_item("fine", GT, reward="most")]})
    assert resp.status_code == 200, resp.text
    result = resp.json()["results"][0]
    assert result["verdict"] == "error" and result["mask"] is True and "reward" in result["reason"], result
