"""Generation and per-token log-probs: the one place that lays sequences out.

A batch is left-padded prompts followed by responses (right-padded after their end of
sequence). `Rollout.response_mask` marks the response tokens, the end-of-sequence token
included (stopping is a decision the policy learns). Sampling recomputes the whole prefix
each token (no KV cache): the tiny models this runs on CPU do not need one, and a faster
engine plugs in behind `Generator`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import Tensor

from rlvr.trainer.grpo.policy import Policy


@dataclass(frozen=True)
class GenerationConfig:
    max_new_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    greedy: bool = False


@dataclass
class Rollout:
    ids: Tensor  # (B, T) prompt + response tokens
    attention: Tensor  # (B, T) 1 on real tokens
    response_mask: Tensor  # (B, T) 1 on response tokens
    texts: list[str]  # decoded responses
    lengths: Tensor  # (B,) response tokens, end of sequence included
    truncated: Tensor  # (B,) bool: hit max_new_tokens without ending


class Generator(Protocol):
    """The generation backend seam (vLLM or another engine would implement this)."""

    def generate(self, prompts: list[list[int]], cfg: GenerationConfig, rng: torch.Generator) -> Rollout: ...


def positions_of(attention: Tensor) -> Tensor:
    """Position ids that start at 0 on each row's first real token, whatever the padding."""
    return (attention.long().cumsum(dim=1) - 1).clamp(min=0)


def _top_p_filter(logits: Tensor, top_p: float) -> Tensor:
    """Keep the smallest set of tokens whose probability reaches top_p (nucleus sampling)."""
    if top_p >= 1.0:
        return logits
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    # drop a token when the ones before it already reach top_p (the top token always stays)
    drop_sorted = (cumulative - sorted_logits.softmax(dim=-1)) >= top_p
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


class PolicySampler:
    """Generation with the policy itself, token by token."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    @torch.no_grad()
    def generate(self, prompts: list[list[int]], cfg: GenerationConfig, rng: torch.Generator) -> Rollout:
        tok = self.policy.tokenizer
        width = max(len(p) for p in prompts)
        ids = torch.tensor([[tok.pad_id] * (width - len(p)) + p for p in prompts], dtype=torch.long)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.long)
        done = torch.zeros(len(prompts), dtype=torch.bool)
        for _ in range(cfg.max_new_tokens):
            logits = self.policy.logits(ids, attention, positions_of(attention))[:, -1, :].float()
            nxt = self._pick(logits, cfg, rng)
            live = ~done
            ids = torch.cat([ids, torch.where(live, nxt, tok.pad_id).unsqueeze(1)], dim=1)
            attention = torch.cat([attention, live.long().unsqueeze(1)], dim=1)
            done = done | (nxt == tok.eos_id)
            if bool(done.all()):
                break
        response_mask = torch.zeros_like(attention)
        response_mask[:, width:] = attention[:, width:]
        texts = [
            tok.decode([int(t) for t, m in zip(row[width:], keep[width:], strict=True) if m and int(t) != tok.eos_id])
            for row, keep in zip(ids, response_mask, strict=True)
        ]
        return Rollout(ids, attention, response_mask, texts, response_mask.sum(dim=1), ~done)

    @staticmethod
    def _pick(logits: Tensor, cfg: GenerationConfig, rng: torch.Generator) -> Tensor:
        if cfg.greedy:
            return logits.argmax(dim=-1)
        probs = _top_p_filter(logits / cfg.temperature, cfg.top_p).softmax(dim=-1)
        return torch.multinomial(probs, 1, generator=rng).squeeze(1)


def token_logprobs(policy: Policy, rollout: Rollout, temperature: float) -> tuple[Tensor, Tensor]:
    """log π(token | prefix) at each position (B, T), 0 where nothing is predicted, and
    the mean entropy of the response positions' distributions. Logits are divided by the
    sampling temperature, so that π_old is the distribution the tokens were drawn from."""
    logits = policy.logits(rollout.ids, rollout.attention, positions_of(rollout.attention)).float()
    logp_all = F.log_softmax(logits[:, :-1, :] / temperature, dim=-1)
    picked = logp_all.gather(-1, rollout.ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    out = torch.zeros(rollout.ids.shape, dtype=picked.dtype)
    out[:, 1:] = picked
    mask = rollout.response_mask[:, 1:].float()
    entropy = -(logp_all.exp() * logp_all).sum(dim=-1)
    mean_entropy = (entropy.detach() * mask).sum() / mask.sum().clamp(min=1)
    return out, mean_entropy


def layout(prompts: list[list[int]], responses: list[list[int]], pad_id: int) -> Rollout:
    """Prompts and responses (token ids, end of sequence included where it was sampled)
    laid out as one batch: left-padded prompts, right-padded responses."""
    width = max(len(p) for p in prompts)
    longest = max(1, max(len(r) for r in responses))
    rows, attention, resp = [], [], []
    for p, r in zip(prompts, responses, strict=True):
        pad_left, pad_right = width - len(p), longest - len(r)
        rows.append([pad_id] * pad_left + p + r + [pad_id] * pad_right)
        attention.append([0] * pad_left + [1] * (len(p) + len(r)) + [0] * pad_right)
        resp.append([0] * (pad_left + len(p)) + [1] * len(r) + [0] * pad_right)
    mask = torch.tensor(resp, dtype=torch.long)
    never_truncated = torch.zeros(len(rows), dtype=torch.bool)
    return Rollout(torch.tensor(rows), torch.tensor(attention), mask, [], mask.sum(dim=1), never_truncated)


def response_tokens(rollout: Rollout) -> list[list[int]]:
    return [
        [int(t) for t, m in zip(row, keep, strict=True) if m]
        for row, keep in zip(rollout.ids, rollout.response_mask, strict=True)
    ]
