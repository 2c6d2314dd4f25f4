"""Reading a session job's records (`rlvr.sandboxes.runner.session`), which its own code
can forge: every field is checked, every string made encodable, and a line that is no
record of the call asked is skipped, never an error of the host."""

from __future__ import annotations

import binascii
import json
import math
import signal
from typing import Any

from rlvr.sandboxes.runner import core
from rlvr.sandboxes.sessions import CallResult, KillReason, SessionFileError, SessionLimits

_TEXT_FIELDS = {"out": "stdout", "err": "stderr", "v": "value", "e": "error", "tb": "traceback"}
_MAX_COUNT = 2**62


class NotARecord(ValueError):
    """A line or field that no runner of ours writes."""


def _reject_constant(name: str) -> Any:
    raise NotARecord(f"{name} is not a JSON number")


def parse(line: bytes) -> dict[str, Any] | None:
    """A line as a JSON object; None for anything else (junk, too deep, non-finite)."""
    try:
        record = json.loads(line, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    return record if type(record) is dict else None


def call_result(record: dict[str, Any]) -> CallResult:
    """A call's outcome from its record. Raises `NotARecord`."""
    status = record.get("s")
    if status not in ("ok", "error", "timeout"):
        raise NotARecord(f"status {status!r}")
    text = {name: _text(record.get(key)) for key, name in _TEXT_FIELDS.items()}
    return CallResult(
        status,
        stdout=text["stdout"] or "",
        stderr=text["stderr"] or "",
        value=text["value"],
        error=text["error"],
        traceback=text["traceback"],
        execution_time=_seconds(record.get("t", 0.0)),
        cpu_time=_seconds(record.get("c", 0.0)),
        stdout_bytes=_count(record.get("out_bytes", 0)),
        stderr_bytes=_count(record.get("err_bytes", 0)),
    )


def file_content(record: dict[str, Any], path: str) -> bytes:
    """A file read's content. Raises `SessionFileError` for the session's own refusal
    (missing, too large), `NotARecord` for anything else."""
    status = record.get("s")
    if status == "error":
        raise SessionFileError(f"{path}: {(_text(record.get('e')) or '')[: core.MAX_ERROR_CHARS]}")
    encoded = record.get("b64")
    if status != "ok" or type(encoded) is not str:
        raise NotARecord("no file in the record")
    try:
        return binascii.a2b_base64(encoded)
    except ValueError as exc:  # binascii.Error, and non-ASCII text
        raise NotARecord(f"the file's base64: {exc}") from None


def session_cpu_s(record: dict[str, Any]) -> float:
    """The CPU the session has used so far, as its runner counts it (itself and every
    process it has reaped)."""
    return _seconds(record.get("ct", 0.0))


def kill_reason(exit_: dict[str, Any], limits: SessionLimits) -> KillReason:
    """Why a session's job ended, from the zygote's report of its exit."""
    if "error" in exit_:
        return "session_lost"
    if exit_.get("oom"):
        return "memory"
    # Nothing in the session can SIGKILL its own PID namespace's init: the kernel did, at
    # its CPU limit (rusage reads about 10% under the time the limit counts).
    cpu_s = exit_.get("cpu_s", 0.0)
    if exit_.get("signal") == signal.SIGXCPU or (exit_.get("signal") == signal.SIGKILL and cpu_s >= limits.cpu_s / 2):
        return "cpu"
    if exit_.get("code") == core.EXIT_MEMORY:
        return "memory"
    return "exited"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if type(value) is not str:
        raise NotARecord("a text field is not a string")
    # A lone surrogate (a repr, an exception's message) comes through JSON's escapes.
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _seconds(value: Any) -> float:
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise NotARecord(f"{value!r} is no duration")
    return float(value)


def _count(value: Any) -> int:
    if type(value) is not int or not 0 <= value < _MAX_COUNT:
        raise NotARecord(f"{value!r} is no count")
    return value
