"""verl's own reward managers call rlvr.trainer.verl, loaded the way verl loads a custom
reward function (`reward.custom_reward_function` with its `reward_kwargs`)."""

from __future__ import annotations

import asyncio
import string
from typing import Any

import pytest

from tests.compat.needs import need

need("verl", "omegaconf", "torch")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn  # noqa: E402
from verl.workers.reward_manager.batch import BatchRewardManager  # noqa: E402

from rlvr.client import RewardClient  # noqa: E402
from tests.compat.trl_model import char_tokenizer  # noqa: E402

GOOD, BAD = "<think>a</think><answer>b</answer>", "no tags"
# (data_source, response, ground truth, extra_info)
SAMPLES = [
    ("my_format_set", GOOD, None, {}),
    ("my_format_set", BAD, None, {}),
    ("openai/gsm8k", "so \\boxed{4}", "4", {}),
    ("anything", "fine", None, {"verifier": "crashy"}),
    ("anything", "raise", None, {"verifier": "crashy"}),  # the grader fails: masked
    ("openai/gsm8k", "\\boxed{3} or \\boxed{4}", "4", {}),  # a hedge
]
SCORES = [
    {"score": 1.0, "acc": 1.0, "masked": 0.0},
    {"score": 0.0, "acc": 0.0, "masked": 0.0},
    {"score": 1.0, "acc": 1.0, "masked": 0.0},
    {"score": 1.0, "acc": 1.0, "masked": 0.0},
    {"score": 0.0, "acc": 0.0, "masked": 1.0},
    {"score": 0.0, "acc": 0.0, "masked": 0.0},
]
RAISED: list[set[str]] = [set(), set(), set(), set(), set(), {"hedge"}]


def expected(url: str) -> list[dict[str, float]]:
    """Each sample's dict: its scores, and 0/1 for every signal of every verifier the
    service has (the same keys for every sample, as verl's per-key means need)."""
    with RewardClient(url) as client:
        names = client.signal_names()
    assert {"hedge", "exit_before_tests", "axiom"} <= set(names)
    return [
        {**score, **{f"rlvr_signal_{name}": float(name in raised) for name in names}}
        for score, raised in zip(SCORES, RAISED, strict=True)
    ]


def reward_fn(url: str, name: str) -> Any:
    config = OmegaConf.create(
        {
            "reward": {
                "custom_reward_function": {
                    "path": "pkg://rlvr.trainer.verl",
                    "name": name,
                    "reward_kwargs": {"url": url, "verifiers": {"my_format_set": "format"}},
                }
            }
        }
    )
    return get_custom_reward_fn(config)


def batch(samples: list[tuple[str, str, Any, dict[str, Any]]]) -> DataProto:
    """A rollout batch as verl builds it: prompt and response ids, right-padded responses."""
    tok = char_tokenizer(string.digits)
    prompt = tok("question", add_special_tokens=False)["input_ids"]
    encoded = [tok(s[1], add_special_tokens=False)["input_ids"] for s in samples]
    width = max(map(len, encoded))
    responses = [ids + [tok.pad_token_id] * (width - len(ids)) for ids in encoded]
    mask = [[1] * len(prompt) + [1] * len(ids) + [0] * (width - len(ids)) for ids in encoded]
    return DataProto.from_dict(
        tensors={
            "prompts": torch.tensor([prompt] * len(samples)),
            "responses": torch.tensor(responses),
            "attention_mask": torch.tensor(mask),
        },
        non_tensors={
            "data_source": np.array([s[0] for s in samples], dtype=object),
            "reward_model": np.array([{"ground_truth": s[2]} for s in samples], dtype=object),
            "extra_info": np.array([dict(s[3]) for s in samples], dtype=object),
        },
    )


@pytest.mark.parametrize("name", ["compute_score", "compute_score_async"])
def test_the_reward_loop_scores_each_sample(live_server: str, name: str) -> None:
    fn = reward_fn(live_server, name)
    data = batch(SAMPLES)

    async def run() -> list[dict[str, Any]]:
        manager = NaiveRewardManager(OmegaConf.create({}), char_tokenizer(string.digits), fn)
        assert manager.is_async_reward_score == (name == "compute_score_async")
        # verl's reward loop runs samples concurrently, one request each.
        return list(await asyncio.gather(*(manager.run_single(data[i : i + 1]) for i in range(len(data)))))

    outs = asyncio.run(run())
    assert [o["reward_extra_info"] for o in outs] == expected(live_server)
    assert [o["reward_score"] for o in outs] == [e["score"] for e in SCORES]


def test_the_legacy_batch_manager_grades_the_batch_at_once(live_server: str) -> None:
    manager = BatchRewardManager(
        char_tokenizer(string.digits), num_examine=0, compute_score=reward_fn(live_server, "compute_score_batch")
    )
    data = batch(SAMPLES)
    out = manager(data, return_dict=True)
    every = expected(live_server)
    assert dict(out["reward_extra_info"]) == {k: [e[k] for e in every] for k in every[0]}
    lengths = data.batch["attention_mask"][:, data.batch["prompts"].shape[1] :].sum(-1)
    assert [out["reward_tensor"][i, lengths[i] - 1].item() for i in range(len(SAMPLES))] == [
        e["score"] for e in SCORES
    ]


def test_a_sample_with_no_verifier_is_an_error(live_server: str) -> None:
    fn = reward_fn(live_server, "compute_score")
    with pytest.raises(ValueError, match="no verifier for data_source 'unknown'"):
        fn(data_source="unknown", solution_str="x", ground_truth=None, extra_info={})
