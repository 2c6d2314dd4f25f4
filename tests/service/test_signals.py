"""Signals (issue 34) over a real server: each result carries what its response tried
that its verifier guards against, counted in the response's stats, per group, and in
`/metrics`; `/v1/verifiers` lists each verifier's vocabulary. Never a change of reward."""

from __future__ import annotations

from typing import Any

import httpx

from rlvr.results import GradeResult
from rlvr.service.groups import apply_group_stats

HEDGE = "So the answer is $\\boxed{7}$ or $\\boxed{8}$."
THINKING_ONLY = "<think>3 + 4 = 7, so \\boxed{7}</think>I hope this helps!"
HONEST = "<think>3 + 4 = 7</think>The answer is $\\boxed{7}$."
RESTATED = ("Simplify $\\tan 100^\\circ + 4\\sin 100^\\circ$.", "$\\boxed{\\tan 100^\\circ + 4\\sin 100^\\circ}$")


def _item(response: str, prompt: str = "What is 3 + 4?", gold: str = "7", group: str = "g") -> dict[str, Any]:
    return {"prompt": prompt, "response": response, "ground_truth": gold, "verifier": "math", "group": group}


def _grade(http: httpx.Client, items: list[dict[str, Any]]) -> dict[str, Any]:
    response = http.post("/v1/grade", json={"items": items})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_each_result_names_its_signals_and_the_reward_is_the_graders(http: httpx.Client) -> None:
    items = [_item(HEDGE), _item(THINKING_ONLY), _item(HONEST), _item(RESTATED[1], RESTATED[0], "-\\sqrt{3}", "h")]
    body = _grade(http, items)
    got = [(r["signals"], r["reward"]) for r in body["results"]]
    assert got == [(["hedge"], 0.0), (["answer_in_thinking_only"], 1.0), ([], 1.0), (["restated_question"], 0.0)]
    assert body["stats"]["signals"] == {"hedge": 1, "answer_in_thinking_only": 1, "restated_question": 1}
    assert body["stats"]["groups"]["g"]["signals"] == {"hedge": 1, "answer_in_thinking_only": 1}
    assert body["stats"]["groups"]["h"]["signals"] == {"restated_question": 1}


def test_metrics_count_signals_by_verifier(http: httpx.Client) -> None:
    def counted() -> float:
        for line in http.get("/metrics").text.splitlines():
            if line.startswith('rlvr_signals_total{signal="hedge",verifier="math"}'):
                return float(line.split()[-1])
        return 0.0

    before = counted()
    # Distinct responses: a cached verdict is not graded again, and metrics count grading.
    _grade(http, [_item(f"Attempt {n}. {HEDGE}") for n in range(3)])
    assert counted() == before + 3


def test_verifiers_list_their_vocabulary(http: httpx.Client) -> None:
    listed = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    names = [s["name"] for s in listed["math"]["signals"]]
    assert names == ["hedge", "answer_in_thinking_only", "restated_question"]
    assert all(s["description"] and s["example"] for s in listed["math"]["signals"])
    assert [s["name"] for s in listed["format"]["signals"]] == ["empty_section"]
    assert [s["name"] for s in listed["ifeval"]["signals"]] == ["padded_text", "keyword_stuffing"]


def test_masked_items_still_count_in_their_groups_signals() -> None:
    results = [
        GradeResult(reward=0.0, verdict="error", mask=True, group="g", signals=["hedge"]),
        GradeResult(reward=1.0, verdict="correct", mask=False, group="g", signals=["hedge"]),
        GradeResult(reward=1.0, verdict="correct", mask=False, group="g"),
    ]
    stats = apply_group_stats(results, None)["g"]
    assert (stats.n, stats.masked, stats.signals) == (2, 1, {"hedge": 2})
