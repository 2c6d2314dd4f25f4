"""SandboxFusion's `POST /run_code` (and `GET /v1/ping`), run in rlvr's sandbox: verl,
SkyRL and others switch to it by configuration alone
(`reward.sandbox_fusion.url=http://rlvr:8000/run_code`).

The wire format is SandboxFusion's (`sandbox/server/sandbox_api.py`): `files` maps
relative paths to base64 contents written into the program's working directory before
it runs; `fetch_files` are read back afterwards, base64, those that exist (relative to
the working directory or absolute, as SandboxFusion joins them; read inside the job's own
filesystem, never the server's). The status rule is theirs: an `Error` step is
`SandboxError`, else a time limit or a non-zero exit code is `Failed`, else `Success`.
A failure of the sandbox itself is HTTP 200 with `SandboxError` (verl retries only on
504); nothing the program does produces one.

Programs run as `program` jobs (`rlvr.sandboxes.runner.program`) in the same sandbox,
at the same isolation policy and with the same per-language limits as the `code`
verifier, in `--workers` slots, each a process with its own sandbox zygote that starts
the programs waiting together at once and answers each as it ends, so that the event
loop never waits on them. A request waits for a free slot before its job starts: a
queue behind slow programs never eats into a program's own limits, and a lost or wedged
slot is replaced alone. Differences: an output past `MAX_OUTPUT_BYTES` ends the run and
fails it, with a line on stderr saying so (SandboxFusion truncates it silently); the runner kills the
program at its limits rather than letting it finish; only /tmp (the working directory)
and /mnt (an alias of it) are writable, where SandboxFusion's lite mode lets a program
write anywhere in a throwaway copy of the filesystem.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
import shutil
from functools import partial
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from rlvr.sandboxes import RunResult, RunSpec, SandboxUnavailable, Status
from rlvr.sandboxes.base import OnResult
from rlvr.sandboxes.config import SandboxConfig
from rlvr.sandboxes.jobs import ProgramJob
from rlvr.sandboxes.program_steps import program_steps
from rlvr.sandboxes.runner import program
from rlvr.sandboxes.runner.core import MAX_PROGRAM_CHARS
from rlvr.service.asgi import StrictJSONResponse
from rlvr.service.bodies import BodyParser, check_lists
from rlvr.service.dispatch.slots import SlotLost, SlotPool
from rlvr.service.drain import Drain
from rlvr.service.errors import ShuttingDown
from rlvr.service.models import ErrorResponse
from rlvr.verifiers.code.verifier import JOB_OVERHEAD_S, job_memory_mb
from rlvr.verifiers.programs import ProgramRunner

MAX_RUN_TIMEOUT_S = 60.0
MAX_COMPILE_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MB = 512
MIN_MEMORY_MB = 64
MAX_MEMORY_MB = 4096
MAX_STDIN_CHARS = 16 * 1024 * 1024
MAX_FILES_BYTES = 16 * 1024 * 1024
MAX_FETCH_BYTES = 8 * 1024 * 1024
MAX_PATH_CHARS = 1024
MAX_FILES = 1000
# Kept of each of stdout and stderr (SandboxFusion keeps 1 MiB too).
MAX_OUTPUT_BYTES = 1024 * 1024
# A run ended for its output: its return code where it had none of its own, and why.
OUTPUT_LIMIT_CODE = 1
OUTPUT_LIMIT_NOTE = f"rlvr: the run was ended: its output passed {MAX_OUTPUT_BYTES} bytes"
# Past the job's own wall limit, how long to wait for a pool process before calling it lost.
POOL_GRACE_S = 30.0
log = logging.getLogger(__name__)
LANGUAGES = {"python": "python", "cpp": "cpp", "nodejs": "javascript"}
Language = Literal["python", "cpp", "nodejs"]


class RunCodeRequest(BaseModel):
    """SandboxFusion's request (its `args`, for pytest, is accepted and ignored)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    code: str = Field(max_length=MAX_PROGRAM_CHARS, description="The program.")
    language: Language = Field(description="python, cpp (g++ -O2 -std=c++17, as SandboxFusion) or nodejs.")
    stdin: str | None = Field(None, max_length=MAX_STDIN_CHARS, description="The program's standard input.")
    compile_timeout: float = Field(10, gt=0, le=MAX_COMPILE_TIMEOUT_S, description="Seconds (cpp).")
    run_timeout: float = Field(10, gt=0, le=MAX_RUN_TIMEOUT_S, description="Seconds.")
    memory_limit_MB: int = Field(
        -1, ge=-1, le=MAX_MEMORY_MB, description=f"-1: the default, {DEFAULT_MEMORY_MB} MiB (at least {MIN_MEMORY_MB})."
    )
    files: dict[str, str | None] = Field(
        default_factory=dict, description="Relative path -> base64 content, written before the run (null: skipped)."
    )
    fetch_files: list[str] = Field(
        default_factory=list,
        description="Paths returned, base64, after the run, those that exist: relative to the program's working"
        " directory, or absolute (as SandboxFusion's), read inside the program's sandbox, never the server's files.",
    )

    @field_validator("memory_limit_MB")
    @classmethod
    def _memory(cls, value: int) -> int:
        if value != -1 and value < MIN_MEMORY_MB:
            raise ValueError(f"must be -1 or at least {MIN_MEMORY_MB}")
        return value

    @field_validator("files")
    @classmethod
    def _files(cls, files: dict[str, str | None]) -> dict[str, str | None]:
        total = 0
        for path, content in files.items():
            _check_path(path)
            if content is not None:
                try:
                    total += len(base64.b64decode(content, validate=True))
                except (binascii.Error, ValueError):
                    raise ValueError(f"{path!r}: not base64") from None
        if total > MAX_FILES_BYTES:
            raise ValueError(f"{total} bytes in all, over the limit of {MAX_FILES_BYTES}")
        return files

    @field_validator("fetch_files")
    @classmethod
    def _fetch_files(cls, paths: list[str]) -> list[str]:
        for path in paths:
            _check_path(path, absolute=True)
        return paths


