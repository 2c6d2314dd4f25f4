"""Sessions across API replicas (Redis mode): a session lives in the replica that
opened it, and a call that reaches another replica goes to it over Redis.

Each replica that holds sessions keeps a lease (`redis_keys.session_holder`, refreshed
every `HOLDER_BEAT_S`, expiring `HOLDER_TTL_S` after its last refresh) and reads its
request list (`redis_keys.session_requests`). A replica that gets a call for a session
held elsewhere (the holder is in the session's id) pushes the request there and waits
on a reply list of its own for the request, while checking the holder's lease each
`BLOCKING_READ_S`: a holder that died (its sessions died with it) answers
`session_lost`, never a hang. Ending by tag prefix goes to every live holder.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import time
import uuid
from dataclasses import asdict
from typing import Any

from redis.asyncio import Redis

from rlvr.errors import RLVRError
from rlvr.sandboxes.sessions import CALL_GRACE_S, Call, CallResult, SessionBusy, SessionEnded, SessionFileError
from rlvr.service import redis_keys
from rlvr.service.errors import BackendUnavailable, SessionLost, UnknownSession
from rlvr.service.redis_conn import BLOCKING_READ_S, REDIS_ERRORS, as_text
from rlvr.service.session_table import SessionTable

log = logging.getLogger(__name__)

HOLDER_BEAT_S = 1.0
HOLDER_TTL_S = 5.0
# How long a request or its reply waits in Redis for a reader.
MESSAGE_TTL_S = 60
# A request other than a call (a file read, an end) gets this long to be answered.
SHORT_REQUEST_S = 15.0
# The errors a holder sends back as themselves.
_ERRORS: dict[str, type[RLVRError]] = {
    cls.__name__: cls for cls in (UnknownSession, SessionBusy, SessionEnded, SessionFileError)
}


class SessionRouter:
    """`session_table.Remote` over Redis, and the server of this replica's sessions."""

    def __init__(self, client: Redis, reader: Redis, table: SessionTable) -> None:
        self.client, self.reader, self.table = client, reader, table
        self.tasks: set[asyncio.Task[Any]] = set()
        self.loops: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        try:
            await self._beat_once()
        except REDIS_ERRORS as exc:  # the beat goes on trying; sessions here work meanwhile
            log.warning("session holder lease not taken: %s", exc)
        self.loops = [asyncio.create_task(self._beat()), asyncio.create_task(self._serve())]
        self.table.remote = self

    async def close(self) -> None:
        self.table.remote = None
        for task in [*self.loops, *self.tasks]:
            task.cancel()
        for task in [*self.loops, *self.tasks]:
            with contextlib.suppress(asyncio.CancelledError, *REDIS_ERRORS):
                await task
        with contextlib.suppress(*REDIS_ERRORS):
            await self.client.delete(redis_keys.session_holder(self.table.holder))

    # ---------------------------------------------------------------- Remote

    async def run(self, holder: str, session_id: str, call: Call) -> CallResult:
        payload = {"code": call.code, "stdin": call.stdin, "timeout_s": call.timeout_s}
        answer = await self._ask(holder, "run", session_id, payload, call.timeout_s + CALL_GRACE_S + SHORT_REQUEST_S)
        return CallResult(**answer)

    async def read_file(self, holder: str, session_id: str, path: str) -> bytes:
        answer = await self._ask(holder, "read", session_id, {"path": path}, SHORT_REQUEST_S)
        return base64.b64decode(answer["b64"])

    async def end(self, holder: str, session_id: str) -> None:
        await self._ask(holder, "end", session_id, {}, SHORT_REQUEST_S)

    async def end_tagged(self, prefix: str) -> int:
        holders = [h for h in await self._holders() if h != self.table.holder]
        counts = await asyncio.gather(
            *(self._ask(h, "end_tagged", "", {"prefix": prefix}, SHORT_REQUEST_S) for h in holders),
            return_exceptions=True,
        )
        return sum(int(c["ended"]) for c in counts if isinstance(c, dict))

    # ---------------------------------------------------------------- asking

    async def _ask(self, holder: str, op: str, session_id: str, payload: dict[str, Any], wait_s: float) -> Any:
        reply = redis_keys.session_reply(self.table.holder, uuid.uuid4().hex)
        request = json.dumps({"op": op, "id": session_id, "payload": payload, "reply": reply})
        try:
            if not await self.client.exists(redis_keys.session_holder(holder)):
                raise _lost(session_id)
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.rpush(redis_keys.session_requests(holder), request)
                pipe.expire(redis_keys.session_requests(holder), MESSAGE_TTL_S)
                await pipe.execute()
            return _answer(await self._reply(holder, session_id, reply, wait_s))
        except REDIS_ERRORS as exc:
            raise BackendUnavailable(f"Redis is unavailable for session routing: {exc}") from exc

    async def _reply(self, holder: str, session_id: str, reply: str, wait_s: float) -> dict[str, Any]:
        give_up = time.monotonic() + wait_s
        while time.monotonic() < give_up:
            popped = await self.reader.blpop([reply], timeout=BLOCKING_READ_S)
            if popped is not None:
                return dict(json.loads(as_text(popped[1])))
            if not await self.client.exists(redis_keys.session_holder(holder)):
                raise _lost(session_id)
        raise _lost(session_id)

    async def _holders(self) -> list[str]:
        keys = [as_text(k) async for k in self.client.scan_iter(match=redis_keys.session_holder("*"), count=100)]
        return [k.removeprefix(redis_keys.session_holder("")) for k in keys]

    # ---------------------------------------------------------------- serving

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HOLDER_BEAT_S)
            try:
                await self._beat_once()
            except REDIS_ERRORS as exc:
                log.warning("session holder lease not refreshed: %s", exc)

    async def _beat_once(self) -> None:
        await self.client.set(redis_keys.session_holder(self.table.holder), "1", px=int(HOLDER_TTL_S * 1000))

    async def _serve(self) -> None:
        requests = redis_keys.session_requests(self.table.holder)
        while True:
            try:
                popped = await self.reader.blpop([requests], timeout=BLOCKING_READ_S)
            except REDIS_ERRORS as exc:
                log.warning("session requests unreadable: %s", exc)
                await asyncio.sleep(BLOCKING_READ_S)
                continue
            if popped is not None:
                task = asyncio.create_task(self._answer(as_text(popped[1])))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)

    async def _answer(self, raw: str) -> None:
        try:
            request = json.loads(raw)
            answer = {"ok": await self._here(request["op"], request["id"], request["payload"])}
        except tuple(_ERRORS.values()) as exc:
            answer = {"error": {"kind": type(exc).__name__, "message": exc.message}}
        except (ValueError, KeyError, TypeError) as exc:
            answer = {"error": {"kind": "UnknownSession", "message": f"a malformed session request: {exc}"}}
        with contextlib.suppress(*REDIS_ERRORS, KeyError, TypeError):
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.rpush(request["reply"], json.dumps(answer))
                pipe.expire(request["reply"], MESSAGE_TTL_S)
                await pipe.execute()

    async def _here(self, op: str, session_id: str, payload: dict[str, Any]) -> Any:
        """Do what another replica asks of this one's sessions."""
        if op == "end_tagged":
            return {"ended": await self.table.end_tagged(str(payload["prefix"]), everywhere=False)}
        if session_id.partition(".")[0] != self.table.holder:
            raise UnknownSession(f"no live session {session_id!r}")
        if op == "run":
            call = Call(str(payload["code"]), str(payload["stdin"]), float(payload["timeout_s"]))
            return asdict(await self.table.run(session_id, call))
        if op == "read":
            return {"b64": base64.b64encode(await self.table.read_file(session_id, str(payload["path"]))).decode()}
        if op == "end":
            await self.table.end(session_id)
            return {}
        raise ValueError(f"unknown op {op!r}")


def _answer(reply: dict[str, Any]) -> Any:
    if "error" in reply:
        error = reply["error"]
        raise _ERRORS.get(str(error.get("kind")), UnknownSession)(str(error.get("message")))
    return reply["ok"]


def _lost(session_id: str) -> SessionLost:
    return SessionLost(f"session {session_id!r} was lost with the replica that held it")
