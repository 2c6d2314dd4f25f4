"""A stateful Python tool for verl's (0.9.1) multi-turn rollouts, on rlvr's sessions: the
model's code runs in a live interpreter that keeps its variables, imports and /tmp files
from one call to the next, as in a notebook. Point verl's tool config at it (see
examples/verl/python_tool.yaml):

    tools:
      - class_name: rlvr.trainer.verl_tools.RlvrPythonTool
        config: {type: native, url: "http://rlvr:8000"}   # else RLVR_URL

Config keys (all but `type` optional): `url`; `timeout_s`, one call's wall-clock limit
(30; at most 300); `memory_mb`, `cpu_s`, `call_cpu_s`, `idle_ttl_s`, the session's limits
(the server's defaults where left out, and bounded by it); `max_output_chars`, the most
text a call returns to the model (4000; the middle is cut); `tag_prefix`, the start of every
session's tag ("verl-"), to end a run's leftovers with `RewardClient.end_sessions`;
`retry_budget_s`, how long a request retries through a restart.

verl 0.9.1's `ToolAgentLoop` calls `create`, `execute` and `release` around every single
tool call, and passes the trajectory to `execute` (`agent_data`). So the session belongs
to the trajectory: its first call opens it (tagged `{tag_prefix}{request_id}`), later
calls of that trajectory reuse it, and it ends when the trajectory's `agent_data` is
garbage-collected (else the server reaps it after `idle_ttl_s`). A caller that passes no
`agent_data` gets one session per instance, from its first `execute` to `release`.

The model always gets text back, never an exception: its stdout and stderr, the value of
its last expression as `Out: ...`, the traceback of an error, a line for a timeout (the
session goes on) or a killed session (memory, CPU: its state is gone). A session that is
gone (killed, reaped, lost with a server restart) is replaced by a new one at the next
call, whose text starts with a note that the earlier state is lost. Calls of one session
run one at a time (verl runs a turn's calls at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from dataclasses import dataclass, field
from typing import Any, cast
from uuid import uuid4

import httpx
from verl.tools.base_tool import BaseTool  # type: ignore[import-not-found, unused-ignore]
from verl.tools.schemas import (  # type: ignore[import-not-found, unused-ignore]
    OpenAIFunctionToolSchema,
    ToolResponse,
)
from verl.utils.rollout_trace import rollout_trace_op  # type: ignore[import-not-found, unused-ignore]

from rlvr.client import (
    DEFAULT_RETRY_BUDGET_S,
    AsyncRewardClient,
    RewardServiceError,
    RunResult,
    SessionLimits,
    SessionNotFound,
)
from rlvr.trainer.clients import shared_async_client

URL_ENV = "RLVR_URL"
DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 300.0  # the server's longest call
DEFAULT_MAX_OUTPUT_CHARS = 4000
MIN_OUTPUT_CHARS = 200
DEFAULT_TAG_PREFIX = "verl-"
LIMIT_KEYS = ("memory_mb", "cpu_s", "call_cpu_s", "idle_ttl_s")
CONFIG_KEYS = frozenset({"type", "url", "timeout_s", "max_output_chars", "tag_prefix", "retry_budget_s", *LIMIT_KEYS})

# The function the model calls, as verl's `tool_schema` (OpenAI's format): the default
# when the tool config gives none.
DEFAULT_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": (
            "Run Python code in a stateful session, like a Jupyter notebook: variables, imports and files "
            "written under /tmp persist between calls. Returns what the code prints (stdout, stderr), the value "
            "of its last expression as `Out: ...`, or the traceback of an error."
        ),
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The Python code to run."}},
            "required": ["code"],
        },
    },
}

# Why a session was killed (the API's `limit`), as the model reads it.
KILL_REASONS = {
    "timeout": "it did not stop at its timeout",
    "memory": "it ran out of memory",
    "cpu": "it used up its CPU time",
    "exited": "its code ended the interpreter",
    "session_lost": "its sandbox was lost",
    "protocol": "its channel to the sandbox broke",
    "ended": "it was ended during the call",
}


def default_tool_schema() -> Any:
    """DEFAULT_TOOL_SCHEMA as verl's `OpenAIFunctionToolSchema`."""
    return OpenAIFunctionToolSchema.model_validate(DEFAULT_TOOL_SCHEMA)


