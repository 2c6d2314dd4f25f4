"""Composite scoring, dedupe and in-flight sharing, with an in-process dispatcher."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from rlvr.service.cache import MemoryCache
from rlvr.service.errors import BadRequest, Overloaded
from rlvr.service.grading import Grader
from rlvr.service.metrics import Metrics
from rlvr.service.models import GradeRequest
from rlvr.service.settings import Settings
from rlvr.service.work import Unit, UnitResult, UnitRunner
from rlvr.verifiers.registry import Registry


class InlineDispatcher:
    """Runs units in this process; counts what it was asked to do."""

    stores_verdicts = False

    def __init__(self, delay_s: float = 0.0) -> None:
        self.runner = UnitRunner(Registry(use_entry_points=False))
        self.calls: list[int] = []
        self.delay_s = delay_s

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        self.calls.append(len(units))
        await asyncio.sleep(self.delay_s)
        return [self.runner.run(u) for u in units]

    def health(self) -> dict[str, Any]:
        return {"ready": True}

    async def stream_stats(self) -> None:
        return None


def make(max_in_flight: int = 1000, delay_s: float = 0.0) -> tuple[Grader, InlineDispatcher]:
    dispatcher = InlineDispatcher(delay_s)
    settings = Settings(workers=1, max_in_flight=max_in_flight)
    grader = Grader(settings, Registry(use_entry_points=False), dispatcher, MemoryCache(100), Metrics())
    return grader, dispatcher


GOOD = "<think>a</think><answer>b</answer>"


def req(*items: dict[str, Any], **kw: Any) -> GradeRequest:
    return GradeRequest.model_validate({"items": list(items), **kw})


def composite(weights: tuple[float, float], response: str = GOOD) -> dict[str, Any]:
    return {
        "response": response,
        "verifier": [
            {"name": "format", "weight": weights[0]},
            {"name": "format", "weight": weights[1], "params": {"preset": "tags", "tags": ["answer", "x"]}},
        ],
    }


@pytest.mark.parametrize(
    ("weights", "response", "reward", "verdict"),
    [
        ((1.0, 0.5), GOOD, 1.0, "partial"),
        ((1.0, 0.5), GOOD + "<x></x>", 0.5, "partial"),
        ((1.0, 0.5), "<answer>b</answer><x></x>", 0.5, "partial"),
        ((1.0, 0.5), "nothing", 0.0, "incorrect"),
        ((0.7, 0.3), "<think>a</think><answer>b</answer>", 0.7, "partial"),
        ((-0.5, 1.0), GOOD, -0.5, "partial"),
    ],
)
def test_composite_reward(weights: tuple[float, float], response: str, reward: float, verdict: str) -> None:
    grader, _ = make()
    res = asyncio.run(grader.grade(req(composite(weights, response)))).to_json()["results"][0]
    assert res["reward"] == pytest.approx(reward)
    assert res["verdict"] == verdict


def test_all_components_full_is_correct() -> None:
    grader, _ = make()
    item = {"response": GOOD, "verifier": [{"name": "format"}, {"name": "format", "weight": 0.1}]}
    res = asyncio.run(grader.grade(req(item))).to_json()["results"][0]
    # Both entries are the same unit; reward still counts both weights.
    assert res["reward"] == pytest.approx(1.1)
    assert res["verdict"] == "correct"


def test_duplicates_in_a_batch_are_graded_once() -> None:
    grader, dispatcher = make()
    items = [{"response": GOOD, "verifier": "format"}] * 8 + [{"response": "x", "verifier": "format"}] * 8
    out = asyncio.run(grader.grade(req(*items))).to_json()
    assert dispatcher.calls == [2]
    assert out["stats"]["unique"] == 2 and out["stats"]["items"] == 16
    assert [r["reward"] for r in out["results"]] == [1.0] * 8 + [0.0] * 8


def test_concurrent_identical_requests_share_one_verification() -> None:
    grader, dispatcher = make(delay_s=0.05)

    async def many() -> list[dict[str, Any]]:
        return await asyncio.gather(*(grader.grade(req({"response": GOOD, "verifier": "format"})) for _ in range(50)))

    outs = asyncio.run(many())
    assert sum(dispatcher.calls) == 1
    assert all(o.results[0].reward == 1.0 for o in outs)


def test_overload_is_refused_before_grading() -> None:
    grader, dispatcher = make(max_in_flight=3)
    items = [{"response": f"r{i}", "verifier": "format"} for i in range(4)]
    with pytest.raises(Overloaded):
        asyncio.run(grader.grade(req(*items)))
    assert dispatcher.calls == []
    assert grader.in_flight_units == 0


def test_repeated_invalid_ground_truth_reported_per_item() -> None:
    grader, dispatcher = make()
    bad = {"response": "x", "verifier": "format", "params": {"preset": "tags"}}
    with pytest.raises(BadRequest) as info:
        grader.plan(req(bad, bad).model_copy(update={"strict": True}))
    assert "items[0].params" in info.value.message
    assert "items[1]" in info.value.message
    assert dispatcher.calls == []
