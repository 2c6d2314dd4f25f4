"""Grading through the public async client, off the training thread.

`RewardPipe.submit` returns at once with a future; the loop generates the next chunk
while the service grades this one (the same policy made both, so the overlap changes
nothing the update sees). The client runs on an event loop thread of its own, so its
retries and chunking work while torch holds the main thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from rlvr.client import AsyncRewardClient, Graded
from rlvr.trainer.grpo.losses import Estimator
from rlvr.trainer.grpo.tasks import Problem


@dataclass(frozen=True)
class RewardSpec:
    """What the service is asked: the correctness verifier, plus an optional weighted
    `format` regex reward (a composite verifier list)."""

    verifier: str
    format_weight: float
    format_pattern: str
    advantage: Estimator
    deadline_s: float | None = None

    def verifier_field(self) -> str | list[dict[str, Any]]:
        if self.format_weight <= 0:
            return self.verifier
        return [
            {"name": self.verifier, "weight": 1.0},
            {
                "name": "format",
                "weight": self.format_weight,
                "params": {"preset": "regex", "pattern": self.format_pattern},
            },
        ]


@dataclass
class GradedChunk:
    rewards: list[float]
    mask: list[bool]
    advantages: list[float | None]
    scores: list[dict[str, float]]
    passed: list[bool]  # the correctness verifier's score is 1
    latency_s: float
    signals: list[list[str]]  # each item's (`GradeResult.signals`)


class PendingGrade:
    def __init__(self, future: Future[Graded], spec: RewardSpec, started: float) -> None:
        self.future = future
        self.spec = spec
        self.started = started
        self.done_at: float | None = None

    def stamp(self, _: Future[Graded]) -> None:
        # Called on the loop thread as the answer lands: the latency is the service's, not
        # however long the trainer took to come back for it.
        self.done_at = time.monotonic()

    def result(self) -> GradedChunk:
        graded = self.future.result()
        latency = (self.done_at or time.monotonic()) - self.started
        results = graded.results
        scores = [r.scores or {self.spec.verifier: r.reward} for r in results]
        return GradedChunk(
            rewards=[r.reward for r in results],
            mask=[r.mask for r in results],
            advantages=[r.advantage for r in results],
            scores=scores,
            passed=[not r.mask and s.get(self.spec.verifier, 0.0) >= 1.0 for r, s in zip(results, scores, strict=True)],
            latency_s=latency,
            signals=[list(r.signals) for r in results],
        )


class RewardPipe:
    """An AsyncRewardClient (`url` None grades in-process) on its own event loop thread."""

    def __init__(self, url: str | None, spec: RewardSpec) -> None:
        self.spec = spec
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="grpo-rewards", daemon=True)
        self._thread.start()
        self.client = AsyncRewardClient(url)

    def submit(self, problems: Sequence[Problem], responses: Sequence[str], groups: Sequence[str]) -> PendingGrade:
        """Grade responses[i] against problems[i]; items sharing a group id are one group."""
        items = [
            {
                "prompt": p.prompt,
                "response": r,
                "verifier": self.spec.verifier_field(),
                "ground_truth": p.ground_truth,
                "group": g,
            }
            for p, r, g in zip(problems, responses, groups, strict=True)
        ]
        request = self.client.grade(items, deadline_s=self.spec.deadline_s, advantage=self.spec.advantage)
        future = asyncio.run_coroutine_threadsafe(request, self._loop)
        pending = PendingGrade(future, self.spec, time.monotonic())
        future.add_done_callback(pending.stamp)
        return pending

    def signal_names(self) -> list[str]:
        """The signals the spec's verifiers may report, sorted (the rates a step logs)."""
        verifiers = [self.spec.verifier] + (["format"] if self.spec.format_weight > 0 else [])

        async def names() -> list[str]:
            return sorted({name for v in verifiers for name in await self.client.signal_names(v)})

        return asyncio.run_coroutine_threadsafe(names(), self._loop).result()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self.client.aclose(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
