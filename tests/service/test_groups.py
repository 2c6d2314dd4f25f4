"""Group statistics: advantages, pass@k, majority vote and agreement, against values
computed by hand (the definitions are in `rlvr.service.groups`)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from rlvr.results import GradeResult
from rlvr.service.groups import advantages, apply_group_stats, pass_at_k

SEED_REWARDS = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]


def result(reward: float, group: str | None = "g", *, mask: bool = False, answer: str | None = None) -> GradeResult:
    verdict = "error" if mask else ("correct" if reward >= 1.0 else "incorrect")
    details = {} if answer is None else {"normalized": answer}
    return GradeResult(reward=reward, verdict=verdict, mask=mask, details=details, group=group)


def group_stats(results: list[GradeResult], estimator: Any) -> dict[str, dict[str, Any]]:
    """Each group's statistics as the API writes them."""
    return {name: g.model_dump(by_alias=True) for name, g in apply_group_stats(results, estimator).items()}


# ---- estimators, by hand ------------------------------------------------------------------


def test_grpo_matches_the_seeds_worked_example() -> None:
    # mean 3/8; unbiased std sqrt((3*(5/8)^2 + 5*(3/8)^2) / 7) = sqrt(15/56) = 0.517549
    # 0.625 / 0.517649 = 1.20738, -0.375 / 0.517649 = -0.72443 (the seed rounds these as 1.2070, -0.7240)
    got = advantages(SEED_REWARDS, "grpo")
    assert got[0] == pytest.approx(1.207381, abs=1e-6)
    assert got[1] == pytest.approx(-0.724429, abs=1e-6)
    assert [round(a, 4) for a in got] == [1.2074, -0.7244, -0.7244, 1.2074, -0.7244, -0.7244, -0.7244, 1.2074]


def test_dr_grpo_is_reward_minus_mean() -> None:
    assert advantages(SEED_REWARDS, "dr_grpo") == pytest.approx(
        [0.625, -0.375, -0.375, 0.625, -0.375, -0.375, -0.375, 0.625]
    )


def test_rloo_subtracts_the_mean_of_the_others() -> None:
    # r=1: 1 - 2/7 = 0.714286; r=0: 0 - 3/7 = -0.428571
    assert advantages(SEED_REWARDS, "rloo") == pytest.approx(
        [5 / 7, -3 / 7, -3 / 7, 5 / 7, -3 / 7, -3 / 7, -3 / 7, 5 / 7]
    )
    assert advantages([0.2, 0.5, 0.8], "rloo") == pytest.approx([0.2 - 0.65, 0.5 - 0.5, 0.8 - 0.35])


@pytest.mark.parametrize("estimator", ["grpo", "dr_grpo", "rloo"])
def test_single_item_and_equal_rewards_give_zero(estimator: Any) -> None:
    assert advantages([1.0], estimator) == [0.0]
    assert advantages([0.5, 0.5, 0.5], estimator) == pytest.approx([0.0, 0.0, 0.0])


def test_grpo_with_fractional_rewards() -> None:
    # mean 0.5, std = sqrt((0.25+0.25)/1) = 0.707107
    assert advantages([0.0, 1.0], "grpo") == pytest.approx([-0.5 / 0.707207, 0.5 / 0.707207], abs=1e-6)


@pytest.mark.parametrize(
    ("n", "c", "expected"),
    [
        (8, 3, {"1": 3 / 8, "2": 1 - 10 / 28, "4": 1 - 5 / 70, "8": 1.0}),
        (4, 0, {"1": 0.0, "2": 0.0, "4": 0.0}),
        (4, 4, {"1": 1.0, "2": 1.0, "4": 1.0}),
        (5, 1, {"1": 0.2, "2": 1 - 6 / 10, "4": 1 - 1 / 5}),
        (1, 1, {"1": 1.0}),
        (0, 0, {}),
    ],
)
def test_pass_at_k_unbiased(n: int, c: int, expected: dict[str, float]) -> None:
    got = pass_at_k(n, c)
    assert got.keys() == expected.keys()
    for k, value in expected.items():
        assert got[k] == pytest.approx(value)


