"""Running a toolchain in the sandbox: the seam the `compile` and `proof` verifiers share.

A tool job is a `stdio` job of the sandbox whose program is `driver` (trusted code) and
whose one input is the list of steps: files to write, a command, a timeout and an
output cap each. The job has the sandbox's isolation and limits like any program; the
driver's report comes back as the job's stdout. What the sandbox cannot do (start, take
the job) masks the item; what the tool does with the untrusted input (fail, loop,
exhaust memory, flood its output) is that input's outcome, never a mask.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.sandboxes import Limits, RunResult, RunSpec, SandboxUnavailable, Status
from rlvr.sandboxes.jobenv import TOOL_PATH
from rlvr.sandboxes.jobs import StdioJob
from rlvr.verifiers.base import Outcome, Verdict
from rlvr.verifiers.programs import ProgramRunner

DRIVER_SOURCE = (Path(__file__).parent / "driver.py").read_text(encoding="utf-8")
ENV = {"PATH": TOOL_PATH, "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
# Kept of each step's output (the tail: where compilers and coqc put their verdict).
KEEP_STEP_OUTPUT = 16 * 1024
# The driver's own start-up and file writing, on top of its steps' timeouts.
JOB_OVERHEAD_S = 3.0
# The driver's report: every step's kept output, JSON-escaped.
MAX_REPORT_BYTES = 1024 * 1024
MAX_REASON = 2000


@dataclass(frozen=True, slots=True)
class Step:
    """One command. `files` are written (fresh) right before it runs; `clear` folders
    are emptied first. `fsize_mb` caps every file it writes, its output included."""

    name: str
    argv: list[str]
    cwd: str
    timeout_s: float
    fsize_mb: int = 16
    files: dict[str, str] = field(default_factory=dict)
    clear: tuple[str, ...] = ()
    # The driver's options (its notes): rustc's lints forced to warn; a preprocessed
    # file to scan for diagnostic control, {"file": path, "output_marks": [text, ...]}.
    force_warn: bool = False
    scan: dict[str, Any] | None = None

    def as_job(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "argv": self.argv,
            "cwd": self.cwd,
            "timeout_s": self.timeout_s,
            "fsize_bytes": self.fsize_mb * 1024 * 1024,
            "keep_output": KEEP_STEP_OUTPUT,
            "files": self.files,
            "clear": list(self.clear),
            "force_warn": self.force_warn,
            "scan": self.scan,
        }


@dataclass(frozen=True, slots=True)
class StepResult:
    name: str
    # ok, error (non-zero exit), timeout, output_limit (a file or the output past its
    # cap), killed (a signal: memory exhausted, crashed), unavailable (could not start)
    status: str
    out: str
    # What the step's `scan` found (the first few lines) and how many in all.
    found: tuple[str, ...] = ()
    found_count: int = 0


@dataclass(slots=True)
class ToolRun:
    """The steps that ran, in order (the first that failed is the last), or the outcome
    that ends grading at once: a mask when the sandbox failed, a timeout when the whole
    job ran out of time."""

    steps: list[StepResult] = field(default_factory=list)
    stopped: Outcome | None = None

    def step(self, name: str) -> StepResult | None:
        return next((s for s in self.steps if s.name == name), None)


class ToolSandbox:
    """Runs tool jobs through a verifier's `ProgramRunner`, which masks instead when the
    sandbox is below the config's isolation."""

    def __init__(self, runner: ProgramRunner, memory_mb: int) -> None:
        self.runner = runner
        self.memory_mb = memory_mb

    def run(self, steps: list[Step]) -> ToolRun:
        refused = self.runner.refusal()
        if refused is not None:
            return ToolRun(stopped=refused)
        budget = sum(s.timeout_s for s in steps)
        wall = budget + JOB_OVERHEAD_S
        stdin = json.dumps({"env": ENV, "steps": [s.as_job() for s in steps]})
        job = StdioJob(DRIVER_SOURCE, [stdin], timeout_s=wall, max_output=MAX_REPORT_BYTES)
        limits = driver_limits(self.runner, steps, wall, self.memory_mb, MAX_REPORT_BYTES)
        try:
            result = self.runner.run(RunSpec(job, limits))
        except SandboxUnavailable as exc:
            return ToolRun(stopped=Outcome(0.0, Verdict.ERROR, f"sandbox unavailable: {exc}", mask=True))
        return read_report(result)


def driver_limits(runner: ProgramRunner, steps: list[Step], wall: float, memory_mb: int, report_bytes: int) -> Limits:
    """The limits of a job that runs `steps` under a driver: the steps' own file caps
    and time, plus room for the driver's report of `report_bytes`."""
    fsize = max(s.fsize_mb for s in steps) + 1
    return runner.config.limits(
        wall_s=wall + 1.0,
        cpu_s=max(2, math.ceil(wall)),
        memory_mb=memory_mb,
        fsize_mb=fsize,
        tmp_mb=max(64, 3 * fsize),
        max_output_bytes=2 * report_bytes,
    )


def read_report(result: RunResult) -> ToolRun:
    """The driver's report, from the job's one record."""
    if result.infra_error:
        return ToolRun(stopped=Outcome(0.0, Verdict.ERROR, f"sandbox failure: {result.infra_error}", mask=True))
    record = next((r for r in result.records if r.get("i") == 0), None)
    if result.status == Status.TIMEOUT or (record is not None and record.get("s") == "timeout"):
        return ToolRun(stopped=Outcome(0.0, Verdict.TIMEOUT, "the toolchain ran past the job's time limit"))
    steps = _parse_steps(record.get("out") if record is not None else None)
    if steps is None:
        # The tools ran on the response and the driver said nothing usable: whatever
        # ended it (memory, a signal) came from that input.
        status = record.get("s") if record is not None else result.status.value
        why = f"the toolchain job ended without a report ({status})"
        return ToolRun(stopped=Outcome(0.0, Verdict.INCORRECT, why, {"status": str(status)}))
    unavailable = next((s for s in steps if s.status == "unavailable"), None)
    if unavailable is not None:
        return ToolRun(steps, Outcome(0.0, Verdict.ERROR, reason(f"sandbox failure: {unavailable.out}"), mask=True))
    return ToolRun(steps=steps)


def which(tool: str) -> str | None:
    """Where the sandbox finds `tool`: on its PATH, not the service's (which may hold
    directories the sandbox hides)."""
    return shutil.which(tool, path=ENV["PATH"])


def _parse_steps(out: Any) -> list[StepResult] | None:
    if type(out) is not str or not out.strip():
        return None
    try:
        report = json.loads(out.strip().splitlines()[-1])
        return [_step_result(s) for s in report["steps"]]
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _step_result(step: dict[str, Any]) -> StepResult:
    found = tuple(str(line) for line in step.get("found", ()))
    return StepResult(str(step["name"]), str(step["status"]), str(step["out"]), found, int(step.get("found_count", 0)))


def reason(text: str) -> str:
    """Text fit for an outcome's reason: capped, valid UTF-8."""
    return text[:MAX_REASON].encode("utf-8", "replace").decode("utf-8")
