"""How many jobs a client keeps in flight: together, their memory limits stay within
the config's `memory_in_flight_mb` (a batch at its limits must not bring on the host's OOM killer),
and a job larger than that still runs, alone."""

from __future__ import annotations

import pytest

from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.config import SandboxConfig
from rlvr.sandboxes.jobs import CallJob, ValuesJob
from rlvr.sandboxes.local.sandbox import get_local_sandbox
from rlvr.sandboxes.runner import wire
from tests.services import require

# Each job says when it ran, on the clock every job shares.
TIMED = "import time\nS = time.monotonic()\ntime.sleep(0.25)\nE = time.monotonic()\n"


def most_at_once(memory_mb: list[int], config: SandboxConfig | None = None) -> int:
    """The most jobs that ran at one moment, of a batch with these memory limits."""
    specs = [RunSpec(ValuesJob(code=TIMED, exprs=["(S, E)"], timeout_s=5), Limits(memory_mb=mb)) for mb in memory_mb]
    results = get_local_sandbox(config).run_many(specs)
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
def test_jobs_in_flight_stay_within_the_memory_budget(budget_mb: int, memory_mb: list[int], at_most: int) -> None:
    assert most_at_once(memory_mb, SandboxConfig(memory_in_flight_mb=budget_mb)) <= at_most


@pytest.mark.parametrize("jobs", [1, 3])
def test_no_more_jobs_in_flight_than_the_config_allows(jobs: int) -> None:
    assert most_at_once([256] * 6, SandboxConfig(max_jobs_in_flight=jobs)) <= jobs


def test_within_the_budget_jobs_run_together() -> None:
    # The check above can fail: without a tight budget, the same jobs overlap.
    assert most_at_once([512] * 6) > 2


# ------------------------------------------------------------ deadlines among other jobs
#
# The client looks again only at the jobs an event touched, and at all of them once a
# deadline is due: a job that never makes another event is still killed at its wall
# deadline, whatever the jobs around it do, and theirs finish untouched.

SLEEPER = "import time\ndef f():\n    time.sleep(30)\n"
QUICK = "def f(x):\n    return x + 1\n"
CHATTY = (
    "import sys, time\ndef f():\n    for i in range(30):\n        print(i, flush=True)\n"
    "        time.sleep(0.02)\n    return 'done'\n"
)


def call(code: str, inputs: list[list[int]], wall_s: float) -> RunSpec:
    return RunSpec(CallJob(code=code, fn_name="f", inputs=inputs, timeout_s=60), Limits(wall_s=wall_s))


@pytest.mark.parametrize(
    "order",
    [
        ["sleep", "quick", "chatty", "sleep2"],
        ["quick", "sleep2", "chatty", "sleep"],
        ["chatty", "sleep", "sleep2", "quick"],
        ["sleep2", "sleep", "quick", "chatty"],
    ],
)
def test_each_job_is_killed_at_its_own_wall_deadline(order: list[str]) -> None:
    make = {
        "sleep": lambda: [call(SLEEPER, [[]], 1.0)],
        "sleep2": lambda: [call(SLEEPER, [[]], 2.0)],
        "quick": lambda: [call(QUICK, [[i]], 20.0) for i in range(20)],
        "chatty": lambda: [call(CHATTY, [[]], 20.0)],
    }
    kinds = [kind for kind in order for _ in make[kind]()]
    specs = [spec for kind in order for spec in make[kind]()]
    results = get_local_sandbox().run_many(specs)
    for kind, spec, result in zip(kinds, specs, results, strict=True):
        if kind.startswith("sleep"):
            assert result.status == Status.TIMEOUT, result
            # Killed at its own deadline, not at another job's nor at the sleep's end.
            assert spec.limits.wall_s <= result.wall_s < spec.limits.wall_s + 10, result
        else:
            assert result.status == Status.OK, result
            assert result.records[-1]["s"] == "ok", result
    assert [wire.decode(r.records[-1]["v"]) for k, r in zip(kinds, results, strict=True) if k == "quick"] == list(
        range(1, 21)
    )
