"""A job killed by an OOM killer above its own cgroup (the host short of memory, or the
container the service runs in) did not go over its own limit: it must not be graded
`memory` (the program's fault, reward 0), but as a kill the grader's company may owe,
which the code verifier runs again alone.

The kernel counts `oom_kill` in the victim's own memory cgroup whoever's limit the kill
was for, so the slot's counter alone cannot tell; what tells is whether the slot
reached its own limit."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
import uuid

import pytest

from tests.services import require

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")

SCENE = """
import dataclasses, json, os, sys
sys.path.insert(0, {root!r})
path = {path!r}
os.makedirs(path)
with open(os.path.join(path, "memory.limit_in_bytes"), "w") as f:
    f.write(str({outer_mb} << 20))
with open(os.path.join(path, "cgroup.procs"), "w") as f:
    f.write(str(os.getpid()))
from rlvr.sandboxes import Limits, RunSpec
from rlvr.sandboxes.jobs import CallJob
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.verifiers.base import BatchEntry, GradeInput
from rlvr.verifiers.code.models import CallTests, CodeParams
from rlvr.verifiers.code.verifier import CodeVerifier
code = (
    "import time\\ndef f(x):\\n    b = bytearray({job_mb} << 20)\\n"
    "    for i in range(0, len(b), 4096):\\n        b[i] = 1\\n    time.sleep(1.5)\\n    return x + 1\\n"
)
box = LocalSandbox()
spec = CallJob(code=code, fn_name="f", inputs=[[1]], timeout_s=10)
prior = (
    "import time\\ndef f(x):\\n    time.sleep(0.8 * x)\\n    b = bytearray({prior_mb} << 20)\\n"
    "    for i in range(0, len(b), 4096):\\n        b[i] = 1\\n    return x + 1\\n"
)
if {prior_mb}:  # one slot each, one at a time (under the outer limit): a peak left in every slot
    peaks = [RunSpec(dataclasses.replace(spec, code=prior, inputs=[[i]]), Limits(wall_s=30, cpu_s=10, memory_mb=1024))
             for i in range({jobs})]
    assert all(run.status.value == "ok" for run in box.run_many(peaks))
limits = Limits(wall_s=30, cpu_s=10, memory_mb={job_limit_mb})
runs = box.run_many([RunSpec(spec, limits) for _ in range({jobs})])
box.close()
verifier = CodeVerifier()
gt = CallTests(language="python", fn_name="f", inputs=[[1]], outputs=[2])
entry = BatchEntry(GradeInput("", "```python\\n" + code + "```"), CodeParams(memory_mb={job_limit_mb}), gt, 60.0)
batch = verifier.verify_many([entry] * {jobs})
print(json.dumps({{
    "runs": [[r.status.value, r.signal] for r in runs],
    "batch": [None if o is None else [o.verdict.value, o.mask] for o in batch],
}}))
"""


def _memory_cgroup() -> str:
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                return f"/sys/fs/cgroup/memory{path}"
    return ""


def _remove_when_empty(path: str, timeout_s: float = 30.0) -> None:
    """Remove the outer cgroup and what the zygotes left in it, once their processes
    (killed with their parent) are gone."""
    deadline = time.monotonic() + timeout_s
    while os.path.isdir(path):
        try:
            for sub in sorted((d for d, _, _ in os.walk(path)), key=len, reverse=True):
                os.rmdir(sub)
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.parametrize(
    ("jobs", "job_mb", "job_limit_mb", "outer_mb", "prior_mb"),
    [
        (3, 180, 512, 400, 0),
        (4, 150, 512, 420, 0),
        (3, 200, 512, 450, 0),
        # Earlier jobs in the slots peaked over these jobs' lower limit, within their own.
        (3, 180, 256, 400, 300),
        (4, 150, 200, 420, 350),
    ],
)
def test_a_kill_for_a_limit_above_the_jobs_is_not_their_memory(
    jobs: int, job_mb: int, job_limit_mb: int, outer_mb: int, prior_mb: int
) -> None:
    base = _memory_cgroup()
    require(os.geteuid() == 0 and os.path.isdir(base), "a writable cgroup v1 memory hierarchy (run as root)")
    path = os.path.join(base, f"rlvr-test-outer-{uuid.uuid4().hex[:8]}")
    scene = SCENE.format(
        root=ROOT, path=path, outer_mb=outer_mb, job_mb=job_mb, jobs=jobs, job_limit_mb=job_limit_mb, prior_mb=prior_mb
    )
    try:
        out = subprocess.run([sys.executable, "-c", scene], capture_output=True, text=True, timeout=300, check=False)
    finally:
        _remove_when_empty(path)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    statuses = [status for status, _ in report["runs"]]
    # Each job is within its own limit; together they are past the outer one.
    assert "memory" not in statuses, report
    assert any(status == "crashed" for status in statuses), report  # the outer OOM killer did strike
    assert all(signal in (None, 9) for _, signal in report["runs"]), report
    # The verifier does not grade a run the company may have killed: alone, it runs again.
    assert all(outcome is None or outcome == ["correct", False] for outcome in report["batch"]), report
