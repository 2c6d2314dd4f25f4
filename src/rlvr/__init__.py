"""rlvr: rewards from programs for RL with verifiable rewards.

This module is the public face: what a plugin author or a trainer imports.

A plugin (see `rlvr.verifiers.base` for the full contract)::

    >>> from pydantic import BaseModel
    >>> from rlvr import GradeInput, NoParams, Outcome, Verdict
    >>> class Exact:
    ...     name = "exact"
    ...     version = "1.0.0"
    ...     description = "Response equals the ground-truth string."
    ...     params_model = NoParams
    ...     ground_truth_model = str
    ...     def verify(self, item: GradeInput, params: NoParams, ground_truth: str) -> Outcome:
    ...         ok = item.response.strip() == ground_truth
    ...         return Outcome(score=float(ok), verdict=Verdict.CORRECT if ok else Verdict.INCORRECT)
    >>> Exact().verify(GradeInput(prompt="2+2?", response=" 4 "), NoParams(), "4").verdict
    <Verdict.CORRECT: 'correct'>

A trainer (`rlvr_url` is a running `rlvr serve`; without a URL the client grades
in-process, and `AsyncRewardClient` is the same for asyncio code)::

    >>> from rlvr import RewardClient
    >>> with RewardClient(rlvr_url) as client:
    ...     rewards = client.rewards(["<think>2+2</think><answer>4</answer>", "4"], verifier="format")
    >>> rewards.values, rewards.mask
    ([1.0, 0.0], [False, False])

Names are imported on first use, so that `import rlvr` stays cheap for the sandbox's
zygote, which every job forks.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rlvr.version import __version__

if TYPE_CHECKING:
    from rlvr.client import AsyncRewardClient, Graded, RewardClient, Rewards, RewardServiceError
    from rlvr.results import GradeResult
    from rlvr.verifiers.base import GradeInput, NoParams, Outcome, Verdict, Verifier
    from rlvr.verifiers.errors import PluginError, VerifierError


__all__ = [
    "AsyncRewardClient",
    "GradeInput",
    "GradeResult",
    "Graded",
    "NoParams",
    "Outcome",
    "PluginError",
    "RewardClient",
    "RewardServiceError",
    "Rewards",
    "Verdict",
    "Verifier",
    "VerifierError",
    "__version__",
]

_HOMES = {
    "GradeInput": "rlvr.verifiers.base",
    "NoParams": "rlvr.verifiers.base",
    "Outcome": "rlvr.verifiers.base",
    "Verdict": "rlvr.verifiers.base",
    "Verifier": "rlvr.verifiers.base",
    "PluginError": "rlvr.verifiers.errors",
    "VerifierError": "rlvr.verifiers.errors",
    "RewardClient": "rlvr.client",
    "AsyncRewardClient": "rlvr.client",
    "GradeResult": "rlvr.results",
    "Graded": "rlvr.client",
    "RewardServiceError": "rlvr.client",
    "Rewards": "rlvr.client",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'rlvr' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
