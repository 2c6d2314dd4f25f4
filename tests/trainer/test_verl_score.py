"""rlvr.trainer.verl's functions, called as verl calls them (verl itself: tests/compat)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from rlvr.trainer.verl import compute_score, compute_score_async, compute_score_batch, grade_item, verifier_for
from tests.services import require

GOOD = "<think>a</think><answer>4</answer>"
KEYS = {"score", "acc", "masked"}


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
    assert out == {"score": 1.0, "acc": 1.0, "masked": 0.0}
    monkeypatch.setenv("RLVR_URL", "http://127.0.0.1:9")  # nothing listens: the kwarg wins
    out = asyncio.run(compute_score_async("x", "nope", None, {"verifier": "format"}, url=live_server))
    assert out == {"score": 0.0, "acc": 0.0, "masked": 0.0}


def test_every_sample_has_the_same_keys_masked_or_not(live_server: str) -> None:
    outs = compute_score_batch(
        ["a", "a", "a"],
        ["fine", "raise", GOOD],
        [None] * 3,
        [{"verifier": "crashy"}] * 2 + [None],
        url=live_server,
        verifier="format",
    )
    assert all(set(o) == KEYS for o in outs)
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
    assert out == {"score": 0.0, "acc": 0.0, "masked": 1.0}
