"""The built-in arithmetic task: held-out problems never trained on, and the warm-up
targets' systematic bias (graded answers stay true)."""

from __future__ import annotations

from collections import Counter

import pytest
from pydantic import ValidationError

from rlvr.trainer.grpo.config import TrainConfig
from rlvr.trainer.grpo.tasks import ArithmeticTask, parse_label_bias


def offset_of(solution: str, ground_truth: str) -> int:
    assert solution.startswith("\\boxed{") and solution.endswith("}")
    return int(solution[len("\\boxed{") : -1]) - int(ground_truth)


def test_parse_label_bias() -> None:
    assert parse_label_bias("") == {}
    assert parse_label_bias("1:0.45, -1:0.1") == {1: 0.45, -1: 0.1}
    for bad in ("1", "x:0.1", "1:y", "0:0.2", "1:-0.1", "1:0.6,2:0.4"):
        with pytest.raises(ValueError):
            parse_label_bias(bad)


def test_config_names_a_bad_bias() -> None:
    with pytest.raises(ValidationError, match="warmup_label_bias"):
        TrainConfig(warmup_label_bias="1:1.5")


def test_biased_targets_follow_the_probabilities_and_grading_stays_true() -> None:
    task = ArithmeticTask(3, 9, "+", 10, {1: 0.6, -2: 0.1})
    problems = [task.problem(i) for i in range(4000)]
    counts = Counter(offset_of(p.solution or "", str(p.ground_truth)) for p in problems)
    assert set(counts) == {0, 1, -2}
    assert counts[1] / 4000 == pytest.approx(0.6, abs=0.03)
    assert counts[-2] / 4000 == pytest.approx(0.1, abs=0.02)
    for p in problems[:50]:
        a, b = p.prompt.rstrip("=").split("+")
        assert p.ground_truth == str(int(a) + int(b))
    # a pure function of (seed, index): resuming draws the same targets
    again = ArithmeticTask(3, 9, "+", 10, {1: 0.6, -2: 0.1})
    assert [again.problem(i) for i in range(200)] == problems[:200]


def test_held_out_problems_are_unbiased_and_never_trained_on() -> None:
    task = ArithmeticTask(0, 9, "+", 20, {1: 0.75})
    held = task.held_out()
    assert len(held) == 20
    assert all(offset_of(p.solution or "", str(p.ground_truth)) == 0 for p in held)
    trained = {task.problem(i).prompt for i in range(1000)}
    assert trained.isdisjoint(p.prompt for p in held)
    assert len(trained) == 100 - 20


def test_no_bias_means_every_target_is_true() -> None:
    task = ArithmeticTask(0, 12, "+*", 8)
    assert all(offset_of(task.problem(i).solution or "", str(task.problem(i).ground_truth)) == 0 for i in range(300))