@dataclass(eq=False)
class _Session:
    """A trajectory's (or an instance's) session, opened at its first call."""

    tag: str
    id: str | None = None
    lost: str | None = None  # why the state of earlier calls is gone, for the next call's text
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class RlvrPythonTool(BaseTool):  # type: ignore[misc, unused-ignore]
    """verl's `BaseTool` over rlvr's `/v1/sessions` (see the module's notes)."""

    def __init__(self, config: dict[str, Any], tool_schema: Any = None) -> None:
        super().__init__(config, tool_schema or default_tool_schema())
        unknown = sorted(set(config) - CONFIG_KEYS)
        if unknown:
            raise ValueError(f"RlvrPythonTool: unknown config keys {unknown}; known: {sorted(CONFIG_KEYS)}")
        url = config.get("url") or os.environ.get(URL_ENV)
        if not url:
            raise ValueError(f"RlvrPythonTool needs the rlvr service's address: `url` in its config, or {URL_ENV}")
        self.url: str = url
        self.timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
        if not 0 < self.timeout_s <= MAX_TIMEOUT_S:
            raise ValueError(f"RlvrPythonTool: timeout_s must be in (0, {MAX_TIMEOUT_S:g}], not {self.timeout_s:g}")
        self.max_output_chars = max(MIN_OUTPUT_CHARS, int(config.get("max_output_chars", DEFAULT_MAX_OUTPUT_CHARS)))
        self.tag_prefix = str(config.get("tag_prefix", DEFAULT_TAG_PREFIX))
        self.retry_budget_s = float(config.get("retry_budget_s", DEFAULT_RETRY_BUDGET_S))
        self.limits = cast(SessionLimits, {k: config[k] for k in LIMIT_KEYS if config.get(k) is not None})
        self._instances: dict[str, _Session] = {}
        self._trajectories: weakref.WeakKeyDictionary[Any, _Session] = weakref.WeakKeyDictionary()
        self._ending: set[asyncio.Task[None]] = set()

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, Any]:
        """An instance; its session opens at its first call (none for an instance that makes none)."""
        instance_id = instance_id or uuid4().hex
        self._instances.setdefault(instance_id, _Session(f"{self.tag_prefix}{instance_id}"))
        return instance_id, ToolResponse()

    @rollout_trace_op  # type: ignore[untyped-decorator, unused-ignore]
    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[Any, float, dict[str, Any]]:
        """Runs `parameters["code"]`: the text the model reads, a step reward of 0.0, and
        metrics (`status`; `new_session` where a lost session was replaced)."""
        code = parameters.get("code") if isinstance(parameters, dict) else None
        if not isinstance(code, str) or not code.strip():
            text = f"Error: call {self.name} with `code`, a string of Python source to run."
            return ToolResponse(text=text), 0.0, {"status": "invalid"}
        session = self._session(instance_id, kwargs.get("agent_data"))
        async with session.lock:
            try:
                result, note = await self._run(session, code)
            except (RewardServiceError, httpx.HTTPError) as exc:
                text = f"Error: the Python sandbox failed this call ({type(exc).__name__}: {exc})."
                return ToolResponse(text=text), 0.0, {"status": "unavailable"}
            if result["status"] == "killed":  # the server has dropped it
                session.id, session.lost = None, KILL_REASONS.get(result["limit"] or "", "it was killed")
        metrics = {"status": result["status"], "execution_time": result["execution_time"], "new_session": bool(note)}
        return ToolResponse(text=note + render(result, self.timeout_s, self.max_output_chars)), 0.0, metrics

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Ends the instance's own session; a trajectory's outlives its instances."""
        session = self._instances.pop(instance_id, None)
        if session is not None:
            await self._end(session)

    async def _run(self, session: _Session, code: str) -> tuple[RunResult, str]:
        """The call's result, and the note that a new session replaced a lost one (or "")."""
        client = self._client()
        if session.id is not None:
            try:
                return await client.run_in_session(session.id, code, timeout_s=self.timeout_s), ""
            except SessionNotFound:
                session.id, session.lost = None, "it ended or expired"
        session.id = await client.open_session(session.tag, **self.limits)
        note = "" if session.lost is None else _lost_note(session.lost)
        session.lost = None
        return await client.run_in_session(session.id, code, timeout_s=self.timeout_s), note

    def _session(self, instance_id: str, trajectory: Any) -> _Session:
        """The trajectory's session where verl passed one, else the instance's."""
        own = self._instances.setdefault(instance_id, _Session(f"{self.tag_prefix}{instance_id}"))
        if trajectory is None:
            return own
        try:
            session = self._trajectories.get(trajectory)
        except TypeError:  # not weak-referable: the instance's, then
            return own
        if session is None:
            name = getattr(trajectory, "request_id", None) or uuid4().hex
            session = self._trajectories[trajectory] = _Session(f"{self.tag_prefix}{name}")
            weakref.finalize(trajectory, self._trajectory_ended, session, asyncio.get_running_loop())
        return session

    def _trajectory_ended(self, session: _Session, loop: asyncio.AbstractEventLoop) -> None:
        """The trajectory was collected (from any thread): end its session on its loop."""
        if session.id is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._spawn_end, session)

    def _spawn_end(self, session: _Session) -> None:
        task = asyncio.ensure_future(self._end(session))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def _end(self, session: _Session) -> None:
        session_id, session.id = session.id, None
        if session_id is not None:
            with contextlib.suppress(RewardServiceError, httpx.HTTPError):  # gone already, or the TTL ends it
                await self._client().end_session(session_id)

    def _client(self) -> AsyncRewardClient:
        return shared_async_client(self.url, self.retry_budget_s)


