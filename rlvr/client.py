"""The client SDK: grade batches from a trainer and get rewards back.

Example (`rlvr_url` is the address of a running `rlvr serve`)::

    >>> from rlvr import RewardClient
    >>> with RewardClient(rlvr_url) as client:
    ...     rewards = client.rewards(
    ...         responses=["<think>2+2</think><answer>4</answer>", "4"],
    ...         verifier="format",
    ...     )
    >>> rewards.values, rewards.mask
    ([1.0, 0.0], [False, False])

Masked items (the grader failed) come back with `mask=True`; drop them from the loss
instead of treating their reward as 0.

Grading is idempotent, so the client retries what a retry can cure: connection errors,
429 and 5xx answers (a server draining for a restart answers 503), with exponential
backoff and jitter, or after the server's Retry-After.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_RETRIES = 5
DEFAULT_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


class RewardServiceError(RuntimeError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"rlvr answered {status}: {message}")
        self.status = status
        self.message = message


@dataclass
class Rewards:
    values: list[float]
    mask: list[bool]
    results: list[dict[str, Any]]
    stats: dict[str, Any]


class RewardClient:
    """Blocking client; retries connection errors, 429 and 5xx (`retries` times, waiting
    `backoff_s` doubled each time, or the server's Retry-After)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
    ) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=timeout_s)
        self.retries = retries
        self.backoff_s = backoff_s

    def __enter__(self) -> RewardClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def grade(self, items: Sequence[dict[str, Any]], deadline_s: float | None = None) -> dict[str, Any]:
        """The server's answer; RewardServiceError for an error answer that retries did not
        cure, or the transport's error (httpx.TransportError) when no answer came."""
        body: dict[str, Any] = {"items": list(items)}
        if deadline_s is not None:
            body["deadline_s"] = deadline_s
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                r = self.http.post("/v1/grade", json=body)
            except httpx.TransportError:
                if last:
                    raise
                time.sleep(self._backoff(attempt, None))
                continue
            if r.status_code in RETRIED_STATUSES and not last:
                time.sleep(self._backoff(attempt, r.headers.get("retry-after")))
                continue
            if r.status_code != 200:
                raise RewardServiceError(r.status_code, _error_message(r))
            return r.json()  # type: ignore[no-any-return]
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(MAX_BACKOFF_S, max(0.0, float(retry_after)))
            except ValueError:
                pass  # an HTTP date: fall back to our own schedule
        # Full jitter, so that the clients of a restarted server do not all come back at once.
        return random.uniform(0.0, min(MAX_BACKOFF_S, self.backoff_s * 2**attempt))

    def rewards(
        self,
        responses: Sequence[str],
        verifier: str | list[dict[str, Any]],
        ground_truths: Sequence[Any] | None = None,
        prompts: Sequence[str] | None = None,
        params: dict[str, Any] | None = None,
        groups: Sequence[str] | None = None,
    ) -> Rewards:
        items = []
        for i, response in enumerate(responses):
            item: dict[str, Any] = {"response": response, "verifier": verifier}
            if ground_truths is not None:
                item["ground_truth"] = ground_truths[i]
            if prompts is not None:
                item["prompt"] = prompts[i]
            if params and isinstance(verifier, str):
                item["params"] = params
            if groups is not None:
                item["group"] = groups[i]
            items.append(item)
        out = self.grade(items)
        results = out["results"]
        return Rewards([r["reward"] for r in results], [r["mask"] for r in results], results, out["stats"])


def _error_message(r: httpx.Response) -> str:
    try:
        return str(r.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return r.text[:500]
