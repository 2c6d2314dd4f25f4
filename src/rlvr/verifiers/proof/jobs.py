"""Coq's jobs in the sandbox: toolchain steps (`verifiers.compile.steps`) with binary
files in and out, so that a ground truth's compiled modules, built once in a job of
their own, are handed to each of its items' jobs (see `proof.jobdriver`)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.sandboxes import RunSpec, SandboxUnavailable
from rlvr.sandboxes.jobs import StdioJob
from rlvr.verifiers.base import Outcome, Verdict
from rlvr.verifiers.compile import steps as toolsteps
from rlvr.verifiers.compile.steps import Step, ToolRun
from rlvr.verifiers.programs import ProgramRunner

_JOBDRIVER = (Path(__file__).parent / "jobdriver.py").read_text(encoding="utf-8")
# The toolchain driver, loaded as a module (not run as __main__), then this package's.
PROGRAM = (
    "import types as _types\n"
    "tool = _types.ModuleType('tool_driver')\n"
    f"exec(compile({toolsteps.DRIVER_SOURCE!r}, 'tool_driver.py', 'exec'), tool.__dict__)\n"
    f"{_JOBDRIVER}\n"
    "run(tool)\n"
)
# A ground truth's compiled modules larger than this are not fetched: its items then
# compile it in their own jobs.
MAX_FETCH_BYTES = 4 * 1024 * 1024


@dataclass(slots=True)
class JobRun:
    run: ToolRun
    fetched: dict[str, bytes] = field(default_factory=dict)


class JobSandbox:
    """Runs Coq jobs through a verifier's `ProgramRunner` (which masks instead when the
    sandbox is below the config's isolation)."""

    def __init__(self, runner: ProgramRunner, memory_mb: int) -> None:
        self.runner = runner
        self.memory_mb = memory_mb

    def run(self, plan: list[Step], inputs: dict[str, bytes], fetch: tuple[str, ...] = ()) -> JobRun:
        """`inputs` are written before every step of `plan`; `fetch` read back after it."""
        refused = self.runner.refusal()
        if refused is not None:
            return JobRun(ToolRun(stopped=refused))
        encoded = {path: base64.b64encode(data).decode("ascii") for path, data in inputs.items()}
        wall = sum(s.timeout_s for s in plan) + toolsteps.JOB_OVERHEAD_S
        report_bytes = toolsteps.MAX_REPORT_BYTES + (2 * MAX_FETCH_BYTES if fetch else 0)
        job = {
            "env": toolsteps.ENV,
            "steps": [{**s.as_job(), "inputs": encoded} for s in plan],
            "fetch": list(fetch),
            "max_fetch_bytes": MAX_FETCH_BYTES,
        }
        program = StdioJob(PROGRAM, [json.dumps(job)], timeout_s=wall, max_output=report_bytes)
        limits = toolsteps.driver_limits(self.runner, plan, wall, self.memory_mb, report_bytes)
        try:
            result = self.runner.run(RunSpec(program, limits))
        except SandboxUnavailable as exc:
            return JobRun(ToolRun(stopped=Outcome(0.0, Verdict.ERROR, f"sandbox unavailable: {exc}", mask=True)))
        run = toolsteps.read_report(result)
        return JobRun(run, _fetched(result.records) if run.stopped is None else {})


def _fetched(records: list[Any]) -> dict[str, bytes]:
    record = next((r for r in records if r.get("i") == 0), None)
    out = record.get("out") if record is not None else None
    if not isinstance(out, str) or not out.strip():
        return {}
    try:
        fetched = json.loads(out.strip().splitlines()[-1]).get("fetched", {})
        return {str(path): base64.b64decode(data) for path, data in fetched.items()}
    except (ValueError, AttributeError, TypeError):
        return {}
