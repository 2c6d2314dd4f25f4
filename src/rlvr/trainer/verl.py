"""A custom reward function module for verl (0.9.1): point verl at this module.

    reward:
      custom_reward_function:
        path: pkg://rlvr.trainer.verl  # or the file's path
        name: compute_score_async      # or compute_score; compute_score_batch for the
        reward_kwargs:                 # legacy `batch` reward manager
          url: http://rlvr:8000        # else RLVR_URL; else graded in this process
          verifiers: {openai/gsm8k: math, my_code_set: code}
          retry_budget_s: 120          # how long a call retries through a restart

- The verifier is `extra_info["verifier"]` when the sample has one, else the one
  `verifiers` (data source -> verifier, merged over VERIFIERS) names for its `data_source`, else
  `verifier=` from the reward kwargs; a sample with none of them is an error.
- `solution_str` is the response only (verl decodes it without the prompt).
- Every sample answers the same keys: `score`, `acc` (1.0 for a correct verdict),
  `masked`, and `rlvr_signal_<name>` (1.0 where the item raised the signal) for every
  signal of every verifier the service has (`GET /v1/verifiers`), so verl's per-key
  means are each signal's rate in the step. verl has no per-sample mask, so a masked
  item (the grader failed) scores 0.0 with `masked: 1.0`, which verl logs; filter on it
  to see grader failures.
- verl's reward loop awaits `compute_score_async` for many samples at once, each a
  single-item request over a shared keep-alive client.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from rlvr.client import DEFAULT_RETRY_BUDGET_S
from rlvr.results import GradeResult
from rlvr.trainer.clients import shared_async_client, shared_client

URL_ENV = "RLVR_URL"
SIGNAL_PREFIX = "rlvr_signal_"

# Well-known data sets (the names verl's examples give `data_source`). The reward kwarg
# is `verifiers`, not `data_sources`: verl merges reward kwargs over the call's own, and
# `compute_score_batch` takes `data_sources`.
VERIFIERS: dict[str, str] = {
    "openai/gsm8k": "math",
    "lighteval/MATH": "math",
    "DigitalLearningGmbH/MATH-lighteval": "math",
    "HuggingFaceH4/MATH-500": "math",
    "math_dapo": "math",
    "aime2024": "math",
    "aime2025": "math",
}


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, **kwargs: Any
) -> dict[str, float]:
    item = grade_item(data_source, solution_str, ground_truth, extra_info, kwargs)
    client = shared_client(rlvr_url(kwargs), retry_budget(kwargs))
    [result] = client.grade([item]).results
    return score_dict(result, client.signal_names())


async def compute_score_async(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, **kwargs: Any
) -> dict[str, float]:
    item = grade_item(data_source, solution_str, ground_truth, extra_info, kwargs)
    client = shared_async_client(rlvr_url(kwargs), retry_budget(kwargs))
    [result] = (await client.grade([item])).results
    return score_dict(result, await client.signal_names())


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """For the legacy `batch` reward manager: one request (in chunks) for the batch."""
    infos = extra_infos if extra_infos is not None else [None] * len(solution_strs)
    items = [
        grade_item(*sample, kwargs) for sample in zip(data_sources, solution_strs, ground_truths, infos, strict=True)
    ]
    client = shared_client(rlvr_url(kwargs), retry_budget(kwargs))
    names = client.signal_names()
    return [score_dict(r, names) for r in client.grade(items).results]


def rlvr_url(kwargs: Mapping[str, Any]) -> str | None:
    url = kwargs.get("url") or os.environ.get(URL_ENV)
    return str(url) if url else None


def retry_budget(kwargs: Mapping[str, Any]) -> float:
    return float(kwargs.get("retry_budget_s", DEFAULT_RETRY_BUDGET_S))


def verifier_for(data_source: str, extra_info: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> str:
    if extra_info and extra_info.get("verifier"):
        return str(extra_info["verifier"])
    mapping = {**VERIFIERS, **dict(kwargs.get("verifiers") or {})}
    verifier = mapping.get(data_source) or kwargs.get("verifier")
    if not verifier:
        raise ValueError(
            f"rlvr: no verifier for data_source {data_source!r}: set extra_info['verifier'], "
            "reward_kwargs.verifiers or reward_kwargs.verifier"
        )
    return str(verifier)


def grade_item(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None,
    kwargs: Mapping[str, Any],
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "response": solution_str,
        "verifier": verifier_for(data_source, extra_info, kwargs),
        "ground_truth": _label(_plain(ground_truth)),
    }
    params = (extra_info or {}).get("rlvr_params") or kwargs.get("params")
    if params:
        item["params"] = _plain(params)
    return item


def score_dict(result: GradeResult, signal_names: Sequence[str] = ()) -> dict[str, float]:
    """The sample's dict: its score, and one 0/1 entry per name in `signal_names`."""
    signals = {f"{SIGNAL_PREFIX}{name}": float(name in result.signals) for name in signal_names}
    if result.mask:
        return {"score": 0.0, "acc": 0.0, "masked": 1.0, **signals}
    return {"score": result.reward, "acc": float(result.verdict == "correct"), "masked": 0.0, **signals}


def _label(value: Any) -> Any:
    """Code data sets store their tests as JSON text in the parquet's ground truth: a
    string holding a JSON object is that object (as `/get_reward` reads labels)."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value  # a math answer such as {1, 2}
        return parsed if isinstance(parsed, dict) else value
    return value


def _plain(value: Any) -> Any:
    """JSON data from what verl hands over: parquet rows come as numpy arrays and scalars,
    reward kwargs as OmegaConf containers."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, str | bytes):
        return value
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _plain(value.tolist())
    if isinstance(value, Sequence):
        return [_plain(v) for v in value]
    return value
