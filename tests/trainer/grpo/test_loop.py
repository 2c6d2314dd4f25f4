"""The loop end to end against a real `rlvr serve` (the root conftest's live_server):
a 20-step run, resume == uninterrupted, and masked rewards kept out of the update."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import torch

from rlvr.cli import train_parser
from rlvr.trainer.grpo.config import TrainConfig, config_from
from rlvr.trainer.grpo.loop import Group, Trainer
from rlvr.trainer.grpo.policy import TinyPolicy
from rlvr.trainer.grpo.rewards import GradedChunk, RewardPipe, RewardSpec
from rlvr.trainer.grpo.run import train
from rlvr.trainer.grpo.sampling import PolicySampler
from rlvr.trainer.grpo.tasks import ArithmeticTask, Problem

SMALL = {
    "max_operand": 5,
    "ops": "+",
    "held_out": 6,
    "prompts_per_step": 2,
    "group_size": 4,
    "max_new_tokens": 4,
    # enough warm-up that the format reward varies within groups: the steps do update
    "warmup_steps": 15,
    "warmup_batch": 8,
    "warmup_lr": 0.01,
    "max_gen_rounds": 2,
}
TIMING = {"step_s", "reward_wait_s", "reward_wait_fraction", "tokens_per_s", "reward_latency_s"}


def _metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        m = re.match(rf"{name}\{{(.*)\}} (\S+)$", line)
        if m and all(f'{k}="{v}"' in m.group(1) for k, v in labels.items()):
            total += float(m.group(2))
    return total


def test_twenty_steps_against_a_live_service(live_server: str, tmp_path: Path) -> None:
    before = httpx.get(live_server + "/metrics").text
    cfg = TrainConfig(url=live_server, steps=20, out_dir=tmp_path / "run", eval_every=10, **SMALL)
    summary = train(cfg)
    after = httpx.get(live_server + "/metrics").text

    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    steps = [r for r in records if r["step"] > 0]
    assert [r["step"] for r in steps] == list(range(1, 21))
    assert summary["steps"] == 20 and summary["service_url"] == live_server
    assert 0.0 <= summary["reward_wait_fraction"] <= 1.0
    for key in (
        "reward_by_verifier",
        "pass_rate",
        "zero_std_fraction",
        "length_mean",
        "length_max",
        "clip_fraction",
        "entropy",
        "tokens_per_s",
        "reward_latency_s",
        "masked",
        "reward_wait_fraction",
    ):
        assert key in steps[0], key
    assert set(steps[0]["reward_by_verifier"]) == {"math", "format"}
    # Every signal of the verifiers graded with, each step, 0 included.
    assert all(
        set(r["signal_rates"]) == {"answer_in_thinking_only", "hedge", "restated_question", "empty_section"}
        for r in steps
    )
    assert all(0.0 <= rate <= 1.0 for r in steps for rate in r["signal_rates"].values())
    assert steps[0]["kl"] is None  # beta 0: no reference
    assert records[10]["accuracy"] is not None and records[20]["accuracy"] is not None
    assert (tmp_path / "run" / "curves.png").stat().st_size > 0

    # One request per generated chunk (two chunks a round) and per evaluation (start, 10, 20, end).
    sent = sum(r["gen_rounds"] * 2 for r in steps) + 4
    ok = _metric(after, "rlvr_grade_requests_total", status="200") - _metric(
        before, "rlvr_grade_requests_total", status="200"
    )
    assert ok == sent
    graded = _metric(after, "rlvr_items_total", verifier="math") - _metric(before, "rlvr_items_total", verifier="math")
    cached = _metric(after, "rlvr_cache_hits_total") - _metric(before, "rlvr_cache_hits_total")
    generated = sum(r["groups_generated"] for r in steps) * 4 + 4 * 6
    assert 0 < graded <= generated
    assert graded + cached >= 1


def _state(out_dir: Path) -> dict[str, Any]:
    return torch.load(out_dir / "checkpoint" / "state.pt", weights_only=True)  # type: ignore[no-any-return]


def test_resume_from_a_checkpoint_equals_an_uninterrupted_run(live_server: str, tmp_path: Path) -> None:
    common = {**SMALL, "url": live_server, "beta": 0.05, "mu": 2}
    train(TrainConfig(steps=4, out_dir=tmp_path / "whole", **common))
    train(TrainConfig(steps=2, out_dir=tmp_path / "split", **common))
    train(TrainConfig(steps=4, out_dir=tmp_path / "split", resume=True, **common))

    whole, split = _state(tmp_path / "whole"), _state(tmp_path / "split")
    assert whole["state"] == split["state"]
    for key in ("policy", "ref"):
        for name, tensor in whole[key].items():
            assert torch.equal(tensor, split[key][name]), (key, name)
    # The reference stayed frozen while the policy moved.
    assert any(not torch.equal(whole["policy"][n], whole["ref"][n]) for n in whole["policy"])

    def logged(d: Path) -> list[dict[str, Any]]:
        lines = (d / "log.jsonl").read_text().splitlines()
        return [{k: v for k, v in json.loads(line).items() if k not in TIMING} for line in lines]

    assert logged(tmp_path / "whole") == logged(tmp_path / "split")
    assert any(r["step"] > 2 and r["groups_trained"] > 0 for r in logged(tmp_path / "whole"))
    assert logged(tmp_path / "whole")[1]["kl"] is not None


def _group(problem: Problem, tok: Any, responses: list[str], mask: list[bool], adv: list[float]) -> Group:
    rewards = [1.0 if a > 0 else 0.0 for a in adv]
    scores, passed = [{"math": r} for r in rewards], [r > 0 for r in rewards]
    graded = GradedChunk(rewards, mask, list(adv), scores, passed, 0.0, [[]] * len(rewards))
    ids = [[*tok.encode(r), tok.eos_id] for r in responses]
    return Group(problem, tok.encode(problem.prompt), ids, [False] * len(ids), graded, adv, False)


def test_a_masked_reward_does_not_change_the_update(tmp_path: Path) -> None:
    """The same groups with and without one extra, masked response: same loss, same
    weights after the step (the masked row is out of the loss, not a reward of 0)."""
    cfg = TrainConfig(out_dir=tmp_path, aggregation="token_mean", **SMALL)
    results = []
    for extra in (False, True):
        policy = TinyPolicy.new(seed=0)
        pipe = RewardPipe("http://127.0.0.1:9", RewardSpec("math", 0.1, "x", "grpo"))  # never called
        try:
            trainer = Trainer(cfg, policy, PolicySampler(policy), ArithmeticTask(0, 5, "+", 6), pipe)
            trainer.freeze_reference()
            assert trainer.ref is None  # beta 0: the reference is never built
            tok = policy.tokenizer
            responses, mask, adv = ["\\boxed{4}", "\\boxed{5}"], [False, False], [1.0, -1.0]
            if extra:
                responses, mask, adv = [*responses, "\\boxed{7}"], [*mask, True], [*adv, 0.0]
            metrics = trainer.update([_group(Problem("2+2=", "4"), tok, responses, mask, adv)])
            results.append((metrics["loss"], [p.detach().clone() for p in policy.module.parameters()]))
        finally:
            pipe.close()
    (loss_a, params_a), (loss_b, params_b) = results
    assert loss_a == pytest.approx(loss_b, abs=1e-7)
    for a, b in zip(params_a, params_b, strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_config_from_yaml_toml_and_flags(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("group_size: 4\nadvantage: rloo\n")
    (tmp_path / "c.toml").write_text('group_size = 6\naggregation = "seq_mean_token_sum_norm"\n')
    parser = train_parser()
    cfg = config_from(parser.parse_args(["--config", str(tmp_path / "c.yaml"), "--group-size", "16"]))
    assert (cfg.group_size, cfg.advantage) == (16, "rloo")
    cfg = config_from(parser.parse_args(["--config", str(tmp_path / "c.toml"), "--no-dynamic-sampling"]))
    assert (cfg.group_size, cfg.aggregation, cfg.dynamic_sampling) == (6, "seq_mean_token_sum_norm", False)
    (tmp_path / "bad.yaml").write_text("group_sise: 4\n")
    with pytest.raises(SystemExit, match="group_sise"):
        config_from(parser.parse_args(["--config", str(tmp_path / "bad.yaml")]))
    with pytest.raises(SystemExit, match="group_size"):
        config_from(argparse.Namespace(config=None, group_size=1))
