"""How many jobs a client keeps in flight: together, their memory limits stay within
`MEMORY_IN_FLIGHT_MB` (a batch at its limits must not bring on the host's OOM killer),
and a job larger than that still runs, alone."""

from __future__ import annotations

import pytest

from rlvr.sandboxes import Limits, RunSpec
from rlvr.sandboxes.local import client as local_client
from rlvr.sandboxes.local.client import get_local_sandbox
from rlvr.sandboxes.runner import wire
from tests.services import require

# Each job says when it ran, on the clock every job shares.
TIMED = "import time\nS = time.monotonic()\ntime.sleep(0.25)\nE = time.monotonic()\n"


def most_at_once(memory_mb: list[int]) -> int:
    """The most jobs that ran at one moment, of a batch with these memory limits."""
    specs = [
        RunSpec({"mode": "values", "code": TIMED, "exprs": ["(S, E)"], "timeout_s": 5}, Limits(memory_mb=mb))
        for mb in memory_mb
    ]
    results = get_local_sandbox().run_many(specs)
    spans = []
    for result in results:
        record = next(r for r in result.records if r.get("i") == 0)
        assert record["s"] == "ok", result
        spans.append(wire.decode(record["v"]))
    return max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)


@pytest.fixture(autouse=True)
def _local_sandbox() -> None:
    level = get_local_sandbox().isolation()["isolation"]
    require(level != "none", f"the local sandbox (here: {level!r})")


@pytest.mark.parametrize(
    ("budget_mb", "memory_mb", "at_most"),
    [
        (1024, [512] * 6, 2),
        (1024, [256] * 8, 4),
        (1536, [512, 1024] * 3, 2),
        (600, [512] * 4, 1),
        (256, [512] * 3, 1),  # each larger than the budget: one at a time
    ],
)
def test_jobs_in_flight_stay_within_the_memory_budget(
    monkeypatch: pytest.MonkeyPatch, budget_mb: int, memory_mb: list[int], at_most: int
) -> None:
    monkeypatch.setattr(local_client, "MEMORY_IN_FLIGHT_MB", budget_mb)
    assert most_at_once(memory_mb) <= at_most


def test_within_the_budget_jobs_run_together() -> None:
    # The check above can fail: without a tight budget, the same jobs overlap.
    assert most_at_once([512] * 6) > 2
