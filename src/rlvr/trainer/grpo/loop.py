"""The GRPO loop: sample G responses per prompt, grade them through the service, update.

One step:
1. collect: generate in chunks; each chunk is graded (service: rewards, group advantages)
   while the next one generates. With dynamic sampling, groups whose rewards are all
   equal are dropped and new prompts generated, up to `max_gen_rounds` rounds.
2. update: π_old's per-token log-probs are computed once, before any pass; then `mu`
   passes of the clipped surrogate (+ β·k3 to the frozen reference when β > 0).
3. log: one JSON line (rewards per verifier, pass rate, zero-std fraction, lengths, KL,
   clip fraction, entropy, tokens/s, reward latency, masked count, wait share, and the
   rate of each signal the verifiers may report: the share of the step's responses that
   raised it).

Masked rewards (the grader failed) leave their response out of the loss entirely: its
row has no weight and counts in no denominator. They are never scored 0.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from rlvr.trainer.grpo import checkpoints
from rlvr.trainer.grpo.config import TrainConfig
from rlvr.trainer.grpo.losses import LossConfig, group_advantages, grpo_loss, overlong_penalty
from rlvr.trainer.grpo.policy import Policy
from rlvr.trainer.grpo.rewards import GradedChunk, PendingGrade, RewardPipe
from rlvr.trainer.grpo.sampling import GenerationConfig, Generator, layout, response_tokens, token_logprobs
from rlvr.trainer.grpo.tasks import Problem, ProblemSource

# Offsets that keep the (seed, step, ...) streams of generation and evaluation apart.
EVAL_STREAM = 1 << 40


@dataclass
class Group:
    problem: Problem
    prompt: list[int]
    responses: list[list[int]]
    truncated: list[bool]
    graded: GradedChunk  # this group's slice
    advantages: list[float]  # 0 where masked (and masked rows carry no weight anyway)
    zero_std: bool


@dataclass
class Collected:
    groups: list[Group] = field(default_factory=list)  # kept for the update
    seen: list[Group] = field(default_factory=list)  # every group generated (the step's statistics)
    generated_groups: int = 0
    zero_std_groups: int = 0
    rounds: int = 0
    generated_tokens: int = 0
    generate_s: float = 0.0
    wait_s: float = 0.0
    latencies: list[float] = field(default_factory=list)


def step_rng(seed: int, *parts: int) -> torch.Generator:
    """A generator seeded by (seed, parts): a run's randomness is a function of where it
    is, so resuming from a checkpoint redraws exactly what the uninterrupted run drew."""
    value = seed
    for p in parts:
        value = (value * 1_000_003 + p) % (1 << 62)
    return torch.Generator().manual_seed(value)


class Trainer:
    def __init__(
        self,
        cfg: TrainConfig,
        policy: Policy,
        sampler: Generator,
        source: ProblemSource,
        rewards: RewardPipe,
    ) -> None:
        self.cfg = cfg
        self.policy = policy
        self.sampler = sampler
        self.source = source
        self.rewards = rewards
        self.optimizer = torch.optim.AdamW(policy.module.parameters(), lr=cfg.lr, weight_decay=0.0)
        # β = 0: no reference at all (never copied, never run).
        self.ref: Policy | None = None
        self.gen = GenerationConfig(cfg.max_new_tokens, cfg.temperature, cfg.top_p)
        self.loss_cfg = LossConfig(cfg.clip_eps, cfg.clip_eps_high, cfg.beta, cfg.aggregation, cfg.max_new_tokens)
        self.state = checkpoints.RunState()
        # The verifiers' signal vocabulary, asked of the service with the first step's
        # statistics (when it has answered a grade, so it is up).
        self.signal_names: list[str] | None = None

    # -- the step ---------------------------------------------------------------------

    def step(self) -> dict[str, Any]:
        started = time.monotonic()
        got = self.collect(self.state.step)
        record: dict[str, Any] = {"step": self.state.step + 1}
        record.update(self.update(got.groups))
        record.update(self._rollout_stats(got))
        step_s = time.monotonic() - started
        record["step_s"] = step_s
        record["reward_wait_s"] = got.wait_s
        record["reward_wait_fraction"] = got.wait_s / step_s if step_s > 0 else 0.0
        self.state.step += 1
        return record

    def collect(self, step: int) -> Collected:
        cfg = self.cfg
        out = Collected()
        rounds = cfg.max_gen_rounds if cfg.dynamic_sampling else 1
        for r in range(rounds):
            problems = [self.source.problem(self.state.cursor + i) for i in range(cfg.prompts_per_step)]
            self.state.cursor += cfg.prompts_per_step
            for group in self._generate_round(problems, step, r, out):
                out.seen.append(group)
                out.generated_groups += 1
                out.zero_std_groups += group.zero_std
                if not (cfg.dynamic_sampling and group.zero_std) and any(not m for m in group.graded.mask):
                    out.groups.append(group)
            out.rounds = r + 1
            if len(out.groups) >= cfg.prompts_per_step:
                break
        out.groups = out.groups[: cfg.prompts_per_step]
        return out

    def _generate_round(self, problems: list[Problem], step: int, rnd: int, out: Collected) -> list[Group]:
        """Generate chunk by chunk; each chunk is submitted for grading before the next is
        generated, and the answers are awaited only after the last one."""
        g = self.cfg.group_size
        per_chunk = max(1, -(-len(problems) // self.cfg.gen_chunks))
        pending: list[tuple[list[Problem], list[list[int]], list[list[int]], list[bool], PendingGrade]] = []
        for c, first in enumerate(range(0, len(problems), per_chunk)):
            chunk = problems[first : first + per_chunk]
            prompts = [self.policy.tokenizer.encode(p.prompt) for p in chunk]
            t0 = time.monotonic()
            rollout = self.sampler.generate(
                [p for p in prompts for _ in range(g)], self.gen, step_rng(self.cfg.seed, step, rnd, c)
            )
            out.generate_s += time.monotonic() - t0
            out.generated_tokens += int(rollout.lengths.sum())
            ids = [f"s{step}-r{rnd}-p{first + i}" for i in range(len(chunk)) for _ in range(g)]
            grade = self.rewards.submit([p for p in chunk for _ in range(g)], rollout.texts, ids)
            pending.append((chunk, prompts, response_tokens(rollout), rollout.truncated.tolist(), grade))
        groups = []
        for chunk, prompts, responses, truncated, grade in pending:
            t0 = time.monotonic()
            graded = grade.result()
            out.wait_s += time.monotonic() - t0
            out.latencies.append(graded.latency_s)
            for i, problem in enumerate(chunk):
                rows = slice(i * g, (i + 1) * g)
                groups.append(self._group(problem, prompts[i], responses[rows], truncated[rows], _slice(graded, rows)))
        return groups

    def _group(
        self,
        problem: Problem,
        prompt: list[int],
        responses: list[list[int]],
        truncated: list[bool],
        graded: GradedChunk,
    ) -> Group:
        live = [i for i, m in enumerate(graded.mask) if not m]
        rewards = torch.tensor([graded.rewards[i] for i in live], dtype=torch.float64)
        if self.cfg.overlong_buffer > 0:
            # Shaping happens here, after grading: the service's advantages do not know
            # it, so this group's advantages are recomputed with the same estimator.
            lengths = torch.tensor([len(responses[i]) + (10**6 if truncated[i] else 0) for i in live])
            rewards = rewards + overlong_penalty(lengths, self.cfg.max_new_tokens, self.cfg.overlong_buffer).double()
            local = group_advantages(rewards, self.cfg.advantage).tolist()
            advantages = [0.0] * len(responses)
            for i, a in zip(live, local, strict=True):
                advantages[i] = float(a)
        else:
            advantages = [a if a is not None else 0.0 for a in graded.advantages]
        zero_std = len(live) < 2 or bool((rewards == rewards[0]).all())
        return Group(problem, prompt, responses, truncated, graded, advantages, zero_std)

    # -- the update -------------------------------------------------------------------

    def update(self, groups: list[Group]) -> dict[str, Any]:
        if not groups:
            return {"loss": None, "kl": None, "clip_fraction": None, "entropy": None, "groups_trained": 0}
        prompts = [gr.prompt for gr in groups for _ in gr.responses]
        responses = [r for gr in groups for r in gr.responses]
        batch = layout(prompts, responses, self.policy.tokenizer.pad_id)
        live = torch.tensor([not m for gr in groups for m in gr.graded.mask], dtype=torch.float32)
        mask = batch.response_mask.float() * live.unsqueeze(1)
        advantages = torch.tensor([a for gr in groups for a in gr.advantages], dtype=torch.float32)
        with torch.no_grad():
            old_logp, _ = token_logprobs(self.policy, batch, self.cfg.temperature)
            ref_logp = None
            if self.ref is not None:
                ref_logp, _ = token_logprobs(self.ref, batch, self.cfg.temperature)
        metrics: dict[str, Any] = {}
        for n in range(self.cfg.mu):
            logp, entropy = token_logprobs(self.policy, batch, self.cfg.temperature)
            out = grpo_loss(logp, old_logp, advantages, mask, self.loss_cfg, ref_logp)
            self.optimizer.zero_grad()
            out.loss.backward()
            nn.utils.clip_grad_norm_(self.policy.module.parameters(), self.cfg.grad_clip)
            self.optimizer.step()
            if n == 0:
                metrics = {"loss": float(out.loss.detach()), "kl": out.kl, "entropy": float(entropy)}
            metrics["clip_fraction"] = out.clip_fraction  # after the first pass ratios move off 1
        metrics["groups_trained"] = len(groups)
        return metrics

    def freeze_reference(self) -> None:
        """Snapshot the policy as the KL reference (only when β > 0)."""
        if self.cfg.beta > 0:
            self.ref = copy.deepcopy(self.policy)
            self.ref.module.eval().requires_grad_(False)

    # -- statistics -------------------------------------------------------------------

    def _rollout_stats(self, got: Collected) -> dict[str, Any]:
        chunks = [gr.graded for gr in got.seen]
        rewards = [r for c in chunks for r, m in zip(c.rewards, c.mask, strict=True) if not m]
        per_verifier: dict[str, list[float]] = {}
        for c in chunks:
            for scores, m in zip(c.scores, c.mask, strict=True):
                for name, value in scores.items():
                    if not m:
                        per_verifier.setdefault(name, []).append(value)
        lengths = [len(r) for gr in got.seen for r in gr.responses]
        return {
            "reward_mean": _mean(rewards),
            "reward_by_verifier": {k: _mean(v) for k, v in per_verifier.items()},
            "pass_rate": _mean([float(p) for c in chunks for p in c.passed]),
            "zero_std_fraction": got.zero_std_groups / got.generated_groups if got.generated_groups else None,
            "groups_generated": got.generated_groups,
            "gen_rounds": got.rounds,
            "length_mean": _mean([float(n) for n in lengths]),
            "length_max": max(lengths, default=None),
            "tokens_per_s": got.generated_tokens / got.generate_s if got.generate_s > 0 else None,
            "reward_latency_s": _mean(got.latencies),
            "masked": sum(m for c in chunks for m in c.mask),
            "signal_rates": _signal_rates(chunks, self._signal_names()),
        }

    def _signal_names(self) -> list[str]:
        if self.signal_names is None:
            self.signal_names = self.rewards.signal_names()
        return self.signal_names

    # -- evaluation -------------------------------------------------------------------

    def accuracy(self, problems: list[Problem]) -> float:
        """Greedy pass rate on `problems` (graded by the service like training)."""
        greedy = GenerationConfig(self.cfg.max_new_tokens, greedy=True)
        prompts = [self.policy.tokenizer.encode(p.prompt) for p in problems]
        rollout = self.sampler.generate(prompts, greedy, step_rng(self.cfg.seed, EVAL_STREAM))
        graded = self.rewards.submit(problems, rollout.texts, [f"eval-{i}" for i in range(len(problems))]).result()
        return _mean([float(p) for p in graded.passed]) or 0.0

    # -- checkpoints ------------------------------------------------------------------

    def save(self) -> None:
        ref = None if self.ref is None else self.ref.module
        checkpoints.save(self.cfg.out_dir, self.state, self.policy.module, self.optimizer, ref)

    def restore(self) -> bool:
        ref = None if self.ref is None else self.ref.module
        state = checkpoints.load(self.cfg.out_dir, self.policy.module, self.optimizer, ref)
        if state is None:
            return False
        self.state = state
        return True


def _slice(c: GradedChunk, rows: slice) -> GradedChunk:
    return GradedChunk(
        c.rewards[rows], c.mask[rows], c.advantages[rows], c.scores[rows], c.passed[rows], c.latency_s, c.signals[rows]
    )


def _signal_rates(chunks: list[GradedChunk], names: list[str]) -> dict[str, float]:
    """Each signal's share of the responses graded (0 for one none raised)."""
    items = [set(s) for c in chunks for s in c.signals]
    return {name: sum(name in s for s in items) / len(items) if items else 0.0 for name in names}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
