"""Sessions on the local backend: each is a ``session`` job
(`rlvr.sandboxes.runner.session`) of a zygote that only sessions use, forked as a graded
job is (its own uid, namespaces, seccomp and cgroup) and kept alive between calls.

Everything runs on the caller's event loop: a call is a frame written to the job's
channel and one record read back, with no thread between, so that a call costs little
more than the code it runs. A zygote holds up to `SESSIONS_PER_ZYGOTE` sessions (its
slots); more sessions start more zygotes, each with its own uid range.

A session ends when it is asked to (its job's PID namespace is killed, and the call
returns once the zygote has reaped it), when a call overstays its timeout by
`CALL_GRACE_S`, or when its job dies (its memory, its CPU, its own `os._exit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from dataclasses import dataclass, field, replace
from typing import Any

from rlvr.sandboxes.base import Limits, SandboxUnavailable, meets_isolation
from rlvr.sandboxes.config import SandboxConfig
from rlvr.sandboxes.local import control, isolate, session_records
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import core
from rlvr.sandboxes.sessions import (
    CALL_GRACE_S,
    MAX_SESSION_FILE_BYTES,
    SESSION_START_TIMEOUT_S,
    Call,
    CallResult,
    SessionBusy,
    SessionEnded,
    SessionLimits,
)

# A zygote's slots, less one its sandbox's probe may hold.
SESSIONS_PER_ZYGOTE = isolate.MAX_SLOTS - 1
# How long an ended session's job has to be reaped once killed.
REAP_TIMEOUT_S = 5.0
# A record longer than this is no record of ours (the session's code wrote to the
# channel): the session is ended.
MAX_RECORD_BYTES = 16 * 1024 * 1024
_READ_BYTES = 1 << 16
# What one call's answer may cost the host to read: lines that are no record of the
# call (the session's code writes them), and bytes in all. Past either, the session ends.
MAX_SKIPPED_LINES = 64
MAX_EXCHANGE_BYTES = 2 * MAX_RECORD_BYTES
# A file read for grading: the session's code may have wedged its interpreter.
READ_TIMEOUT_S = 10.0
# How long a job whose channel ended has to exit on its own.
EXIT_WAIT_S = 1.0
_TIMED_OUT = object()


@dataclass(eq=False)
class LocalSession:
    job_id: int
    zygote: _Zygote
    channel: socket.socket
    limits: SessionLimits
    exited: asyncio.Future[dict[str, Any]]
    pending: bytearray = field(default_factory=bytearray)
    busy: bool = False
    ended: bool = False
    calls: int = 0  # numbers each call, whose record echoes it
    received: int = 0  # bytes read from the channel in this exchange

    @property
    def alive(self) -> bool:
        return not self.ended and not self.exited.done()


class _Zygote:
    """One zygote and the sessions it holds; its exits come on its control socket."""

    def __init__(self, sandbox: LocalSandbox, sock: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
        self.sandbox, self.sock, self.loop = sandbox, sock, loop
        self.sessions: dict[int, LocalSession] = {}
        self.dead = False
        loop.add_reader(sock.fileno(), self.on_control)

    def on_control(self) -> None:
        while True:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.lost()
                return
            if data[:1] == control.EXIT_TAG:
                for job_id, code, sig, cpu_s, oom in control.parse_exits(data):
                    self.settle(job_id, {"code": code, "signal": sig, "cpu_s": cpu_s, "oom": oom})
            elif data[:1] == control.ERROR_TAG and len(data) >= control.ERROR.size:
                job_id, message = control.parse_error(data)
                self.settle(job_id, {"error": message})

    def settle(self, job_id: int, exit_: dict[str, Any]) -> None:
        session = self.sessions.pop(job_id, None)
        if session is not None and not session.exited.done():
            session.exited.set_result(exit_)

    def lost(self) -> None:
        self.dead = True
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(self.sock.fileno())
        for job_id in list(self.sessions):
            self.settle(job_id, {"error": "sandbox zygote died"})
        self.sandbox.close()

    def kill(self, job_id: int) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(control.kill(job_id))


class LocalSessions:
    """`rlvr.sandboxes.sessions.Sessions` on local zygotes. Use from one event loop."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.zygotes: list[_Zygote] = []
        self.next_id = 0
        self._starting: asyncio.Lock | None = None
        self.ending: set[asyncio.Future[None]] = set()  # ends of sessions whose callers left

    def isolation(self) -> str:
        for zygote in self.zygotes:
            return str(zygote.sandbox.isolation().get("isolation", "none"))
        return "unknown"

    async def open(self, limits: SessionLimits) -> LocalSession:
        zygote = await self._zygote()
        self.next_id += 1
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        null = os.open(os.devnull, os.O_WRONLY)
        job = {"mode": "session", "keep_output_bytes": limits.keep_output_bytes}
        session = LocalSession(self.next_id, zygote, ours, limits, zygote.loop.create_future())
        try:
            ours.sendall(core.frame(job))
            socket.send_fds(
                zygote.sock, [control.run(session.job_id, _job_limits(limits))], [theirs.fileno(), null, null]
            )
        except OSError as exc:
            ours.close()
            raise SandboxUnavailable(f"could not start a session: {exc}") from exc
        finally:
            theirs.close()
            os.close(null)
        ours.setblocking(False)
        zygote.sessions[session.job_id] = session
        try:
            accepted = await asyncio.wait_for(self._read(session, len(core.ACCEPTED)), SESSION_START_TIMEOUT_S)
        except TimeoutError:
            accepted = b""
        if accepted != core.ACCEPTED:
            await self.end(session)
            why = session.exited.result().get("error") if session.exited.done() else None
            raise SandboxUnavailable(f"the session did not start: {why or 'no answer'}")
        return session

    async def call(self, handle: Any, call: Call) -> CallResult:
        session: LocalSession = handle
        self._check_callable(session)
        session.busy = True
        try:
            return await self._call(session, call)
        except asyncio.CancelledError:
            # The call's code may still run, and its record would answer the next call:
            # a session whose caller stopped listening mid-call ends.
            ending = asyncio.ensure_future(self.end(session))
            self.ending.add(ending)
            ending.add_done_callback(self.ending.discard)
            raise
        finally:
            session.busy = False

    async def read_file(self, handle: Any, path: str) -> bytes:
        session: LocalSession = handle
        self._check_callable(session)
        session.busy = True
        try:
            frame = {"n": self._next_call(session), "read": path, "max_bytes": MAX_SESSION_FILE_BYTES}
            record = await self._exchange(session, frame, READ_TIMEOUT_S)
        finally:
            session.busy = False
        if not isinstance(record, dict):
            await self.end(session)
            raise SessionEnded("the session ended while its file was read")
        try:
            return session_records.file_content(record, path)
        except session_records.NotARecord:
            await self.end(session)
            raise SessionEnded("the session's channel carried no record of the read") from None

    async def _call(self, session: LocalSession, call: Call) -> CallResult:
        frame = {
            "n": self._next_call(session),
            "code": call.code,
            "stdin": call.stdin,
            "timeout_s": call.timeout_s,
            "cpu_s": session.limits.call_cpu_s,
        }
        record = await self._exchange(session, frame, call.timeout_s + CALL_GRACE_S)
        if record is _TIMED_OUT:
            await self.end(session)
            return CallResult("killed", limit="timeout", execution_time=call.timeout_s + CALL_GRACE_S)
        if not isinstance(record, dict):
            return await self._died(session)
        try:
            result = session_records.call_result(record)
            cpu_s = session_records.session_cpu_s(record)
        except session_records.NotARecord as exc:
            await self.end(session)
            return CallResult("killed", limit="protocol", error=f"the session's channel carried no record: {exc}")
        if cpu_s >= session.limits.cpu_s:
            await self.end(session)
            return replace(result, status="killed", limit="cpu")
        return result

    async def _exchange(self, session: LocalSession, frame: dict[str, Any], timeout_s: float) -> object:
        """Send `frame` and read its record: the record, `_TIMED_OUT`, or None where the
        channel ended or carried more than a record's bytes without one."""
        try:
            return await asyncio.wait_for(self._send_and_read(session, frame), timeout_s)
        except TimeoutError:
            return _TIMED_OUT

    async def _send_and_read(self, session: LocalSession, frame: dict[str, Any]) -> dict[str, Any] | None:
        try:
            await session.zygote.loop.sock_sendall(session.channel, core.frame(frame))
        except OSError:
            return None
        session.received = 0
        for _ in range(MAX_SKIPPED_LINES + 1):
            line = await self._line(session)
            if line is None:
                return None
            record = session_records.parse(line) if line.startswith(b'{"') else None
            # A line the session's own code wrote to its channel answers no call.
            if record is not None and record.get("n") == frame["n"]:
                return record
            # A turn for the rest of the loop: the lines may all be here already.
            await asyncio.sleep(0)
        return None

    async def _died(self, session: LocalSession) -> CallResult:
        """The session's channel ended during a call: why, from its job's exit (or its
        end, asked for while the call ran). A job that lives on without its channel
        (its code replaced the interpreter) is killed."""
        asked = session.ended
        try:
            exit_ = await asyncio.wait_for(asyncio.shield(session.exited), EXIT_WAIT_S)
        except TimeoutError:
            exit_ = None
        await self.end(session)
        if asked:
            return CallResult("killed", limit="ended")
        if exit_ is None:
            return CallResult("killed", limit="protocol", error="the session's interpreter stopped answering")
        return CallResult("killed", limit=session_records.kill_reason(exit_, session.limits), error=exit_.get("error"))

    def _check_callable(self, session: LocalSession) -> None:
        if session.exited.done():
            exit_ = session.exited.result()
            raise SessionEnded(f"the session has ended ({session_records.kill_reason(exit_, session.limits)})")
        if session.ended:
            raise SessionEnded("the session has ended")
        if session.busy:
            raise SessionBusy("the session is still running its previous call")

    def _next_call(self, session: LocalSession) -> int:
        session.calls += 1
        return session.calls

    async def end(self, handle: Any) -> None:
        session: LocalSession = handle
        first = not session.ended
        session.ended = True
        if first and not session.exited.done():
            session.zygote.kill(session.job_id)
        if session.zygote.dead and not session.exited.done():
            session.exited.set_result({"error": "sandbox zygote died"})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(session.exited), REAP_TIMEOUT_S)
        # Closed only once the job is gone: a call reading the channel has had its EOF,
        # and no read is left waiting on a closed fd.
        if first:
            session.channel.close()

    async def aclose(self) -> None:
        for zygote in self.zygotes:
            for session in list(zygote.sessions.values()):
                await self.end(session)
            zygote.lost()
        self.zygotes.clear()

    async def _zygote(self) -> _Zygote:
        self.zygotes = [z for z in self.zygotes if not z.dead]
        for zygote in self.zygotes:
            if len(zygote.sessions) < SESSIONS_PER_ZYGOTE:
                return zygote
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            for zygote in self.zygotes:  # one started while this call waited
                if len(zygote.sessions) < SESSIONS_PER_ZYGOTE:
                    return zygote
            sandbox = LocalSandbox(self.config)
            sock = await asyncio.to_thread(sandbox.control_socket)
            level = str(sandbox.isolation().get("isolation", "none"))
            if not (self.config.allow_weak_isolation or meets_isolation(level, self.config.min_isolation)):
                sandbox.close()
                raise SandboxUnavailable(
                    f"sessions need {self.config.min_isolation} isolation; this host gives {level}"
                )
            zygote = _Zygote(sandbox, sock, asyncio.get_running_loop())
            self.zygotes.append(zygote)
            return zygote

    async def _read(self, session: LocalSession, size: int) -> bytes:
        """Exactly `size` bytes, or fewer at EOF."""
        loop = session.zygote.loop
        while len(session.pending) < size:
            chunk = await loop.sock_recv(session.channel, _READ_BYTES)
            if not chunk:
                break
            session.pending += chunk
        data = bytes(session.pending[:size])
        del session.pending[:size]
        return data

    async def _line(self, session: LocalSession) -> bytes | None:
        """The next record's line; None at EOF or past `MAX_RECORD_BYTES`."""
        loop = session.zygote.loop
        start = 0
        while (end := session.pending.find(b"\n", start)) < 0:
            if len(session.pending) > MAX_RECORD_BYTES:
                return None
            start = len(session.pending)
            chunk = await loop.sock_recv(session.channel, _READ_BYTES)
            session.received += len(chunk)
            if not chunk or session.received > MAX_EXCHANGE_BYTES:
                return None
            session.pending += chunk
            # sock_recv returns without a turn of the loop while data is waiting: a
            # session that floods its channel must not hold every other one up.
            await asyncio.sleep(0)
        line = bytes(session.pending[:end])
        del session.pending[: end + 1]
        return line


def _job_limits(limits: SessionLimits) -> Limits:
    return Limits(
        cpu_s=limits.cpu_s,
        memory_mb=limits.memory_mb,
        nproc=limits.nproc,
        fsize_mb=limits.fsize_mb,
        nofile=limits.nofile,
        tmp_mb=limits.tmp_mb,
    )
