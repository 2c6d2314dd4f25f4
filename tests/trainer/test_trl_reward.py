"""The TRL reward functions, called the way TRL 1.16 calls them (everything by keyword)."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest

from rlvr.trainer.trl import completion_text, rlvr_reward

GOOD, BAD = "<think>a</think><answer>4</answer>", "4"


class Logs:
    def __init__(self) -> None:
        self.metrics: list[tuple[str, float]] = []
        self.extra: list[tuple[str, list[Any]]] = []

    def kwargs(self) -> dict[str, Any]:
        return {
            "log_metric": lambda name, value: self.metrics.append((name, value)),
            "log_extra": lambda column, values: self.extra.append((column, values)),
            "trainer_state": object(),
            "completion_ids": [[1, 2]] * 3,
        }


def test_masked_items_are_none_and_the_masked_share_is_logged(live_server: str) -> None:
    logs = Logs()
    func = rlvr_reward("crashy", url=live_server, truth_column=None)
    out = func(prompts=["p"] * 3, completions=["fine", "raise", "fine"], **logs.kwargs())
    assert out == [1.0, None, 1.0]
    assert logs.metrics == [("rlvr/masked_frac", pytest.approx(1 / 3))]
    assert logs.extra[0][0] == "rlvr_crashy/verdict" and len(logs.extra[0][1]) == 3


@pytest.mark.parametrize("is_async", [False, True])
def test_each_signal_s_rate_is_logged_as_a_metric(live_server: str, is_async: bool) -> None:
    logs = Logs()
    func = rlvr_reward("math", url=live_server, is_async=is_async)
    completions = ["\\boxed{3} or \\boxed{4}", "\\boxed{4}", "\\boxed{3} or maybe \\boxed{5}", "\\boxed{4}"]
    call = func(prompts=["p"] * 4, completions=completions, answer=["4"] * 4, **logs.kwargs())
    out = asyncio.run(call) if is_async else call
    assert out == [0.0, 1.0, 0.0, 1.0]
    assert dict(logs.metrics) == {
        "rlvr/masked_frac": 0.0,
        "rlvr/signals/answer_in_thinking_only": 0.0,
        "rlvr/signals/hedge": 0.5,
        "rlvr/signals/restated_question": 0.0,
    }


def test_conversational_completions_grade_the_assistant_content(live_server: str) -> None:
    completions = [
        [{"role": "assistant", "content": GOOD}],
        [
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "calc"}}]},
            {"role": "tool", "content": GOOD},  # the tool's words are not the model's
            {"role": "assistant", "content": [{"type": "text", "text": BAD}]},
        ],
        [{"role": "assistant", "content": [{"type": "text", "text": GOOD}]}],
    ]
    prompts = [[{"role": "user", "content": "2+2?"}]] * 3
    func = rlvr_reward("format", url=live_server, truth_column="none", is_async=True)
    out = asyncio.run(func(prompts=prompts, completions=completions, answer=["4"] * 3))  # type: ignore[misc]
    assert out == [1.0, 0.0, 1.0]


def test_the_truth_column_is_the_ground_truth(live_server: str) -> None:
    func = rlvr_reward("math", url=live_server, truth_column="solution")
    out = func(prompts=["2+2?"] * 2, completions=["\\boxed{4}", "\\boxed{5}"], solution=["4", "4"], answer=["5", "5"])
    assert out == [1.0, 0.0]


def test_names_and_async_shape() -> None:
    assert rlvr_reward("math").__name__ == "rlvr_math"
    assert rlvr_reward("math", name="acc").__name__ == "acc"
    assert asyncio.iscoroutinefunction(type(rlvr_reward("math", is_async=True)).__call__)
    assert not asyncio.iscoroutinefunction(type(rlvr_reward("math")).__call__)
    # TRL may pickle reward functions (data-loader workers): they hold no connection.
    assert pickle.loads(pickle.dumps(rlvr_reward("math", url="http://x"))).__name__ == "rlvr_math"


def test_completion_text() -> None:
    assert completion_text("plain") == "plain"
    assert completion_text([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]) == "a\nb"


def test_a_row_with_an_invalid_ground_truth_is_none_not_an_exception(live_server: str) -> None:
    logs = Logs()
    func = rlvr_reward("exact_match", url=live_server, truth_column="answer")
    out = func(prompts=["p"] * 2, completions=["4", "4"], answer=["4", {"not": "a string"}], **logs.kwargs())
    assert out == [1.0, None]
    assert logs.metrics == [("rlvr/masked_frac", pytest.approx(1 / 2))]


@pytest.mark.parametrize(
    ("completion", "text"),
    [
        (["\\boxed{2}"], "\\boxed{2}"),
        (["a", {"role": "assistant", "content": "b"}], "a\nb"),
        ({"role": "assistant", "content": "one message"}, "one message"),
        ([{"role": "user", "content": "q"}, {"role": "tool", "content": "4"}], ""),
        ([{"role": "assistant"}, {"role": "assistant", "content": None}], ""),
        ([{"role": "assistant", "content": [{"type": "text", "text": 5}, {"type": "image"}, "x"]}], ""),
        ([None, 7, {"role": "assistant", "content": 3}], ""),
        ([], ""),
    ],
    ids=[
        "bare string",
        "string and message",
        "one message",
        "no assistant",
        "no content",
        "odd blocks",
        "odd entries",
        "empty",
    ],
)
def test_any_completion_trl_can_hold_has_a_text(completion: Any, text: str) -> None:
    assert completion_text(completion) == text


def test_plain_strings_and_silent_conversations_are_graded_not_raised(live_server: str) -> None:
    func = rlvr_reward("math", url=live_server, truth_column="answer")
    completions = [["\\boxed{4}"], [{"role": "tool", "content": "\\boxed{4}"}], []]
    prompts = [["2+2?"], [{"role": "user", "content": "2+2?"}], "2+2?"]
    # The model said nothing in the last two: empty text, graded (a 0), not masked (None).
    assert func(prompts=prompts, completions=completions, answer=["4"] * 3) == [1.0, 0.0, 0.0]
