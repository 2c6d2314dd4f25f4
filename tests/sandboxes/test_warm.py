"""The zygote's warm-up: its own jobs run through the runner before it forks any, and
leave nothing behind that a job could see or that the zygote needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from rlvr.sandboxes import RunSpec
from rlvr.sandboxes.jobs import CallJob, Job, StdioJob, ValuesJob
from rlvr.sandboxes.local import warm
from rlvr.sandboxes.local.sandbox import LocalSandbox

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _in_fresh_python(code: str) -> Any:
    """Run `code` in a new interpreter (what the warm-up changes is process-wide) and
    return the JSON it prints last."""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


STATE = """
import json, os, signal
def state():
    st = os.fstat(0)
    return {
        "stdin": [st.st_dev, st.st_ino],
        "fds": sorted(os.listdir("/proc/self/fd")),
        "alarm": str(signal.getsignal(signal.SIGALRM)),
        "timer": list(signal.getitimer(signal.ITIMER_REAL)),
    }
"""


@pytest.mark.parametrize("stdin", ["devnull", "pipe", "file"])
def test_the_warm_up_leaves_the_process_as_it_found_it(stdin: str, tmp_path: Any) -> None:
    # fd 0 is the job's in a job: the warm-up borrows it, and must give it back.
    setup = {
        "devnull": "fd = os.open(os.devnull, os.O_RDONLY)",
        "pipe": "fd, _w = os.pipe()",
        "file": f"fd = os.open({str(tmp_path / 'in')!r}, os.O_RDWR | os.O_CREAT)",
    }[stdin]
    report = _in_fresh_python(
        STATE
        + f"""
{setup}
os.dup2(fd, 0)
before = state()
from rlvr.sandboxes.local import warm
warm.warm_up()
print(json.dumps([before, state()]))
"""
    )
    before, after = report
    assert after == before


def test_every_warm_up_job_runs_as_a_job_would() -> None:
    # A job the runner no longer takes would warm nothing up, silently.
    records = _in_fresh_python(
        """
import json, os
from rlvr.sandboxes.local import warm
out = []
for spec in warm.JOBS:
    read, write = os.pipe()
    warm._run_one(dict(spec), write)
    os.close(write)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    out.append(data.decode())
print(json.dumps(out))
"""
    )
    assert len(records) == len(warm.JOBS) == 3
    lines = [[json.loads(line) for line in text.split("\n", 1)[1].splitlines()] for text in records]
    assert lines[0] == [{"load": "ok"}, {"i": 0, "s": "ok", "v": 3}, {"i": 1, "s": "ok", "v": 5}]
    assert lines[1] == [{"load": "ok"}, {"i": 0, "s": "ok", "v": 3}, {"i": 1, "s": "ok", "v": 3}]
    assert lines[2][0] == {"load": "ok"}
    assert lines[2][1]["s"] == "error" and "ValueError" in lines[2][1]["e"]
    assert lines[2][2]["s"] == "ok"


def test_the_zygote_warms_up_without_a_word(capfd: pytest.CaptureFixture[str]) -> None:
    # In the zygote itself: its seccomp filter, its read-only root, its fds.
    box = LocalSandbox()
    try:
        [result] = box.run_many([RunSpec(ValuesJob(code="x = 2", exprs=["x * 3"], timeout_s=2))])
        assert result.records[-1] == {"i": 0, "s": "ok", "v": 6}, result
    finally:
        box.close()
    assert "warm-up" not in capfd.readouterr().err


ENV_PROBE = "__import__('os').environ.get('LD_BIND_NOW', 'unset')"


@pytest.mark.parametrize(
    "spec",
    [
        ValuesJob(code="", exprs=[ENV_PROBE], timeout_s=5),
        CallJob(code=f"def f():\n    return {ENV_PROBE}\n", fn_name="f", inputs=[[]], timeout_s=5),
        ValuesJob(
            code="import subprocess\n",
            exprs=["subprocess.run(['/usr/bin/env'], capture_output=True, text=True).stdout.count('LD_BIND_NOW')"],
            timeout_s=5,
        ),
    ],
    ids=["values", "call", "exec"],
)
def test_jobs_run_without_ld_bind_now(sb: LocalSandbox, spec: Job) -> None:
    # It is for the zygote's own startup; what a job runs links as it would anywhere.
    [result] = sb.run_many([RunSpec(spec)])
    assert result.records[-1]["s"] == "ok", result
    assert result.records[-1]["v"] in ("unset", 0), result


def test_a_stdio_job_runs_without_ld_bind_now(sb: LocalSandbox) -> None:
    code = f"print({ENV_PROBE})"
    spec = StdioJob(code=code, inputs=[""], timeout_s=5, max_output=1 << 16)
    [result] = sb.run_many([RunSpec(spec)])
    assert result.records[-1]["s"] == "ok" and result.records[-1]["out"].strip() == "unset", result
