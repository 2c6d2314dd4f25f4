"""`/v1/sessions`: stateful Python sessions for tools called during a rollout.

`POST /v1/sessions` opens one (its limits in the body, each bounded by the server's
settings), `POST /v1/sessions/{id}/run` runs a call in it, `DELETE /v1/sessions/{id}`
ends it, and `DELETE /v1/sessions?prefix=...` ends every session whose `tag` starts
with the prefix (a trainer tags each session with its batch and trajectory, and ends a
batch's sessions at once). Sessions live in this process's `SessionTable`, on its
sandbox's session zygotes: past `max_sessions` live ones a new one gets 429 with
Retry-After, and one idle past its TTL is ended by the reaper.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any, Literal

from fastapi import FastAPI, Query
from pydantic import BaseModel, ConfigDict, Field

from rlvr.results import GradeResponse
from rlvr.sandboxes import sessions as defaults
from rlvr.sandboxes.sessions import Call, CallResult, SessionLimits
from rlvr.service.errors import BadRequest
from rlvr.service.models import ErrorResponse, GradeItem, GradeRequest, VerifierField
from rlvr.service.session_table import SessionSpec, SessionTable

MAX_TAG_CHARS = 512


class SessionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    language: Literal["python"] = "python"
    memory_mb: int = Field(
        defaults.DEFAULT_SESSION_MEMORY_MB,
        ge=32,
        le=defaults.MAX_SESSION_MEMORY_MB,
        description="The session's memory (all its processes).",
    )
    cpu_s: int = Field(
        defaults.DEFAULT_SESSION_CPU_S,
        ge=1,
        le=defaults.MAX_SESSION_CPU_S,
        description="CPU seconds for all its calls together.",
    )
    call_cpu_s: float = Field(
        defaults.DEFAULT_CALL_CPU_S, gt=0, le=defaults.MAX_CALL_TIMEOUT_S, description="CPU seconds for one call."
    )
    idle_ttl_s: float = Field(
        defaults.DEFAULT_SESSION_IDLE_TTL_S,
        gt=0,
        le=defaults.MAX_SESSION_IDLE_TTL_S,
        description="Ended after this long without a call.",
    )
    tag: str = Field(
        "", max_length=MAX_TAG_CHARS, description="Free text (a batch and trajectory id) to end by prefix."
    )


def session_spec(request: SessionRequest) -> SessionSpec:
    limits = SessionLimits(memory_mb=request.memory_mb, cpu_s=request.cpu_s, call_cpu_s=request.call_cpu_s)
    return SessionSpec(limits, request.idle_ttl_s, request.tag)


class SessionCreated(BaseModel):
    id: str
    tag: str
    idle_ttl_s: float


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    code: str = Field(max_length=defaults.MAX_CALL_CODE_CHARS)
    stdin: str = Field("", max_length=defaults.MAX_CALL_CODE_CHARS)
    timeout_s: float = Field(defaults.DEFAULT_CALL_TIMEOUT_S, gt=0, le=defaults.MAX_CALL_TIMEOUT_S)


class RunResponse(BaseModel):
    status: Literal["ok", "error", "timeout", "killed"] = Field(
        description="ok; error (the call raised: `error`, `traceback`); timeout (the call was interrupted, the "
        "session goes on); killed (the session ended: `limit` says why)."
    )
    stdout: str
    stderr: str
    value: str | None = Field(description="The repr of the call's last expression, as a notebook shows it.")
    error: str | None = None
    traceback: str | None = None
    limit: str | None = Field(
        None,
        description="Why a killed session ended: timeout, memory, cpu, exited (its own code ended it), "
        "session_lost, protocol, ended (deleted during the call).",
    )
    execution_time: float
    stdout_bytes: int = Field(description="What the call wrote to stdout; `stdout` keeps the first part.")
    stderr_bytes: int


class SessionsEnded(BaseModel):
    ended: int


class SessionGradeRequest(BaseModel):
    """One item of `/v1/grade` whose response is a file the session wrote."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    response_file: str = Field(
        min_length=1, max_length=4096, description="The file graded as the response (relative to the session's /tmp)."
    )
    verifier: VerifierField
    ground_truth: Any = None
    params: dict[str, Any] = Field(default_factory=dict)
    prompt: str = ""
    id: str | None = Field(None, max_length=1000)


Grade = Callable[[GradeRequest], Awaitable[GradeResponse]]


def _as_body(message: str) -> str:
    return message.replace("items[0].", "body.").replace("items[0]", "body")


def _renamed(details: Any) -> Any:
    if isinstance(details, dict) and isinstance(details.get("errors"), list):
        return {**details, "errors": [_as_body(str(e)) for e in details["errors"]]}
    return details


def run_response(result: CallResult) -> RunResponse:
    return RunResponse.model_validate(asdict(result))


_ERRORS: dict[int | str, dict[str, object]] = {
    400: {"model": ErrorResponse, "description": "The body is not JSON"},
    404: {"model": ErrorResponse, "description": "No live session with that id"},
    409: {"model": ErrorResponse, "description": "The session is still running its previous call"},
    422: {"model": ErrorResponse, "description": "Invalid request; the message names the field"},
}


def add_session_routes(app: FastAPI, table: SessionTable, grade: Grade) -> None:
    @app.post(
        "/v1/sessions",
        response_model=SessionCreated,
        status_code=201,
        summary="Open a stateful Python session",
        responses={**_ERRORS, 429: {"model": ErrorResponse, "description": "Every session slot is taken"}},
    )
    async def open_session(request: SessionRequest) -> SessionCreated:
        entry = await table.open(session_spec(request))
        return SessionCreated(id=entry.id, tag=entry.tag, idle_ttl_s=entry.idle_ttl_s)

    @app.post(
        "/v1/sessions/{session_id}/run", response_model=RunResponse, summary="Run code in a session", responses=_ERRORS
    )
    async def run_in_session(session_id: str, request: RunRequest) -> RunResponse:
        result = await table.run(session_id, Call(request.code, request.stdin, request.timeout_s))
        return run_response(result)

    @app.post(
        "/v1/sessions/{session_id}/grade",
        response_model=GradeResponse,
        summary="Grade a file the session wrote, as /v1/grade grades a response",
        description="The file is read out of the session as it stands (its own work), and graded by the verifier "
        "in the grader's own sandbox, never in the session.",
        responses=_ERRORS,
    )
    async def grade_in_session(session_id: str, request: SessionGradeRequest) -> GradeResponse:
        data = await table.read_file(session_id, request.response_file)
        try:
            response = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(f"body.response_file: {request.response_file} is not UTF-8 text") from None
        item = GradeItem(
            response=response,
            verifier=request.verifier,
            id=request.id,
            prompt=request.prompt,
            ground_truth=request.ground_truth,
            params=request.params,
        )
        try:
            return await grade(GradeRequest(items=[item]))
        except BadRequest as exc:  # named as this route's body has them
            raise BadRequest(_as_body(exc.message), details=_renamed(exc.details)) from None

    @app.delete("/v1/sessions/{session_id}", status_code=204, summary="End a session", responses=_ERRORS)
    async def end_session(session_id: str) -> None:
        await table.end(session_id)

    @app.delete("/v1/sessions", response_model=SessionsEnded, summary="End every session whose tag has a prefix")
    async def end_sessions(prefix: str = Query(min_length=1, max_length=MAX_TAG_CHARS)) -> SessionsEnded:
        return SessionsEnded(ended=await table.end_tagged(prefix))
