"""The sessions seam: a live interpreter that keeps its state between calls, for the
tools a policy calls during a rollout (the service's `/v1/sessions`, verl's tool, MCP).

A session runs with the walls of a graded job (its own uid, namespaces, seccomp,
cgroup) and keeps its variables, imports and the files in its private /tmp from one
call to the next; nothing of it outlives its end. `rlvr.sandboxes.local.sessions` is
the local backend's.

Every limit a session has is a named default here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from rlvr.errors import RLVRError

DEFAULT_SESSION_MEMORY_MB = 512
MAX_SESSION_MEMORY_MB = 64 * 1024
DEFAULT_SESSION_CPU_S = 600  # all calls together
MAX_SESSION_CPU_S = 24 * 3600
DEFAULT_CALL_CPU_S = 30.0
DEFAULT_CALL_TIMEOUT_S = 30.0
MAX_CALL_TIMEOUT_S = 300.0
DEFAULT_SESSION_IDLE_TTL_S = 300.0
MAX_SESSION_IDLE_TTL_S = 3600.0
DEFAULT_SESSION_TMP_MB = 64
DEFAULT_SESSION_NPROC = 64
DEFAULT_SESSION_FSIZE_MB = 16
DEFAULT_SESSION_NOFILE = 256
# Of each call's stdout and stderr, this much comes back (how much it wrote is told).
DEFAULT_SESSION_KEEP_OUTPUT_BYTES = 64 * 1024
MAX_CALL_CODE_CHARS = 1024 * 1024
# A file read out of a session for grading (`Sessions.read_file`).
MAX_SESSION_FILE_BYTES = 4 * 1024 * 1024
# A call's code that stays past its own timeout (in C, or catching the timer's
# exception) has this long before its session is killed.
CALL_GRACE_S = 1.0
SESSION_START_TIMEOUT_S = 10.0

CallStatus = Literal["ok", "error", "timeout", "killed"]
# Why a session was killed: the hard deadline past a call's timeout, its memory or
# CPU limits, its interpreter ended by its own code, the sandbox lost, its channel
# carrying no record, or its end asked for while the call ran.
KillReason = Literal["timeout", "memory", "cpu", "exited", "session_lost", "protocol", "ended"]


@dataclass(frozen=True, slots=True)
class SessionLimits:
    memory_mb: int = DEFAULT_SESSION_MEMORY_MB
    cpu_s: int = DEFAULT_SESSION_CPU_S
    call_cpu_s: float = DEFAULT_CALL_CPU_S
    tmp_mb: int = DEFAULT_SESSION_TMP_MB
    nproc: int = DEFAULT_SESSION_NPROC
    fsize_mb: int = DEFAULT_SESSION_FSIZE_MB
    nofile: int = DEFAULT_SESSION_NOFILE
    keep_output_bytes: int = DEFAULT_SESSION_KEEP_OUTPUT_BYTES


@dataclass(frozen=True, slots=True)
class Call:
    code: str
    stdin: str = ""
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S


@dataclass(frozen=True, slots=True)
class CallResult:
    """One call's outcome. `killed` ends the session (`limit` says why); the other
    statuses leave it alive."""

    status: CallStatus
    stdout: str = ""
    stderr: str = ""
    value: str | None = None
    error: str | None = None
    traceback: str | None = None
    execution_time: float = 0.0
    cpu_time: float = 0.0
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    limit: KillReason | None = None

    @property
    def ended(self) -> bool:
        return self.status == "killed"


class SessionEnded(RLVRError):
    """The session is gone (ended, killed, or its sandbox lost)."""


class SessionFileError(RLVRError):
    """A file asked of a session is missing, unreadable or too large."""


class SessionBusy(RLVRError):
    """A call came while the session's previous call was still running."""


class SessionHandle(Protocol):
    """One live session, as its backend holds it."""

    busy: bool  # a call is running in it

    @property
    def alive(self) -> bool: ...


class Sessions(Protocol):
    """Where sessions live. `open` may take a moment the first time (a zygote starts)."""

    async def open(self, limits: SessionLimits) -> SessionHandle: ...

    async def call(self, handle: SessionHandle, call: Call) -> CallResult:
        """Run `call` in the session. Raises `SessionEnded` or `SessionBusy`."""
        ...

    async def read_file(self, handle: SessionHandle, path: str) -> bytes:
        """A file of the session (relative to its /tmp), at most `MAX_SESSION_FILE_BYTES`.
        Raises `SessionFileError`, `SessionEnded` or `SessionBusy`."""
        ...

    async def end(self, handle: SessionHandle) -> None:
        """Kill the session and every process it started; returns once they are gone."""
        ...

    async def aclose(self) -> None: ...

    def isolation(self) -> str: ...
