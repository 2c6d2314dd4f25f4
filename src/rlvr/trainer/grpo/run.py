"""A whole run: build the parts from the config, warm up, evaluate, train, checkpoint,
write the summary and the curves."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from rlvr.trainer.grpo.config import TrainConfig
from rlvr.trainer.grpo.logs import CURVES_FILE, StepLog, plot_curves
from rlvr.trainer.grpo.loop import Trainer
from rlvr.trainer.grpo.policy import Policy, load_policy
from rlvr.trainer.grpo.progress import RunProgress, step_status
from rlvr.trainer.grpo.rewards import RewardPipe, RewardSpec
from rlvr.trainer.grpo.sampling import PolicySampler, layout, token_logprobs
from rlvr.trainer.grpo.tasks import ArithmeticTask, JsonlTask, Problem, ProblemSource, parse_label_bias

SUMMARY_FILE = "summary.json"
MODEL_DIR = "model"


def make_source(cfg: TrainConfig) -> ProblemSource:
    if cfg.prompts is None:
        bias = parse_label_bias(cfg.warmup_label_bias)
        return ArithmeticTask(cfg.seed, cfg.max_operand, cfg.ops, cfg.held_out, bias)
    return JsonlTask(cfg.prompts, cfg.prompt_field, cfg.answer_field, cfg.solution_field, cfg.held_out, cfg.seed)


def warm_up(policy: Policy, source: ProblemSource, cfg: TrainConfig, cursor: int, progress: RunProgress) -> int:
    """Supervised steps on the task's solutions (cross-entropy on the response tokens), so
    that GRPO starts from a non-zero pass rate: all-wrong groups give no gradient.
    Returns the index of the next unused problem."""
    if cfg.warmup_steps == 0:
        return cursor
    with progress.phase("warm-up", cfg.warmup_steps) as task:
        return _warm_up_steps(policy, source, cfg, cursor, lambda loss: progress.advance(task, f"loss {loss:.3f}"))


def _warm_up_steps(
    policy: Policy, source: ProblemSource, cfg: TrainConfig, cursor: int, stepped: Callable[[float], None]
) -> int:
    optimizer = torch.optim.AdamW(policy.module.parameters(), lr=cfg.warmup_lr)
    tok = policy.tokenizer
    for n in range(cfg.warmup_steps):
        # Linear decay to zero: the last steps average over many batches, so the policy
        # settles on the targets' distribution rather than on the last few batches.
        for group in optimizer.param_groups:
            group["lr"] = cfg.warmup_lr * (1 - n / cfg.warmup_steps)
        problems = [source.problem(cursor + i) for i in range(cfg.warmup_batch)]
        cursor += cfg.warmup_batch
        if any(p.solution is None for p in problems):
            raise ValueError("warmup_steps > 0 needs a solution for every problem (solution_field)")
        batch = layout(
            [tok.encode(p.prompt) for p in problems],
            [[*tok.encode(p.solution or ""), tok.eos_id] for p in problems],
            tok.pad_id,
        )
        logp, _ = token_logprobs(policy, batch, 1.0)
        mask = batch.response_mask.float()
        loss = -(logp * mask).sum() / mask.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stepped(float(loss.detach()))
    return cursor


def train(cfg: TrainConfig, progress: RunProgress | None = None) -> dict[str, Any]:
    """Run `cfg` to the end; returns the summary (also written to out_dir/summary.json).
    Each phase shows on `progress` (a new one, as `cfg.progress` says, when None)."""
    if progress is None:
        with RunProgress(cfg.progress) as own:
            return train(cfg, own)
    started = time.monotonic()
    torch.manual_seed(cfg.seed)
    policy = load_policy(cfg.model, cfg.seed)
    source = make_source(cfg)
    held_out = source.held_out()
    spec = RewardSpec(cfg.verifier, cfg.format_weight, cfg.format_pattern, cfg.advantage, cfg.grade_deadline_s)
    pipe = RewardPipe(cfg.url, spec)
    try:
        trainer = Trainer(cfg, policy, PolicySampler(policy), source, pipe)
        if cfg.resume:
            trainer.freeze_reference()  # the module the checkpoint's reference loads into
        resumed = cfg.resume and trainer.restore()
        if not resumed:
            trainer.state.cursor = warm_up(policy, source, cfg, trainer.state.cursor, progress)
            trainer.freeze_reference()
            trainer.state.accuracy_before = _evaluate(trainer, held_out, progress, "before GRPO")
        log = StepLog(cfg.out_dir, trainer.state.step if resumed else -1)
        if not resumed:
            log.write({"step": 0, "accuracy": trainer.state.accuracy_before})
        with progress.phase("grpo", cfg.steps, "first step...") as task:
            progress.progress.update(task, completed=trainer.state.step)
            while trainer.state.step < cfg.steps:
                record = trainer.step()
                if cfg.eval_every and trainer.state.step % cfg.eval_every == 0:
                    record["accuracy"] = trainer.accuracy(held_out)
                log.write(record)
                progress.advance(task, step_status(record))
                if cfg.checkpoint_every and trainer.state.step % cfg.checkpoint_every == 0:
                    trainer.save()
        accuracy_after = _evaluate(trainer, held_out, progress, "after GRPO")
        with progress.phase("save", status=str(cfg.out_dir)):
            trainer.save()
            policy.save(cfg.out_dir / MODEL_DIR)
    finally:
        pipe.close()
    records = log.records()
    if records[-1].get("accuracy") is None:
        records[-1]["accuracy"] = accuracy_after
    summary = _summary(cfg, trainer, records, accuracy_after, time.monotonic() - started)
    (cfg.out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    plot_curves(records, cfg.out_dir / CURVES_FILE)
    return summary


def _evaluate(trainer: Trainer, held_out: list[Problem], progress: RunProgress, when: str) -> float:
    with progress.phase("evaluate", status=f"greedy accuracy on {len(held_out)} held-out problems, {when}") as task:
        accuracy = trainer.accuracy(held_out)
        progress.progress.update(task, status=f"accuracy {accuracy:.0%} {when}")
        return accuracy


def _summary(
    cfg: TrainConfig, trainer: Trainer, records: list[dict[str, Any]], accuracy_after: float, wall_s: float
) -> dict[str, Any]:
    steps = [r for r in records if r["step"] > 0]
    step_s = sum(r["step_s"] for r in steps)
    return {
        "accuracy_before": trainer.state.accuracy_before,
        "accuracy_after": accuracy_after,
        "held_out": cfg.held_out,
        "steps": trainer.state.step,
        "wall_s": round(wall_s, 2),
        "reward_wait_fraction": sum(r["reward_wait_s"] for r in steps) / step_s if step_s > 0 else None,
        "service_url": cfg.url or "in-process",
        "pass_rate_first": steps[0]["pass_rate"] if steps else None,
        "pass_rate_last": steps[-1]["pass_rate"] if steps else None,
        "out_dir": str(Path(cfg.out_dir)),
    }
