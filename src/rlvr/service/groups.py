"""Group statistics of a graded request: per-item advantages and per-group pass@k,
majority vote and agreement (what GRPO-style trainers compute from a group's rewards).

Definitions (binding; the tests hold hand-computed values for each):

- A group is the unmasked items that share `group`. A masked item is the grader's
  failure, not the policy's: it is left out of its group's statistics and gets
  `advantage: null`, `agreement: null`.
- `mean` and `std` are over the items' `reward`; `std` is the unbiased (n - 1) standard
  deviation, 0 for a group of one. `zero_std` is true when every reward is equal (a
  group of zero or one item included): such a group gives no gradient.
- Advantages: `grpo` (r - mean) / (std + 1e-4); `dr_grpo` r - mean; `rloo` r minus the
  mean of the others' rewards (0 for a group of one).
- "Correct" means `verdict == "correct"`: every verifier of the item gave full marks
  (a partial score, e.g. code's `fraction`, is not correct). `pass@k` is the unbiased
  estimator 1 - C(n - c, k) / C(n, k) over the n unmasked items of which c are correct,
  for k = 1, 2, 4, … (powers of two) up to n.
- Self-consistency: a verifier that reports a canonical answer puts it in
  `details["normalized"]` (`math` does: the response's answer after normalisation, what
  it compares with the gold). Correct items all gave the gold's answer, however they
  wrote it (`4`, `4.0`, `\\frac{8}{2}`), so they vote as one answer; other items vote with
  their normalised text. An item's `agreement` is the share of its group's n items that
  voted as it did (null for an item that gave no answer). `maj@n` says whether the most
  frequent answer is the correct one; ties are broken by first appearance in request
  order (as `collections.Counter.most_common` does). Both are null in a group where no
  item reports an answer (a verifier without canonical answers).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from rlvr.results import Details, GradeResult, GroupStats, Verdict

Advantage = Literal["grpo", "dr_grpo", "rloo"]
GRPO_STD_EPS = 1e-4
ANSWER_KEY = "normalized"
# The vote of every correct item: they all gave the gold's answer.
_GOLD = object()


@dataclass(slots=True)
class _Group:
    rewards: list[float] = field(default_factory=list)
    correct: list[bool] = field(default_factory=list)
    answers: list[str | None] = field(default_factory=list)
    members: list[GradeResult] = field(default_factory=list)
    masked: int = 0
    signals: dict[str, int] = field(default_factory=dict)


def apply_group_stats(results: Sequence[GradeResult], advantage: Advantage | None) -> dict[str, GroupStats]:
    """Adds `advantage` and `agreement` to every result (null outside a group) and
    returns `stats.groups`: each group's statistics, keyed by its name."""
    groups: dict[str, _Group] = {}
    for result in results:
        # A model's attribute write costs a microsecond or two: only what is set is cleared.
        if result.advantage is not None:
            result.advantage = None
        if result.agreement is not None:
            result.agreement = None
        name = result.group
        if name is None:
            continue
        group = groups.setdefault(name, _Group())
        for signal in result.signals:
            group.signals[signal] = group.signals.get(signal, 0) + 1
        if result.mask:
            group.masked += 1
            continue
        group.members.append(result)
        group.rewards.append(result.reward)
        group.correct.append(result.verdict == Verdict.CORRECT)
        group.answers.append(canonical_answer(result.details))
    return {name: _finish(group, advantage) for name, group in groups.items()}


def canonical_answer(details: Details) -> str | None:
    """The answer a verifier reported as canonical, if any (see the module docstring)."""
    answer = details.get(ANSWER_KEY)
    return answer if isinstance(answer, str) else None


def _finish(group: _Group, advantage: Advantage | None) -> GroupStats:
    n = len(group.rewards)
    mean = math.fsum(group.rewards) / n if n else None
    std = _unbiased_std(group.rewards, mean)
    if advantage is not None and mean is not None:
        for member, value in zip(group.members, advantages(group.rewards, advantage), strict=True):
            member.advantage = value
    majority = _majority(group)
    return GroupStats(
        n=n,
        masked=group.masked,
        mean=mean,
        std=std,
        pass_at_k=pass_at_k(n, sum(group.correct)),
        zero_std=len(set(group.rewards)) <= 1,
        maj_at_n=majority,
        signals=group.signals,
    )


def _unbiased_std(rewards: Sequence[float], mean: float | None) -> float | None:
    if mean is None:
        return None
    if len(rewards) < 2:
        return 0.0
    return math.sqrt(math.fsum((r - mean) ** 2 for r in rewards) / (len(rewards) - 1))


def advantages(rewards: Sequence[float], estimator: Advantage) -> list[float]:
    """Each reward's advantage within its group (see the module docstring)."""
    n = len(rewards)
    total = math.fsum(rewards)
    mean = total / n
    if estimator == "dr_grpo":
        return [r - mean for r in rewards]
    if estimator == "rloo":
        return [r - (total - r) / (n - 1) if n > 1 else 0.0 for r in rewards]
    std = _unbiased_std(rewards, mean) or 0.0
    return [(r - mean) / (std + GRPO_STD_EPS) for r in rewards]


def pass_at_k(n: int, c: int) -> dict[str, float]:
    """The unbiased pass@k of n samples with c correct, for k = 1, 2, 4, … up to n."""
    out: dict[str, float] = {}
    k = 1
    while k <= n:
        out[str(k)] = 1.0 - math.comb(n - c, k) / math.comb(n, k)
        k *= 2
    return out


def _majority(group: _Group) -> bool | None:
    """Whether the most frequent answer is the correct one; sets each member's agreement."""
    if all(answer is None for answer in group.answers):
        return None
    keys: list[object] = [_GOLD if ok else answer for ok, answer in zip(group.correct, group.answers, strict=True)]
    votes = Counter(key for key in keys if key is not None)
    n = len(keys)
    for member, key in zip(group.members, keys, strict=True):
        if key is not None:
            member.agreement = votes[key] / n
    return votes.most_common(1)[0][0] is _GOLD
