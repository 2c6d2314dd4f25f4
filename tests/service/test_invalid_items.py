"""One bad row never fails a batch: an item whose params or ground truth its verifier
refuses is masked, naming the fields, and counted; the rest are graded. `strict` asks
for the 422; `/v1/validate` (and the client's `validate`) lint items without grading."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from rlvr.client import RewardClient, RewardServiceError

GOOD = "<think>a</think><answer>b</answer>"
OK: dict[str, Any] = {"response": GOOD, "verifier": "format"}
BAD_PARAMS: dict[str, Any] = {**OK, "params": {"preset": "nope"}}
BAD_TRUTH: dict[str, Any] = {"response": "x", "verifier": "exact_match", "ground_truth": {"a": 1}}


def grade(http: httpx.Client, items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    r = http.post("/v1/grade", json={"items": items, **extra})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def invalid_count(http: httpx.Client, verifier: str) -> float:
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(f'rlvr_invalid_items_total{{verifier="{verifier}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_bad_rows_are_masked_and_the_rest_graded(http: httpx.Client) -> None:
    body = grade(http, [OK, BAD_PARAMS, {**OK, "response": "no tags"}, BAD_TRUTH])
    got = [(r["reward"], r["verdict"], r["mask"]) for r in body["results"]]
    assert got == [(1.0, "correct", False), (0.0, "error", True), (0.0, "incorrect", False), (0.0, "error", True)]
    assert body["results"][1]["reason"].startswith("invalid item: params.preset")
    assert body["results"][3]["details"]["invalid"][0].startswith("ground_truth")
    assert body["stats"]["invalid"] == 2
    assert body["stats"]["verdicts"]["error"] == 2
    # Nothing was dispatched for them.
    assert body["stats"]["unique"] == 2


def test_counted_in_metrics_by_verifier(http: httpx.Client) -> None:
    before = invalid_count(http, "format"), invalid_count(http, "exact_match")
    grade(http, [BAD_PARAMS, BAD_PARAMS, BAD_TRUTH, OK])
    after = invalid_count(http, "format"), invalid_count(http, "exact_match")
    assert (after[0] - before[0], after[1] - before[1]) == (2.0, 1.0)


def test_every_row_sharing_a_bad_ground_truth_is_told_its_fields(http: httpx.Client) -> None:
    body = grade(http, [BAD_TRUTH, {**BAD_TRUTH, "response": "y"}, {**BAD_TRUTH, "id": "z"}])
    reasons = {r["reason"] for r in body["results"]}
    assert len(reasons) == 1 and next(iter(reasons)).startswith("invalid item: ground_truth")
    assert body["results"][2]["id"] == "z"


def test_a_composite_with_one_bad_entry_is_masked_whole(http: httpx.Client) -> None:
    item = {
        "response": GOOD,
        "verifier": [{"name": "format", "weight": 0.5}, {"name": "format", "weight": 0.5, "params": {"preset": 1}}],
    }
    result = grade(http, [item])["results"][0]
    assert (result["reward"], result["verdict"], result["mask"], result["scores"]) == (0.0, "error", True, {})
    assert "verifier[1].params.preset" in result["reason"]


def test_masked_rows_leave_group_statistics(http: httpx.Client) -> None:
    items = [{**OK, "group": "g"}, {**OK, "response": "no", "group": "g"}, {**BAD_PARAMS, "group": "g"}]
    body = grade(http, items, advantage="grpo")
    stats = body["stats"]["groups"]["g"]
    assert (stats["n"], stats["masked"], stats["mean"]) == (2, 1, 0.5)
    assert body["results"][2]["advantage"] is None
    assert body["results"][0]["advantage"] > 0 > body["results"][1]["advantage"]


def test_strict_refuses_the_request_naming_each_item(http: httpx.Client) -> None:
    r = http.post("/v1/grade", json={"items": [OK, BAD_PARAMS, BAD_TRUTH], "strict": True})
    assert r.status_code == 422
    errors = r.json()["error"]["details"]["errors"]
    assert errors[0].startswith("items[1].params.preset")
    assert errors[-1].startswith("items[2].ground_truth")


@pytest.mark.parametrize("strict", [False, True])
def test_the_request_s_own_faults_stay_a_422(http: httpx.Client, strict: bool) -> None:
    r = http.post("/v1/grade", json={"items": [OK, {**OK, "verifier": "nope"}], "strict": strict})
    assert r.status_code == 422
    assert "items[1].verifier: unknown verifier 'nope'" in r.json()["error"]["message"]


def test_validate_lists_what_grade_would_mask(http: httpx.Client) -> None:
    r = http.post("/v1/validate", json={"items": [OK, BAD_PARAMS, {**BAD_TRUTH, "id": "row-7"}], "strict": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["valid"], body["items"]) == (False, 3)
    assert [(e["index"], e["id"], e["verifier"]) for e in body["invalid"]] == [
        (1, None, "format"),
        (2, "row-7", "exact_match"),
    ]
    assert body["invalid"][0]["errors"][0].startswith("params.preset")
    assert http.post("/v1/validate", json={"items": [OK]}).json() == {"valid": True, "items": 1, "invalid": []}
    r = http.post("/v1/validate", json={"items": [{**OK, "verifier": "nope"}]})
    assert r.status_code == 422


def test_the_client_masks_validates_and_can_be_strict(live_server: str) -> None:
    items = [OK, BAD_PARAMS, OK]
    with RewardClient(live_server, chunk_size=2) as client:
        graded = client.grade(items)
        assert [r.mask for r in graded.results] == [False, True, False]
        assert graded.stats["invalid"] == 1
        # Chunked: the index is the caller's, not the chunk's.
        invalid = client.validate([OK, OK, BAD_TRUTH])
        assert [(e["index"], e["verifier"]) for e in invalid] == [(2, "exact_match")]
        with pytest.raises(RewardServiceError, match=r"items\[1\]\.params\.preset") as err:
            client.grade(items, strict=True)
        assert err.value.status == 422


def test_a_ground_truth_model_that_raises_masks_its_item_not_the_request(http: httpx.Client) -> None:
    items = [
        {"response": "x", "verifier": "fragile", "ground_truth": "x"},
        {"response": "x", "verifier": "fragile", "ground_truth": "boom"},
    ]
    body = grade(http, items)
    assert [(r["reward"], r["mask"]) for r in body["results"]] == [(1.0, False), (0.0, True)]
    assert "ground_truth: the verifier's model raised TypeError: a validator with a bug" in body["results"][1]["reason"]
    r = http.post("/v1/validate", json={"items": items})
    assert r.status_code == 200 and [e["index"] for e in r.json()["invalid"]] == [1]
    assert http.post("/v1/grade", json={"items": items, "strict": True}).status_code == 422


REFUSED_IFEVAL: dict[str, Any] = {
    "response": "x",
    "verifier": "ifeval",
    "ground_truth": {"instruction_id_list": ["language:response_language"] * 20, "kwargs": [{"language": "z"}] * 20},
}


def test_an_items_refusal_is_told_briefly_however_many_fields_or_references_fail(http: httpx.Client) -> None:
    many_refs = {**REFUSED_IFEVAL, "verifier": [{"name": "ifeval"}] * 300}
    body = grade(http, [REFUSED_IFEVAL, many_refs])
    for result in body["results"]:
        assert result["mask"] and len(result["details"]["invalid"]) == 5
        assert all(len(message) <= 300 for message in result["details"]["invalid"])
        assert result["reason"].startswith("invalid item: ground_truth.kwargs[0]: Value error, unknown language")
        assert result["reason"].endswith("(and 4 more in details.invalid)")


def test_a_strict_request_lists_twenty_errors_at_most(http: httpx.Client) -> None:
    r = http.post("/v1/grade", json={"items": [REFUSED_IFEVAL] * 10, "strict": True})
    assert r.status_code == 422
    assert len(r.json()["error"]["details"]["errors"]) == 20


def test_a_composite_item_tells_of_its_first_components_and_scores_all(http: httpx.Client) -> None:
    item = {"response": GOOD, "verifier": [{"name": "format"}] * 20}
    [result] = grade(http, [item])["results"]
    assert len(result["scores"]) == 20 and result["reward"] == 20.0
    assert set(result["details"]) == {"format", *(f"format#{i}" for i in range(2, 9)), "details_truncated"}