def _check_run_code_lists(value: Any) -> None:
    check_lists(value, {"files": MAX_FILES, "fetch_files": MAX_FILES})


def _check_path(path: str, absolute: bool = False) -> None:
    """A path without `..`, relative (inside the working directory) unless `absolute`:
    the runner reads an absolute one inside the job's own filesystem, and only where
    the program can write."""
    parts = path.split("/")
    if not path or len(path) > MAX_PATH_CHARS or ".." in parts or "\0" in path:
        raise ValueError(f"{path[:100]!r}: a path must be non-empty, without '..'")
    if path.startswith("/") and not absolute:
        raise ValueError(f"{path[:100]!r}: a path must be relative, inside the working directory")


class CommandRunResult(BaseModel):
    status: Literal["Finished", "Error", "TimeLimitExceeded"]
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    status: Literal["Success", "Failed", "SandboxError"]
    message: str
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)


def sandbox_error(message: str) -> dict[str, Any]:
    return {
        "status": "SandboxError",
        "message": message,
        "compile_result": None,
        "run_result": None,
        "executor_pod_name": None,
        "files": {},
    }


def job_spec(request: RunCodeRequest, config: SandboxConfig) -> RunSpec:
    """The sandbox job for `request`, with the `code` verifier's per-language limits."""
    language = LANGUAGES[request.language]
    memory = DEFAULT_MEMORY_MB if request.memory_limit_MB == -1 else request.memory_limit_MB
    compiling = request.compile_timeout if language == "cpp" else 0.0
    job = ProgramJob(
        language=language,
        code=request.code,
        stdin=request.stdin or "",
        files={p: base64.b64decode(c) for p, c in request.files.items() if c is not None},
        fetch_files=request.fetch_files,
        compile_timeout_s=request.compile_timeout,
        run_timeout_s=request.run_timeout,
        memory_mb=memory,
        max_output=MAX_OUTPUT_BYTES,
        max_fetch_bytes=MAX_FETCH_BYTES,
        gxx=shutil.which("g++") if language == "cpp" else None,
        node=shutil.which("node") if language == "javascript" else None,
    )
    memory = job_memory_mb(config, language, memory)
    if program.runs_as_job(language, request.fetch_files, request.code):
        # The sandbox's own limits are the run's: its wall time, which counts from when
        # the runner takes the job (right before it writes the files and starts the
        # program), and its output caps.
        wall = request.run_timeout
        outputs = {"keep_output_bytes": MAX_OUTPUT_BYTES, "max_output_bytes": MAX_OUTPUT_BYTES}
    else:
        wall, outputs = JOB_OVERHEAD_S + compiling + request.run_timeout, {}
    records = len(request.fetch_files) + 8  # compile, run, one per fetched file
    limits = config.limits(wall_s=wall, cpu_s=max(2, math.ceil(wall)), memory_mb=memory, max_records=records, **outputs)
    return RunSpec(job, limits)


def missing_toolchain(request: RunCodeRequest) -> str | None:
    tool = {"cpp": "g++", "nodejs": "node"}.get(request.language)
    if tool is not None and shutil.which(tool) is None:
        return f"the toolchain for {request.language} ({tool}) is not installed on this server"
    return None


def response_of(result: RunResult) -> dict[str, Any]:
    """The SandboxFusion answer for a finished job."""
    if result.infra_error:
        return sandbox_error(f"sandbox failure: {result.infra_error}")
    steps = program_steps(result)
    compile_result = _command(steps["compile"], stderr_key="out") if "compile" in steps else None
    if "run" in steps:
        run_result: dict[str, Any] | None = _command(steps["run"], stdout_key="out", stderr_key="err")
    elif compile_result is not None and (compile_result["status"] != "Finished" or compile_result["return_code"]):
        run_result = None  # SandboxFusion does not run what did not compile
    else:
        run_result = _lost_run(result)
    files = {r["file"]: r["b64"] for r in result.records if type(r.get("file")) is str and type(r.get("b64")) is str}
    steps_done = [s for s in (compile_result, run_result) if s is not None]
    return {
        "status": _status(steps_done),
        "message": "",
        "compile_result": compile_result,
        "run_result": run_result,
        "executor_pod_name": None,
        "files": files,
    }