# ---- per group, per item ------------------------------------------------------------------


def test_group_statistics_of_the_seed_group() -> None:
    results = [result(r) for r in SEED_REWARDS]
    groups = group_stats(results, "grpo")
    g = groups["g"]
    assert (g["n"], g["masked"], g["zero_std"], g["maj@n"]) == (8, 0, False, None)
    assert g["mean"] == pytest.approx(0.375)
    assert g["std"] == pytest.approx(0.517549, abs=1e-6)
    assert g["pass@k"]["1"] == pytest.approx(0.375)
    assert results[0].advantage == pytest.approx(1.207381, abs=1e-6)
    assert all(r.agreement is None for r in results)


def test_masked_items_are_left_out() -> None:
    results = [result(1.0), result(0.0, mask=True), result(0.0), result(0.0, mask=True)]
    g = group_stats(results, "dr_grpo")["g"]
    assert (g["n"], g["masked"], g["mean"]) == (2, 2, 0.5)
    assert [r.advantage for r in results] == [0.5, None, -0.5, None]


def test_all_masked_group() -> None:
    results = [result(0.0, mask=True), result(0.0, mask=True)]
    g = group_stats(results, "grpo")["g"]
    assert g == {
        "n": 0,
        "masked": 2,
        "mean": None,
        "std": None,
        "pass@k": {},
        "zero_std": True,
        "maj@n": None,
        "signals": {},
    }
    assert [r.advantage for r in results] == [None, None]


def test_single_item_group_is_zero_std() -> None:
    results = [result(1.0, "solo")]
    g = group_stats(results, "grpo")["solo"]
    assert (g["n"], g["mean"], g["std"], g["zero_std"], g["pass@k"]) == (1, 1.0, 0.0, True, {"1": 1.0})
    assert results[0].advantage == 0.0


def test_groups_are_separate_and_ungrouped_items_get_none() -> None:
    results = [result(1.0, "a"), result(0.0, "b"), result(0.0, "a"), result(1.0, None), result(1.0, "b")]
    groups = group_stats(results, "rloo")
    assert sorted(groups) == ["a", "b"]
    assert [r.advantage for r in results] == [1.0, -1.0, -1.0, None, 1.0]


def test_groups_without_advantage_still_get_statistics() -> None:
    results = [result(1.0), result(1.0)]
    g = group_stats(results, None)["g"]
    assert (g["n"], g["mean"], g["zero_std"]) == (2, 1.0, True)
    assert [r.advantage for r in results] == [None, None]


def test_majority_vote_and_agreement() -> None:
    # answers 4,4,5,none,4 of which the 4s are correct: majority 4 (3 of 5) -> correct
    results = [result(1.0, answer="4"), result(1.0, answer="4"), result(0.0, answer="5"), result(0.0)]
    results.append(result(1.0, answer="4"))
    g = group_stats(results, None)["g"]
    assert g["maj@n"] is True
    assert [r.agreement for r in results] == [0.6, 0.6, 0.2, None, 0.6]


def test_majority_of_a_wrong_answer() -> None:
    results = [result(0.0, answer="5"), result(1.0, answer="4"), result(0.0, answer="5")]
    assert group_stats(results, None)["g"]["maj@n"] is False


@pytest.mark.parametrize(("first", "expected"), [("4", True), ("5", False)])
def test_majority_tie_goes_to_the_first_answer(first: str, expected: bool) -> None:
    ok, bad = result(1.0, answer="4"), result(0.0, answer="5")
    results = [ok, bad] if first == "4" else [bad, ok]
    g = group_stats(results, None)["g"]
    assert g["maj@n"] is expected
    assert [r.agreement for r in results] == [0.5, 0.5]


def test_masked_items_do_not_vote() -> None:
    results = [result(0.0, mask=True, answer="5"), result(0.0, mask=True, answer="5"), result(1.0, answer="4")]
    g = group_stats(results, None)["g"]
    assert g["maj@n"] is True
    assert [r.agreement for r in results] == [None, None, 1.0]


