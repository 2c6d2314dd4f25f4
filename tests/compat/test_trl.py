"""TRL's own GRPOTrainer takes rlvr's reward functions: one real step on CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.compat.needs import need

need("trl", "datasets", "transformers", "tokenizers")

from datasets import Dataset  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from rlvr.trainer.trl import rlvr_reward  # noqa: E402
from tests.compat.trl_model import char_tokenizer, tiny_gpt2  # noqa: E402


def one_step(tmp_path: Path, dataset: Dataset, reward_funcs: list[Any]) -> dict[str, float]:
    tokenizer = char_tokenizer()
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        max_steps=1,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        seed=0,
    )
    trainer = GRPOTrainer(
        model=tiny_gpt2(tokenizer),
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    return next(log for log in trainer.state.log_history if "rlvr/masked_frac" in log)


def test_a_grpo_step_on_a_standard_dataset(live_server: str, tmp_path: Path) -> None:
    dataset = Dataset.from_list([{"prompt": "two plus two?", "answer": "4"}] * 4)
    funcs = [
        rlvr_reward("math", url=live_server),
        # `sleepy` cannot read the random model's text as seconds: every item is masked.
        rlvr_reward("sleepy", url=live_server, truth_column="no_such_column"),
    ]
    log = one_step(tmp_path, dataset, funcs)
    # The math verifier graded (a random model is wrong, never masked); the masked
    # function's rewards are NaN to TRL, not 0, so their mean is not a number: TRL logs None.
    assert log["rewards/rlvr_math/mean"] == 0.0
    assert log["rewards/rlvr_sleepy/mean"] is None
    assert log["rlvr/masked_frac"] == pytest.approx(0.5)  # the mean of 0 (math) and 1 (sleepy)
    # Each math signal's rate in the step, through TRL's own metric log (a random model
    # hedges nothing); `sleepy` declares no signals.
    signals = {key: value for key, value in log.items() if key.startswith("rlvr/signals/")}
    assert set(signals) == {f"rlvr/signals/{n}" for n in ("answer_in_thinking_only", "hedge", "restated_question")}


def test_a_grpo_step_on_a_conversational_dataset_with_an_async_reward(live_server: str, tmp_path: Path) -> None:
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": "two plus two?"}], "answer": "4"}] * 4)
    func = rlvr_reward("math", url=live_server, name="arith", is_async=True)
    log = one_step(tmp_path, dataset, [func])
    assert log["rewards/arith/mean"] == 0.0 and log["rlvr/masked_frac"] == 0.0
