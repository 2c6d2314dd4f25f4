"""``session`` jobs: a Python interpreter that stays alive between calls, for a tool
that a policy calls over many turns (`rlvr.sandboxes.local.sessions`).

After its frame, the job reads one frame per call from the channel: ``{"code",
"stdin", "timeout_s", "cpu_s"}``, and answers each with one record (a frame ``{"read":
path, "max_bytes"}`` instead asks for a file: ``{"s", "b64"}`` or ``{"s": "error",
"e"}``):

- ``s``: ``ok``, ``error`` (the call raised; ``e`` is the exception's last line,
  ``tb`` its traceback) or ``timeout`` (its wall time or its CPU time ran out; the
  session goes on);
- ``out``, ``err``: what the call wrote to its stdout and stderr (fds 1 and 2, so a
  subprocess's output counts), at most ``keep_output_bytes`` each, and ``out_bytes``,
  ``err_bytes``: how much it wrote in all;
- ``v``: the repr of the cell's last expression, as a notebook shows it (None if it
  has none, or its value is None);
- ``t``, ``c``: the call's wall and CPU seconds; ``ct``: the CPU seconds of the whole
  session so far, its processes' included;
- ``n``: the call's number, from its frame (a line the session's code writes to the
  channel itself is then told apart from the call's record).

The processes a call starts end with it (`core.end_strays`, the job being its PID
namespace's init), and ``ct`` counts them. Both are the interpreter's own doing, in the
process the session's code runs in, so that code can undo them for itself: what bounds
a session whatever its code does is each process's CPU limit (the session's `cpu_s`),
its processes' count, its memory cgroup, each call's wall deadline and its idle TTL.

A cell runs in one module namespace (``__main__``) that every call shares, with /tmp
(the job's private tmpfs) as its working directory. Its outputs go to two memfds that
are read back and emptied after each call, so that one call's output is its own.

The call's time limits are timers that raise `core.TestTimeout` in the cell, which
the cell can catch; the client's deadline past them is the hard bound, and ends the
session. EOF on the channel ends the job.
"""

from __future__ import annotations

import _ast
import _signal
import io
import linecache
import os
import resource
import sys
import time
import traceback
from typing import Any

from rlvr.sandboxes.runner import core

MODES = ("session",)
# Cells whose source a traceback can still show (a function defined in an early cell
# that fails in a later one).
KEPT_CELL_SOURCES = 1000
# The innermost frames a traceback shows: formatting a deep recursion's whole traceback
# takes seconds, after the call's timer is off.
TRACEBACK_FRAMES = 50
# `ast.PyCF_ONLY_AST`, without importing `ast` into the zygote.
_ONLY_AST = 0x400
_ITIMER_PROF = _signal.ITIMER_PROF


def run(job: core.Frame, priv: core.Privileges, channel: core.Channel) -> int:
    priv.drop_untrusted()
    # The channel's ends move to fds that no process the session starts inherits.
    calls = os.dup(core.DATA_FD)
    channel = core.Channel(os.dup(channel.fd))
    os.close(core.CHANNEL_FD)
    core.detach_stdin()
    keep = int(job["keep_output_bytes"])
    outputs = _Outputs()
    os.chdir("/tmp")
    ns = core.module_namespace("__main__", "<session>")
    core.set_alarm_handler()
    _signal.signal(_signal.SIGPROF, _signal.getsignal(_signal.SIGALRM))
    channel.accept()
    while True:
        try:
            call = core.read_frame(calls)
        except (EOFError, OSError, ValueError):
            return 0
        if "read" in call:
            record = _read(call["read"], int(call["max_bytes"]))
        else:
            stdin = outputs.stdin(call["stdin"])
            record = _cell(call, ns, _cell_name(call["code"]))
            # What the call started ends with it: no process works on between calls,
            # and every process's CPU is then in this one's count of its children.
            core.end_strays()
            record.update(outputs.take(keep))
            record["ct"] = _session_cpu_s()
            os.close(stdin)
        record["n"] = call["n"]
        # On a line of its own: whatever the session's code left unfinished on the
        # channel ends there, and is read as no record.
        core.write_all(channel.fd, b"\n")
        channel.write(record)