def test_correct_answers_vote_together_however_written() -> None:
    results = [result(1.0, answer="4"), result(0.0, answer="5"), result(1.0, answer="4.0"), result(0.0, answer="5")]
    results.append(result(0.0, answer="5.0"))  # wrong answers are only merged by their normalised text
    g = group_stats(results, None)["g"]
    assert g["maj@n"] is True  # two correct against two "5" and one "5.0": the tie goes to the first
    assert [r.agreement for r in results] == [0.4, 0.4, 0.4, 0.4, 0.2]


def test_correct_item_without_reported_answer_still_votes() -> None:
    # math reports no normalised text for boxes that together equal the gold
    results = [result(1.0), result(0.0, answer="7"), result(1.0, answer="4")]
    g = group_stats(results, None)["g"]
    assert g["maj@n"] is True
    assert [r.agreement for r in results] == pytest.approx([2 / 3, 1 / 3, 2 / 3])


def test_no_answers_reported_means_no_vote() -> None:
    results = [result(1.0), result(1.0), result(0.0)]
    g = group_stats(results, None)["g"]
    assert g["maj@n"] is None
    assert [r.agreement for r in results] == [None, None, None]


# ---- over HTTP ------------------------------------------------------------------------


def math_item(response: str, group: str | None = "q1", truth: str = "4") -> dict[str, Any]:
    return {"response": response, "verifier": "math", "ground_truth": truth, "group": group}


def test_grade_with_advantage_over_http(http: httpx.Client) -> None:
    responses = [r"\boxed{4}", r"\boxed{5}", r"The answer is \boxed{4.0}", "no idea", r"\boxed{5}", r"\boxed{5}"]
    items = [math_item(r) for r in responses] + [math_item(r"\boxed{3}", "q2", "3")]
    body = http.post("/v1/grade", json={"items": items, "advantage": "dr_grpo"}).json()
    results = body["results"]
    assert [r["reward"] for r in results] == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert [r["advantage"] for r in results] == pytest.approx([2 / 3, -1 / 3, 2 / 3, -1 / 3, -1 / 3, -1 / 3, 0.0])
    q1 = body["stats"]["groups"]["q1"]
    assert (q1["n"], q1["masked"], q1["zero_std"]) == (6, 0, False)
    assert q1["pass@k"]["1"] == pytest.approx(1 / 3)
    assert q1["pass@k"]["2"] == pytest.approx(1 - 6 / 15)
    assert q1["pass@k"]["4"] == pytest.approx(1 - 1 / 15)
    # "5" three times against two "4"s: the majority answer is wrong
    assert q1["maj@n"] is False
    assert [r["agreement"] for r in results[:6]] == pytest.approx([2 / 6, 3 / 6, 2 / 6, None, 3 / 6, 3 / 6])
    # three "4"s (one as 4.0) against three "5"s: the tie goes to the first, correct, answer
    tie = http.post("/v1/grade", json={"items": [math_item(r"\boxed{4.0}"), *items[:6]]}).json()
    assert tie["stats"]["groups"]["q1"]["maj@n"] is True
    q2 = body["stats"]["groups"]["q2"]
    assert (q2["n"], q2["zero_std"], q2["maj@n"]) == (1, True, True)


def test_grade_without_groups_has_no_group_stats(http: httpx.Client) -> None:
    body = http.post("/v1/grade", json={"items": [math_item(r"\boxed{4}", None)]}).json()
    assert body["stats"]["groups"] == {}
    assert body["results"][0]["advantage"] is None
    assert body["results"][0]["agreement"] is None


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"items": [math_item("4"), math_item("4", None)], "advantage": "grpo"}, "items[1].group"),
        ({"items": [math_item("4")], "advantage": "ppo"}, "advantage"),
        ({"items": [math_item("4")], "advantage": 1}, "advantage"),
    ],
)
def test_bad_advantage_requests_name_the_field(http: httpx.Client, body: dict[str, Any], fragment: str) -> None:
    response = http.post("/v1/grade", json=body)
    assert response.status_code == 422
    assert fragment in response.json()["error"]["message"]
