"""A `ProgramJob`'s two routes for Python (`runner.program.runs_as_job`), on both
backends: the program as the job's own process, whose run the sandbox reports
(`program_steps`), and the program in the runner's child, which records its run
(taken here by asking for a file back). The same program gets the same run either way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rlvr.sandboxes import Limits, RunSpec, Sandbox
from rlvr.sandboxes.jobs import ProgramJob
from rlvr.sandboxes.program_steps import program_steps
from rlvr.sandboxes.runner.program import runs_as_job
from tests.sandboxes.backends import BACKENDS, open_backend

PROGRAMS = {
    "stdin_to_stdout": ("import sys\nprint(sum(map(int, sys.stdin.read().split())))", "1 2 3\n"),
    "stderr_and_exit": ("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(4)", ""),
    "exception": ("raise ValueError('bad')", ""),
    "imports_its_file": ("import helper\nprint(helper.VALUE)", ""),
    "threads": ("import threading\nthreading.Thread(target=lambda: print(input())).start()", "late\n"),
}
CAP = 1 << 20


@pytest.fixture(scope="module", params=BACKENDS)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    yield from open_backend(request.param)


def _spec(code: str, stdin: str, fetch: list[str], run_timeout_s: float = 10.0) -> RunSpec:
    job = ProgramJob(
        language="python",
        code=code,
        stdin=stdin,
        files={"helper.py": b"VALUE = 42\n"},
        fetch_files=fetch,
        compile_timeout_s=10,
        run_timeout_s=run_timeout_s,
        memory_mb=256,
        max_output=CAP,
        max_fetch_bytes=CAP,
    )
    wall = run_timeout_s if runs_as_job("python", fetch, code) else run_timeout_s + 2
    return RunSpec(
        job, Limits(wall_s=wall, cpu_s=int(wall) + 2, memory_mb=256, keep_output_bytes=CAP, max_output_bytes=CAP)
    )


def _run(record: dict[str, Any]) -> tuple[Any, ...]:
    return record["s"], record["code"], record["out"], record["err"].splitlines()[-1:]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_routes_run_a_program_alike(box: Sandbox, name: str) -> None:
    code, stdin = PROGRAMS[name]
    as_job, under_runner = box.run_many([_spec(code, stdin, []), _spec(code, stdin, ["no-such-file"])])
    assert not as_job.infra_error and not under_runner.infra_error, (as_job, under_runner)
    assert _run(program_steps(as_job)["run"]) == _run(program_steps(under_runner)["run"]), (as_job, under_runner)


def test_the_time_limit_holds_as_the_job(box: Sandbox) -> None:
    result = box.run(_spec("import time\ntime.sleep(30)", "", [], run_timeout_s=1))
    run = program_steps(result)["run"]
    assert (run["s"], run["code"]) == ("timeout", None), result
    assert 1 <= run["t"] < 10