def _session_cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _read(path: str, max_bytes: int) -> core.Record:
    """A file of the session (relative to /tmp), base64, for the grader: the session's
    own work product, read as the session sees it."""
    try:
        with open(path, "rb") as file:
            data = file.read(max_bytes + 1)
    except BaseException as exc:
        return {"s": "error", "e": _summary(exc)}
    if len(data) > max_bytes:
        return {"s": "error", "e": f"the file is over {max_bytes} bytes"}
    import binascii  # here: the zygote that every job forks from maps no more than it must

    return {"s": "ok", "b64": binascii.b2a_base64(data, newline=False).decode()}


_cells = [0]


def _cell_name(code: str) -> str:
    """A name for this call's code, under which tracebacks find its lines."""
    _cells[0] += 1
    name = f"<cell {_cells[0]}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    linecache.cache.pop(f"<cell {_cells[0] - KEPT_CELL_SOURCES}>", None)
    return name


def _cell(call: core.Frame, ns: dict[str, Any], name: str) -> core.Record:
    """Run one call's code in `ns`; its record, less its outputs."""
    wall, cpu = time.perf_counter(), time.process_time()
    record: core.Record = {"s": "ok", "v": None}
    try:
        _setitimer(float(call["timeout_s"]), float(call["cpu_s"]))
        try:
            value = _execute(call["code"], ns, name)
            if value is not None:
                record["v"] = _capped_repr(value)
        finally:
            _setitimer(0.0, 0.0)
    except core.TestTimeout:
        record["s"] = "timeout"
    except BaseException as exc:
        record.update(s="error", e=_summary(exc), tb=_traceback(exc))
    _flush_streams()
    record["t"] = time.perf_counter() - wall
    record["c"] = time.process_time() - cpu
    return record


def _execute(code: str, ns: dict[str, Any], name: str) -> Any:
    """Run the cell; the value of its last statement if that is an expression."""
    tree = compile(code, name, "exec", _ONLY_AST)
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, _ast.Expr):
        exec(compile(tree, name, "exec"), ns)
        return None
    tree.body.pop()
    exec(compile(tree, name, "exec"), ns)
    expression = _ast.Expression(body=last.value)
    return eval(compile(expression, name, "eval"), ns)


def _setitimer(wall_s: float, cpu_s: float) -> None:
    core._setitimer(core._ITIMER_REAL, wall_s)
    core._setitimer(_ITIMER_PROF, cpu_s)


def _capped_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= core.MAX_FRAME // 64 else text[: core.MAX_FRAME // 64] + "..."


def _summary(exc: BaseException) -> str:
    """`ValueError: why`, on one line, as a traceback's last line reads."""
    try:
        why = str(exc)
    except BaseException:
        why = ""
    name = type(exc).__name__
    return (f"{name}: {why}" if why else name)[: core.MAX_ERROR_CHARS]


def _traceback(exc: BaseException) -> str:
    """The traceback from the cell's own frames down, as a notebook shows it."""
    try:
        tb = exc.__traceback__
        while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell "):
            tb = tb.tb_next
        text = "".join(traceback.format_exception(type(exc), exc, tb, limit=-TRACEBACK_FRAMES))
    except BaseException:
        text = core.describe(exc)
    return text[-8 * core.MAX_ERROR_CHARS :]


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()  # type: ignore[union-attr]
        except BaseException:
            pass


class _Outputs:
    """fds 1 and 2 are memfds, read back and emptied after each call; fd 0 is each
    call's stdin."""

    def __init__(self) -> None:
        self.fds = []
        for fd, name in ((1, "stdout"), (2, "stderr")):
            memfd = os.memfd_create(name)
            os.dup2(memfd, fd)
            os.close(memfd)
            self.fds.append(fd)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)

    def stdin(self, data: str) -> int:
        """fd 0 holds `data` for this call; the fd to close after it."""
        fd = os.memfd_create("stdin")
        core.write_all(fd, data.encode("utf-8", "surrogatepass"))
        os.lseek(fd, 0, os.SEEK_SET)
        os.dup2(fd, 0)
        # A new reader: the last one may hold the last call's stdin in its buffer.
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        return fd

    def take(self, keep: int) -> core.Record:
        record: core.Record = {}
        for fd, name in zip(self.fds, ("out", "err"), strict=True):
            size = os.lseek(fd, 0, os.SEEK_END)
            os.lseek(fd, 0, os.SEEK_SET)
            data = os.read(fd, keep) if size else b""
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            record[name] = data.decode("utf-8", "replace")
            record[name + "_bytes"] = size
        return record
