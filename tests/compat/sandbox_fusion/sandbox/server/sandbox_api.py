"""SandboxFusion's `/run_code` request and response (`sandbox/server/sandbox_api.py` and
`sandbox/runners/types.py`, Apache-2.0): the client's side of the wire, as its tests
build requests and read answers. `Language` is SandboxFusion's whole list, so a request
that its client would send validates here as there; rlvr answers 422 for the languages
it does not run."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field

from sandbox.runners import CommandRunResult

Language = Literal[
    "python", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash", "typescript", "sql", "rust",
    "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia", "pytest", "junit", "kotlin_script", "jest",
    "verilog", "python_gpu", "lean", "swift", "racket",
]  # fmt: skip


class RunCodeRequest(BaseModel):
    compile_timeout: float = Field(10, description="compile timeout for compiled languages")
    run_timeout: float = Field(10, description="code run timeout")
    memory_limit_MB: int = Field(-1, description="maximum memory allowed in megabytes")
    code: str = Field(..., description="the code to run")
    stdin: str | None = Field(None, description="optional string to pass into stdin")
    language: Language = Field(..., description="the language or execution mode to run the code")
    files: dict[str, str | None] = Field({}, description="a dict from file path to base64 encoded file content")
    fetch_files: list[str] = Field([], description="a list of file paths to fetch after code execution")


class RunStatus(str, Enum):  # noqa: UP042  (SandboxFusion's own type)
    Success = "Success"
    Failed = "Failed"
    SandboxError = "SandboxError"


class RunCodeResponse(BaseModel):
    status: RunStatus
    message: str
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = {}
