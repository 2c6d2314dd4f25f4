"""`Sandbox.run_many(specs, on_result)`: each job's result is told as soon as the job
ends, once, in the order jobs end, and matches what `run_many` returns in order (what
lets `/run_code` answer a quick program started beside a slow one at once)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.sandboxes import RunResult, RunSpec, Sandbox, Status
from rlvr.sandboxes.jobs import CallJob
from rlvr.sandboxes.runner import wire
from tests.sandboxes.backends import BACKENDS, open_backend

SLOW = "import time\ndef f():\n    time.sleep(3)\n    return 'slow'\n"
QUICK = "def f(i):\n    return i\n"


@pytest.fixture(params=BACKENDS)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    yield from open_backend(request.param)


def test_each_result_is_told_once_as_its_job_ends(box: Sandbox) -> None:
    specs = [RunSpec(CallJob(code=SLOW, fn_name="f", inputs=[[]], timeout_s=30))]
    specs += [RunSpec(CallJob(code=QUICK, fn_name="f", inputs=[[i]], timeout_s=30)) for i in range(1, 4)]
    told: list[tuple[int, RunResult]] = []
    results = box.run_many(specs, lambda index, result: told.append((index, result)))
    assert sorted(index for index, _ in told) == [0, 1, 2, 3]
    assert told[-1][0] == 0  # the slow job, started first, ends last
    assert all(result == results[index] for index, result in told)
    assert [wire.decode(results[i].records[-1]["v"]) for i in range(4)] == ["slow", 1, 2, 3]
    assert all(result.status == Status.OK for result in results)


def test_without_a_listener_results_come_back_in_order(box: Sandbox) -> None:
    specs = [RunSpec(CallJob(code=QUICK, fn_name="f", inputs=[[i]], timeout_s=30)) for i in range(3)]
    assert [wire.decode(r.records[-1]["v"]) for r in box.run_many(specs)] == [0, 1, 2]
