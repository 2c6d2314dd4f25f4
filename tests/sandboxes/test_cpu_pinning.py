"""Processes of a job that take turns run on one CPU (`core.stay_on_this_cpu`): the two
halves of a split job (one answers each call of the other), and a stdio job's runner
and the process it forks for each input. Across two CPUs each turn would wake the other
CPU. Other jobs keep every CPU."""

from __future__ import annotations

import ast
import os

import pytest

from rlvr.sandboxes import RunSpec
from rlvr.sandboxes.jobs import StdioJob, ValuesJob
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import core, wire
from tests.sandboxes.jobs import returned
from tests.sandboxes.test_split_trust import run_split, statuses
from tests.services import require

PROGRAM = "import os\ndef cpus():\n    return sorted(os.sched_getaffinity(0))\n"


def test_both_halves_of_a_split_job_share_one_cpu(sb: LocalSandbox) -> None:
    tests = [
        "import os\nassert len(os.sched_getaffinity(0)) == 1",
        "import os\nassert cpus() == sorted(os.sched_getaffinity(0))",
    ]
    assert statuses(run_split(sb, PROGRAM, tests)) == ["pass", "pass"]


def test_what_the_program_forks_stays_on_that_cpu(sb: LocalSandbox) -> None:
    code = PROGRAM + (
        "def child_cpus():\n    r, w = os.pipe()\n    if os.fork() == 0:\n"
        "        os.write(w, repr(sorted(os.sched_getaffinity(0))).encode())\n        os._exit(0)\n"
        "    os.close(w)\n    os.wait()\n    return os.read(r, 100).decode()\n"
    )
    tests = ["assert child_cpus() == repr(cpus())"]
    assert statuses(run_split(sb, code, tests)) == ["pass"]


def test_each_input_of_a_stdio_job_runs_on_the_runners_cpu(sb: LocalSandbox) -> None:
    code = "import os\nprint(len(os.sched_getaffinity(0)))\n"
    spec = StdioJob(code=code, inputs=["", "", ""], timeout_s=5, max_output=100)
    result = sb.run(RunSpec(spec))
    assert [r.get("out", "").strip() for r in result.records if "i" in r] == ["1", "1", "1"], result


def test_other_jobs_keep_every_cpu(sb: LocalSandbox) -> None:
    require((os.cpu_count() or 1) > 1, "more than one CPU")
    assert returned(sb, "return sorted(os.sched_getaffinity(0))") == sorted(os.sched_getaffinity(0))
    values = sb.run(RunSpec(ValuesJob(code=PROGRAM, exprs=["cpus()"], timeout_s=5)))
    assert wire.decode(values.records[-1]["v"]) == sorted(os.sched_getaffinity(0))


def test_pinning_is_best_effort(monkeypatch: pytest.MonkeyPatch) -> None:
    before = os.sched_getaffinity(0)

    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError("no /proc here")

    monkeypatch.setattr(os, "open", refuse)
    core.stay_on_this_cpu()  # does not raise
    assert os.sched_getaffinity(0) == before


def test_pinning_picks_the_cpu_it_runs_on() -> None:
    require((os.cpu_count() or 1) > 1, "more than one CPU")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            core.stay_on_this_cpu()
            mine = os.sched_getaffinity(0)
            os.write(w, repr(sorted(mine)).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    pinned = ast.literal_eval(os.read(r, 100).decode())
    os.close(r)
    assert len(pinned) == 1 and set(pinned) <= os.sched_getaffinity(0)
