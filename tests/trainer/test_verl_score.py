"""rlvr.trainer.verl's functions, called as verl calls them (verl itself: tests/compat)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from rlvr.trainer.verl import compute_score, compute_score_async, compute_score_batch, grade_item, verifier_for
from tests.services import require

GOOD = "<think>a</think><answer>4</answer>"
SCORES = ("score", "acc", "masked")


def scores(out: dict[str, float]) -> dict[str, float]:
    """The sample's scores, with every signal entry checked to be 0 or 1 and left out."""
    signals = {key: value for key, value in out.items() if key not in SCORES}
    assert all(key.startswith("rlvr_signal_") and value in (0.0, 1.0) for key, value in signals.items()), out
    return {key: out[key] for key in SCORES}


def raised(out: dict[str, float]) -> list[str]:
    return [key.removeprefix("rlvr_signal_") for key, value in out.items() if key not in SCORES and value == 1.0]


def test_the_verifier_comes_from_extra_info_then_the_mapping_then_the_default() -> None:
    kwargs = {"verifiers": {"mine": "format"}, "verifier": "code"}
    assert verifier_for("mine", {"verifier": "math"}, kwargs) == "math"
    assert verifier_for("mine", {}, kwargs) == "format"
    assert verifier_for("openai/gsm8k", None, {}) == "math"  # built in
    assert verifier_for("other", None, kwargs) == "code"
    with pytest.raises(ValueError, match="no verifier for data_source 'other'"):
        verifier_for("other", None, {})


def test_the_url_comes_from_the_kwargs_or_rlvr_url(live_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLVR_URL", live_server)
    out = compute_score("x", GOOD, None, {"verifier": "format"})
    assert scores(out) == {"score": 1.0, "acc": 1.0, "masked": 0.0} and raised(out) == []
    monkeypatch.setenv("RLVR_URL", "http://127.0.0.1:9")  # nothing listens: the kwarg wins
    out = asyncio.run(compute_score_async("x", "nope", None, {"verifier": "format"}, url=live_server))
    assert scores(out) == {"score": 0.0, "acc": 0.0, "masked": 0.0} and raised(out) == []


def test_every_sample_has_the_same_keys_masked_or_not(live_server: str) -> None:
    outs = compute_score_batch(
        ["a", "a", "a"],
        ["fine", "raise", GOOD],
        [None] * 3,
        [{"verifier": "crashy"}] * 2 + [None],
        url=live_server,
        verifier="format",
    )
    # The keys of every signal of every verifier the service has, whichever graded.
    keys = set(SCORES) | {f"rlvr_signal_{name}" for name in ("hedge", "exit_before_tests", "axiom")}
    assert all(set(o) == set(outs[0]) >= keys for o in outs)
    assert [o["masked"] for o in outs] == [0.0, 1.0, 0.0]
    assert [o["score"] for o in outs] == [1.0, 0.0, 1.0]


def test_numpy_ground_truths_are_sent_as_json(live_server: str) -> None:
    # verl reads parquet rows: ground truths arrive as numpy scalars and arrays.
    require(importlib.util.find_spec("numpy") is not None, "numpy (the compat extra)")
    import numpy as np

    out = compute_score("x", "\\boxed{4}", np.int64(4), {"verifier": "math"}, url=live_server)
    assert out["score"] == 1.0
    tests = {"tests": np.array(["assert f(1) == 1"], dtype=object)}
    [item] = [grade_item("x", "y", tests, {"verifier": "code"}, {})]
    assert item["ground_truth"] == {"tests": ["assert f(1) == 1"]}


def test_json_text_ground_truths_are_objects() -> None:
    item = grade_item("x", "y", '{"tests": ["assert f(1) == 1"]}', {"verifier": "code"}, {})
    assert item["ground_truth"] == {"tests": ["assert f(1) == 1"]}
    assert grade_item("x", "y", "{1, 2}", {"verifier": "math"}, {})["ground_truth"] == "{1, 2}"


def test_a_row_with_an_invalid_ground_truth_is_masked_not_an_exception(live_server: str) -> None:
    outs = compute_score_batch(
        ["a", "a"], ["4", "4"], ["4", {"not": "a string"}], [None, None], url=live_server, verifier="exact_match"
    )
    assert [(o["score"], o["masked"]) for o in outs] == [(1.0, 0.0), (0.0, 1.0)]
    out = compute_score("a", "4", {"not": "a string"}, {"verifier": "exact_match"}, url=live_server)
    assert scores(out) == {"score": 0.0, "acc": 0.0, "masked": 1.0}


@pytest.mark.parametrize(
    ("response", "signals"),
    [
        ("\\boxed{3} or \\boxed{4}", ["hedge"]),
        ("<think>so it is \\boxed{4}</think>I hope this helps!", ["answer_in_thinking_only"]),
        ("\\boxed{4}", []),
    ],
)
def test_a_sample_s_signals_are_its_1_0_entries(live_server: str, response: str, signals: list[str]) -> None:
    for out in (
        compute_score("openai/gsm8k", response, "4", None, url=live_server),
        asyncio.run(compute_score_async("openai/gsm8k", response, "4", None, url=live_server)),
        compute_score_batch(["openai/gsm8k"], [response], ["4"], None, url=live_server)[0],
    ):
        assert raised(out) == signals, out
