"""SandboxFusion's command result types (`sandbox/runners/types.py`, Apache-2.0),
as its tests read them from a response."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel


class CommandRunStatus(str, Enum):  # noqa: UP042  (SandboxFusion's own type)
    Finished = "Finished"
    Error = "Error"
    TimeLimitExceeded = "TimeLimitExceeded"


class CommandRunResult(BaseModel):
    status: CommandRunStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None
