"""The steps of a `ProgramJob`'s run (`rlvr.sandboxes.runner.program`), as records:
``{"step": "compile" | "run", "s", "code", "out", "t"}`` (and `err` for the run).

Most steps are the runner's own records. A program that ran as the job's own process
(`program.runs_as_job`) has none for its run: its run is what the sandbox saw of the
job (its stdout, stderr, exit and wall time), read here, so that nothing the program
wrote on its way could pass for it.
"""

from __future__ import annotations

from rlvr.sandboxes.base import RunResult, Status
from rlvr.sandboxes.runner.core import EXIT_MEMORY, Record
from rlvr.sandboxes.runner.program import IN_JOB_RECORD

__all__ = ["STEPS", "program_steps"]

STEPS = ("compile", "run")
_STATUS = {Status.TIMEOUT: "timeout", Status.OUTPUT_LIMIT: "output_limit", Status.MEMORY: "memory"}


def program_steps(result: RunResult) -> dict[str, Record]:
    """Each step that has a record, by name."""
    steps = {r["step"]: r for r in result.records if r.get("step") in STEPS}
    if steps.get("run") == IN_JOB_RECORD:
        steps["run"] = _run_as_job(result)
    return steps


def _run_as_job(result: RunResult) -> Record:
    """The run step of a program that was the job, as its runner would have recorded it."""
    code = result.exit_code if result.exit_code is not None else (-result.signal if result.signal else None)
    status = _STATUS.get(result.status, "ok")
    if status == "timeout":
        code = None
    elif status == "ok" and code:
        status = "memory" if code == EXIT_MEMORY else "error"
    return {"step": "run", "s": status, "code": code, "out": result.stdout, "err": result.stderr, "t": result.wall_s}
