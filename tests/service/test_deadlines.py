"""Deadlines and crashes: a bad unit costs its worker, never the rest of the batch."""

from __future__ import annotations

import httpx
import pydantic
import pytest

from rlvr.service.settings import Settings

THINK = "<think>t</think><answer>a</answer>"


def test_slow_plugin_is_killed_and_rest_of_batch_graded(http: httpx.Client) -> None:
    # 3600 s of sleep: were the worker not killed, this request would never return. A
    # verifier that waits without using CPU is the grader's stall: masked, never a 0.
    items = [{"response": "3600", "verifier": "sleepy"}]
    items += [{"response": THINK + " " * i, "verifier": "format"} for i in range(30)]
    items += [{"response": "-1", "verifier": "sleepy"}, {"response": "0.01", "verifier": "sleepy"}]
    r = http.post("/v1/grade", json={"items": items})
    assert r.status_code == 200
    results = r.json()["results"]
    assert results[0]["verdict"] == "error" and results[0]["mask"] is True
    assert "grader stalled" in results[0]["reason"]
    assert all(res["verdict"] == "correct" for res in results[1:31])
    # A CPU spin used its deadline: the item's fault, unmasked.
    assert results[31]["verdict"] == "timeout" and results[31]["mask"] is False
    assert results[31]["reward"] == 0.0 and "deadline of 1s" in results[31]["reason"]
    assert results[32]["verdict"] == "correct"
    ready = http.get("/readyz").json()["backends"]["dispatcher"]
    assert ready["restarts"]["deadline"] >= 1 and ready["restarts"]["stalled"] >= 1
    assert ready["workers_alive"] == ready["workers"]


def test_request_deadline_overrides_verifier_default(http: httpx.Client) -> None:
    r = http.post("/v1/grade", json={"items": [{"response": "1.5", "verifier": "sleepy"}], "deadline_s": 3})
    assert r.json()["results"][0]["verdict"] == "correct"
    r = http.post("/v1/grade", json={"items": [{"response": "-1", "verifier": "sleepy"}], "deadline_s": 0.3})
    assert r.json()["results"][0]["verdict"] == "timeout"


def test_crashing_worker_masks_only_its_item(http: httpx.Client) -> None:
    items = [
        {"response": "ok", "verifier": "crashy"},
        {"response": "exit", "verifier": "crashy"},
        {"response": "raise", "verifier": "crashy"},
        {"response": THINK, "verifier": "format"},
    ]
    results = http.post("/v1/grade", json={"items": items}).json()["results"]
    assert results[0]["verdict"] == "correct"
    died, raised, fine = results[1], results[2], results[3]
    assert died["mask"] is True and died["verdict"] == "error" and died["reward"] == 0.0
    assert "worker died" in died["reason"] and "exit code 3" in died["reason"]
    assert raised["mask"] is True and raised["verdict"] == "error"
    assert "RuntimeError: verifier bug" in raised["reason"]
    assert fine["verdict"] == "correct"
    # Masked verdicts are not facts about the response: they are never cached.
    again = http.post("/v1/grade", json={"items": items[1:3]}).json()["results"]
    assert [a["cached"] for a in again] == [False, False]


def test_scores_outside_unit_interval_are_masked(http: httpx.Client) -> None:
    results = http.post(
        "/v1/grade", json={"items": [{"response": "1.5", "verifier": "liar"}, {"response": "-0.1", "verifier": "liar"}]}
    ).json()["results"]
    for res in results:
        assert res["mask"] is True and res["verdict"] == "error" and res["reward"] == 0.0
        assert "outside [0, 1]" in res["reason"]


def test_composite_with_a_masked_part_is_masked(http: httpx.Client) -> None:
    item = {"response": "raise", "verifier": [{"name": "crashy"}, {"name": "format", "weight": 0.1}]}
    res = http.post("/v1/grade", json={"items": [item]}).json()["results"][0]
    assert res["mask"] is True and res["verdict"] == "error" and res["reward"] == 0.0


@pytest.mark.parametrize("deadline_s", [1e-9, 1e-3, 0.049])
def test_a_deadline_below_what_the_server_can_honour_is_a_422_not_a_mask(http: httpx.Client, deadline_s: float) -> None:
    item = {"response": "<think>a</think><answer>b</answer>", "verifier": "format"}
    r = http.post("/v1/grade", json={"items": [item] * 3, "deadline_s": deadline_s})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["message"].startswith(f"deadline_s: {deadline_s:g} is below the server minimum of 0.05s")



@pytest.mark.parametrize("setting", ["max_deadline_s", "default_deadline_s"])
def test_a_deadline_setting_below_the_least_is_refused_at_start(setting: str) -> None:
    with pytest.raises(pydantic.ValidationError, match=f"{setting} .* is below min_deadline_s"):
        Settings(**{setting: 0.5, "min_deadline_s": 1.0})
    assert getattr(Settings(**{setting: 1.0, "min_deadline_s": 1.0}), setting) == 1.0
