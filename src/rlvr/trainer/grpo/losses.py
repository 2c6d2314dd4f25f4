"""Advantages and the GRPO loss, as plain tensor functions.

The loop takes advantages from the service (it computes them per `group`); the local
estimators here are the same formulas, for the tests' hand-computed checks and for
rewards the trainer reshapes itself (overlong shaping) after grading.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

Estimator = Literal["grpo", "dr_grpo", "rloo"]
Aggregation = Literal["seq_mean_token_mean", "token_mean", "seq_mean_token_sum_norm"]

# The seed's (and the service's) epsilon: std + 1e-4 keeps an all-equal group finite.
STD_EPS = 1e-4


def group_advantages(rewards: Tensor, estimator: Estimator) -> Tensor:
    """Advantages of one group's rewards (G,), masked items already left out.

    grpo: (r - mean) / (unbiased std + eps); dr_grpo: r - mean; rloo: r minus the mean of
    the others. A single-item group has no baseline: its advantage is 0.
    """
    n = rewards.numel()
    if n < 2:
        return torch.zeros_like(rewards)
    centred = rewards - rewards.mean()
    if estimator == "grpo":
        return centred / (rewards.std(unbiased=True) + STD_EPS)
    if estimator == "dr_grpo":
        return centred
    # Leave-one-out: r_i - (sum - r_i)/(n-1) == n/(n-1) * (r_i - mean).
    return centred * n / (n - 1)


def overlong_penalty(lengths: Tensor, max_new_tokens: int, buffer: int) -> Tensor:
    """DAPO's soft overlong punishment: 0 up to max - buffer tokens, then falling linearly
    to -1 at the maximum (a truncated response gets -1). buffer 0 turns it off."""
    if buffer <= 0:
        return torch.zeros_like(lengths, dtype=torch.float32)
    free = max_new_tokens - buffer
    over = (lengths.float() - free).clamp(min=0.0)
    return -(over / buffer).clamp(max=1.0)


def aggregation_weights(mask: Tensor, mode: Aggregation, norm_tokens: int) -> Tensor:
    """Weight of each token's loss (B, T), so that the batch loss is sum(weight * loss).

    `mask` is 1 on the response tokens of responses that count (a masked reward's row is
    all 0, so it adds nothing to the sum nor to any denominator).
    - seq_mean_token_mean (GRPO): 1 / (|o_i| * responses), the length-dilution the seed shows;
    - token_mean (DAPO): 1 / (all response tokens);
    - seq_mean_token_sum_norm (Dr. GRPO): 1 / (norm_tokens * responses), a constant.
    """
    mask = mask.float()
    lengths = mask.sum(dim=1, keepdim=True)
    responses = (lengths > 0).sum().clamp(min=1)
    if mode == "seq_mean_token_mean":
        return mask / (lengths.clamp(min=1) * responses)
    if mode == "token_mean":
        return mask / mask.sum().clamp(min=1)
    return mask / (norm_tokens * responses)


def k3_kl(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """Per-token k3 estimate of KL(π‖π_ref): exp(d) - d - 1 with d = ref - logp; >= 0."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1


@dataclass(frozen=True)
class LossConfig:
    clip_eps: float = 0.2
    clip_eps_high: float = 0.2  # DAPO's clip-higher uses 0.28
    beta: float = 0.0
    aggregation: Aggregation = "seq_mean_token_mean"
    norm_tokens: int = 1  # the Dr. GRPO constant (the loop passes max_new_tokens)


@dataclass
class LossOut:
    loss: Tensor
    clip_fraction: float
    kl: float | None


def grpo_loss(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    mask: Tensor,
    cfg: LossConfig,
    ref_logp: Tensor | None = None,
) -> LossOut:
    """Clipped surrogate with per-token ratios against the cached π_old log-probs, plus
    β·k3 to the reference. logp/old_logp/mask: (B, T); advantages: (B,)."""
    ratio = torch.exp(logp - old_logp)
    adv = advantages.unsqueeze(1)
    unclipped = ratio * adv
    clipped = ratio.clamp(1.0 - cfg.clip_eps, 1.0 + cfg.clip_eps_high) * adv
    per_token = -torch.minimum(unclipped, clipped)
    weights = aggregation_weights(mask, cfg.aggregation, cfg.norm_tokens)
    kl_value: float | None = None
    if cfg.beta > 0:
        if ref_logp is None:
            raise ValueError("beta > 0 needs the reference log-probs")
        kl = k3_kl(logp, ref_logp)
        per_token = per_token + cfg.beta * kl
        kl_value = _masked_mean(kl.detach(), mask)
    live = mask.bool()
    clip_fraction = _masked_mean((clipped < unclipped).float(), live) if live.any() else 0.0
    return LossOut((per_token * weights).sum(), clip_fraction, kl_value)


def _masked_mean(values: Tensor, mask: Tensor) -> float:
    m = mask.float()
    return float((values * m).sum() / m.sum().clamp(min=1))