def render(result: RunResult, timeout_s: float, max_chars: int) -> str:
    """A call's result as the model reads it: a notebook cell's output."""
    parts = [
        _stream(text, written, name)
        for name, text, written in (
            ("stdout", result["stdout"], result["stdout_bytes"]),
            ("stderr", result["stderr"], result["stderr_bytes"]),
        )
        if text
    ]
    status = result["status"]
    if status == "ok" and result["value"] is not None:
        parts.append(f"Out: {result['value']}")
    elif status == "error":
        parts.append((result["traceback"] or result["error"] or "the code raised an error").rstrip("\n"))
    elif status == "timeout":
        parts.append(
            f"TimeoutError: the call ran past {timeout_s:g} s and was interrupted. "
            "The session goes on: variables and files of earlier calls are kept."
        )
    elif status == "killed":
        reason = KILL_REASONS.get(result["limit"] or "", "it was killed")
        parts.append(
            f"The Python session was killed: {reason}. Its variables, imports and files are gone; "
            "the next call starts a new session."
        )
    return cap("\n".join(parts) or "(no output)", max_chars)


def cap(text: str, max_chars: int) -> str:
    """`text`, its middle cut to keep it within about `max_chars`."""
    if len(text) <= max_chars:
        return text
    keep = max(0, max_chars - 40)
    head, tail = keep - keep // 3, keep // 3
    return f"{text[:head]}\n[... {len(text) - keep} characters cut ...]\n{text[len(text) - tail :]}"


def _stream(text: str, written: int, name: str) -> str:
    """A stream as it came back, and a line saying so where the server kept only its start."""
    cut = written > len(text.encode())
    text = text.rstrip("\n")
    return f"{text}\n[... {name} cut: the call wrote {written} bytes]" if cut else text


def _lost_note(why: str) -> str:
    return (
        f"[Note: the earlier Python session is gone ({why}); this call ran in a new one, "
        "without the variables, imports and files of earlier calls.]\n"
    )
