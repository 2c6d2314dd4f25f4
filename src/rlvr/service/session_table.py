"""The sessions one API process holds (`SessionTable`), and the seam through which it
reaches the sessions other processes hold (`Remote`, in Redis mode
`rlvr.service.session_routing`).

A session id is ``<holder>.<token>``: the process that holds the session, and a random
token. A call for a session held elsewhere goes to its holder through `Remote`;
without one (embedded mode) it is an unknown session.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import secrets
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Protocol

from rlvr.sandboxes.sessions import Call, CallResult, SessionEnded, SessionHandle, SessionLimits, Sessions
from rlvr.service.errors import Overloaded, UnknownSession

# How often idle sessions are looked for.
REAP_INTERVAL_S = 1.0
# What a client is told to wait when every session slot is taken.
FULL_RETRY_AFTER_S = 1.0
TOKEN_BYTES = 18


class Remote(Protocol):
    """The sessions of other holders."""

    async def run(self, holder: str, session_id: str, call: Call) -> CallResult: ...

    async def read_file(self, holder: str, session_id: str, path: str) -> bytes: ...

    async def end(self, holder: str, session_id: str) -> None: ...

    async def end_tagged(self, prefix: str) -> int:
        """End every other holder's sessions whose tag starts with `prefix`; how many."""
        ...


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """What a client asks of a new session."""

    limits: SessionLimits
    idle_ttl_s: float
    tag: str = ""


@dataclass
class Entry:
    id: str
    tag: str
    handle: SessionHandle
    idle_ttl_s: float
    last_used: float = field(default_factory=time.monotonic)


class SessionTable:
    """The live sessions of this process, bounded in number and reaped when idle."""

    def __init__(
        self,
        sessions: Sessions,
        *,
        max_sessions: int,
        max_memory_mb: int,
        max_idle_ttl_s: float,
        holder: str | None = None,
    ) -> None:
        self.sessions = sessions
        self.max_sessions, self.max_memory_mb, self.max_idle_ttl_s = max_sessions, max_memory_mb, max_idle_ttl_s
        self.holder = holder or uuid.uuid4().hex[:12]
        self.remote: Remote | None = None
        self.entries: dict[str, Entry] = {}
        self.opening = 0
        self.reaper: asyncio.Task[None] | None = None
        self.opened = self.reaped = 0
        self.calls: collections.Counter[str] = collections.Counter()  # answered here, by status

    async def open(self, spec: SessionSpec) -> Entry:
        if len(self.entries) + self.opening >= self.max_sessions:
            raise Overloaded(f"{self.max_sessions} sessions are live here", retry_after_s=FULL_RETRY_AFTER_S)
        limits = replace(spec.limits, memory_mb=min(spec.limits.memory_mb, self.max_memory_mb))
        self.opening += 1
        try:
            handle = await self.sessions.open(limits)
        finally:
            self.opening -= 1
        session_id = f"{self.holder}.{secrets.token_urlsafe(TOKEN_BYTES)}"
        entry = Entry(session_id, spec.tag, handle, min(spec.idle_ttl_s, self.max_idle_ttl_s))
        self.entries[entry.id] = entry
        self.opened += 1
        self._ensure_reaper()
        return entry

    async def run(self, session_id: str, call: Call) -> CallResult:
        holder = self._elsewhere(session_id)
        if holder is not None:
            return await self._remote(session_id).run(holder, session_id, call)
        entry = self._here(session_id)
        entry.last_used = time.monotonic()
        try:
            result = await self.sessions.call(entry.handle, call)
        except SessionEnded:
            self.entries.pop(session_id, None)
            raise
        finally:
            entry.last_used = time.monotonic()
        self.calls[result.status] += 1
        if result.ended:
            self.entries.pop(session_id, None)
        return result

    async def read_file(self, session_id: str, path: str) -> bytes:
        holder = self._elsewhere(session_id)
        if holder is not None:
            return await self._remote(session_id).read_file(holder, session_id, path)
        entry = self._here(session_id)
        entry.last_used = time.monotonic()
        try:
            return await self.sessions.read_file(entry.handle, path)
        except SessionEnded:
            self.entries.pop(session_id, None)
            raise

    async def end(self, session_id: str) -> None:
        holder = self._elsewhere(session_id)
        if holder is not None:
            return await self._remote(session_id).end(holder, session_id)
        entry = self.entries.pop(session_id, None)
        if entry is None:
            raise UnknownSession(f"no live session {session_id!r}")
        await self.sessions.end(entry.handle)

    async def end_tagged(self, prefix: str, *, everywhere: bool = True) -> int:
        """End the sessions whose tag starts with `prefix`: here, and with `everywhere`,
        those of every other holder."""
        doomed = [entry for entry in self.entries.values() if entry.tag.startswith(prefix)]
        for entry in doomed:
            self.entries.pop(entry.id, None)
        await asyncio.gather(*(self.sessions.end(entry.handle) for entry in doomed))
        elsewhere = await self.remote.end_tagged(prefix) if everywhere and self.remote is not None else 0
        return len(doomed) + elsewhere

    async def reap(self) -> int:
        """End the sessions idle past their TTL (never one in a call)."""
        now = time.monotonic()
        idle = [e.id for e in self.entries.values() if now - e.last_used > e.idle_ttl_s and not e.handle.busy]
        for session_id in idle:
            with contextlib.suppress(UnknownSession):
                await self.end(session_id)
        self.reaped += len(idle)
        return len(idle)

    def stats(self) -> dict[str, int | str]:
        return {
            "holder": self.holder,
            "live": len(self.entries),
            "max": self.max_sessions,
            "opened": self.opened,
            "reaped": self.reaped,
        }

    async def aclose(self) -> None:
        if self.reaper is not None:
            self.reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.reaper
        self.entries.clear()
        await self.sessions.aclose()

    def _elsewhere(self, session_id: str) -> str | None:
        """The holder of a session held by another process; None for one of ours."""
        holder = session_id.partition(".")[0]
        return None if holder == self.holder else holder

    def _here(self, session_id: str) -> Entry:
        entry = self.entries.get(session_id)
        if entry is None:
            raise UnknownSession(f"no live session {session_id!r}: it ended, expired or never existed")
        return entry

    def _remote(self, session_id: str) -> Remote:
        if self.remote is None:
            raise UnknownSession(f"no live session {session_id!r}: it ended, expired or never existed")
        return self.remote

    def _ensure_reaper(self) -> None:
        if self.reaper is None or self.reaper.done():
            self.reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(REAP_INTERVAL_S)
            await self.reap()
