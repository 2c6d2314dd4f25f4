"""What the local backend's client sends its zygote and its jobs, and how it starts the
zygote: the job's data on the wire (`wire_data`), the limits its processes get
(`control_limits`), the zygote's command line and environment. The Docker backend sends
the same data to its containers.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from rlvr.sandboxes.base import Limits, RunSpec
from rlvr.sandboxes.config import NODE_RUNTIME_MB
from rlvr.sandboxes.jobenv import JobEnvironment
from rlvr.sandboxes.jobs import NativeCallJob, NativeStdioJob, ProgramJob
from rlvr.sandboxes.local import pacing
from rlvr.sandboxes.runner import core, python, split

# What of the worker's environment jobs inherit (the rest may hold credentials).
JOB_ENV = ("PATH", "LANG", "LC_ALL", "VIRTUAL_ENV")
# The folder that holds the `rlvr` package (site-packages, or the checkout of an
# editable install): `python -S` reads no .pth file, so it is put on sys.path by hand.
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_BOOT = f"import sys; sys.path.insert(0, {_ROOT!r}); from rlvr.sandboxes.local.zygote import main; sys.exit(main())"

# Jobs that run a process per input: their inputs go after the frame (`inputs.Inputs`).
STDIO_MODES = ("stdio", "native_stdio")


def wire_data(job: core.Frame, spec: RunSpec) -> tuple[bytes, list[bytes]]:
    """What the runner reads: the data to send at once, and the tests' inputs of a call
    or values job, one frame each, to be sent only as each test's clock starts
    (`pacing.Lockstep`: a program that runs in the runner's process must not hold a
    later test's input while an earlier one runs).

    The data sent at once is the job's frame, then a stdio job's inputs (raw, their
    sizes in the frame: the runner keeps them out of its tests' processes, which a
    frame's objects on its heap would not be), then its tests' (a split job's), with
    what the trusted side works out once for them (`split.prepare_tests`)."""
    tests = b"" if spec.tests is None else core.frame(split.prepare_tests(spec.tests.frame()))
    steps = _lockstep(job, spec)
    if steps is not None:
        return core.frame(job) + tests, steps
    inputs = job.get("inputs")
    if job.get("mode") not in STDIO_MODES or type(inputs) is not list or not all(type(t) is str for t in inputs):
        return core.frame(job) + tests, []
    raw = [text.encode("utf-8", "surrogatepass") for text in inputs]
    stripped = {key: value for key, value in job.items() if key != "inputs"}
    stripped["input_sizes"] = [len(data) for data in raw]
    return core.frame(stripped) + b"".join(raw) + tests, []


def _lockstep(job: core.Frame, spec: RunSpec) -> list[bytes] | None:
    """A call or values job's tests' inputs, taken out of its frame (`python.steps_apart`);
    None for a job sent whole, one whose tests' time no clock keeps."""
    if pacing.TestClock.of(spec.job) is None:
        return None
    return python.steps_apart(job)


def control_limits(spec: RunSpec) -> Limits:
    """The limits the job's processes get: the spec's, but for a node job, whose
    address space the spec's `memory_mb` sizes for V8's reservations, memory (the
    cgroup) of its program's own limit and node's footprint."""
    job, limits = spec.job, spec.limits
    if not isinstance(job, NativeCallJob | NativeStdioJob | ProgramJob) or job.language != "javascript":
        return limits
    memory_mb = min(limits.memory_mb, job.memory_mb + NODE_RUNTIME_MB)
    return replace(limits, memory_mb=memory_mb, address_space_mb=limits.address_space_mb or limits.memory_mb)


def zygote_command(*args: str, job_env: JobEnvironment | None = None) -> list[str]:
    """The zygote runs without `site` (see `rlvr.sandboxes.local.zygote`); the job
    environment's packages, not the service's, are passed along for the programs' own
    imports (`rlvr.sandboxes.jobenv`)."""
    env = job_env or JobEnvironment()
    pch = ["--pch", env.pch_path] if env.pch_path is not None else []
    return [sys.executable, "-S", "-B", "-c", _BOOT, *args, *pch, "--site", os.pathsep.join(env.python_path)]


def zygote_env(job_env: JobEnvironment | None = None) -> dict[str, str]:
    # LD_BIND_NOW: see `rlvr.sandboxes.local.zygote.main`, which takes it out again.
    own = {k: v for k, v in os.environ.items() if k in JOB_ENV}
    return own | (job_env or JobEnvironment()).environ() | {"PYTHONDONTWRITEBYTECODE": "1", "LD_BIND_NOW": "1"}