def _command(record: dict[str, Any], *, stdout_key: str | None = None, stderr_key: str) -> dict[str, Any]:
    timed_out = record.get("s") == "timeout"
    code = record.get("code")
    seconds = record.get("t")
    stderr = _text(record.get(stderr_key))
    if record.get("s") == "output_limit":
        # Cut output must not pass for the program's whole answer, even where it exited 0.
        code = code if type(code) is int and code else OUTPUT_LIMIT_CODE
        stderr += f"\n{OUTPUT_LIMIT_NOTE}\n"
    return {
        "status": "TimeLimitExceeded" if timed_out else "Finished",
        "execution_time": float(seconds) if isinstance(seconds, int | float) else None,
        "return_code": None if timed_out or type(code) is not int else code,
        "stdout": _text(record.get(stdout_key)) if stdout_key else "",
        "stderr": stderr,
    }


def _lost_run(result: RunResult) -> dict[str, Any]:
    """The run step when its record never came: the job was killed at its wall limit, or
    the program took its runner down. Either is the program's doing, never SandboxError."""
    timed_out = result.status == Status.TIMEOUT
    return {
        "status": "TimeLimitExceeded" if timed_out else "Finished",
        "execution_time": result.wall_s,
        "return_code": None if timed_out else (result.exit_code or 1),
        "stdout": _text(result.stdout),
        "stderr": _text(result.stderr),
    }


def _status(steps: list[dict[str, Any]]) -> str:
    if any(s["status"] == "Error" for s in steps):
        return "SandboxError"
    if any(s["status"] == "TimeLimitExceeded" for s in steps) or any(s["return_code"] for s in steps):
        return "Failed"
    return "Success"


def _text(value: Any) -> str:
    return value.encode("utf-8", "replace").decode("utf-8") if type(value) is str else ""


def _run_jobs(batch: list[tuple[SandboxConfig, RunSpec]], report: OnResult) -> list[RunResult]:
    """In a pool process: a batch of jobs, started together in this process's sandbox
    if it is isolated enough, each reported as it ends."""
    runner = ProgramRunner(batch[0][0])
    refused = runner.refusal_reason()
    if refused is not None:
        return [RunResult(Status.CRASHED, infra_error=refused) for _ in batch]
    try:
        return runner.run_many([spec for _, spec in batch], report)
    except SandboxUnavailable as exc:
        return [RunResult(Status.CRASHED, infra_error=f"sandbox unavailable: {exc}") for _ in batch]


class RunCodePool:
    """The `/run_code` jobs' processes (`dispatch.slots`): `processes` of them, each
    taking the jobs waiting together (at most `max_batch`) and starting them at once in
    its sandbox, as the sandbox starts a verifier's jobs. A job's clock starts when
    the sandbox starts it, and each keeps its own limits."""

    def __init__(self, config: SandboxConfig, processes: int, max_batch: int) -> None:
        self.config = config
        self.processes = processes
        self._slots: SlotPool[RunResult] = SlotPool(processes, _run_jobs, max_batch)

    async def run(self, request: RunCodeRequest) -> dict[str, Any]:
        missing = missing_toolchain(request)
        if missing is not None:
            return sandbox_error(missing)
        spec = job_spec(request, self.config)
        try:
            result = await self._slots.run(self.config, spec, deadline_s=spec.limits.wall_s + POOL_GRACE_S)
        except SlotLost as exc:
            return sandbox_error(f"sandbox process lost: {exc}")
        return response_of(result)

    def close(self) -> None:
        self._slots.close()


def add_run_code_routes(app: FastAPI, pool: RunCodePool, drain: Drain, bodies: BodyParser) -> None:
    @app.post(
        "/run_code",
        response_model=RunCodeResponse,
        responses={422: {"model": ErrorResponse, "description": "Invalid request; the message names the field"}},
        summary="Run a program (SandboxFusion-compatible)",
        description="A sandbox failure is HTTP 200 with status SandboxError, as SandboxFusion answers it.",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RunCodeRequest"}}},
            }
        },
    )
    async def run_code(request: Request) -> Response:
        body = await bodies.off_loop(
            partial(bodies.parse, RunCodeRequest, precheck=_check_run_code_lists), await request.body()
        )
        try:
            answer = await drain.run(pool.run(body))
        except ShuttingDown:
            raise
        except Exception as exc:  # the sandbox's failure, never the program's: SandboxFusion's answer
            log.exception("run_code failed")
            answer = sandbox_error(f"internal error: {type(exc).__name__}: {exc}")
        return StrictJSONResponse(answer)

    @app.get("/v1/ping", summary="SandboxFusion's liveness probe")
    async def ping() -> str:
        return "pong"
