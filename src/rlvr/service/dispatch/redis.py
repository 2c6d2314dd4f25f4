"""Redis dispatcher: units go on a stream, `rlvr worker` processes anywhere verify them.

One stream entry carries a chunk of units. Workers push the chunk's results to the
reply list of the API replica that owns the request; a reader task here resolves the
waiting futures. Results are keyed by unit hash, so a chunk processed twice (a dead
worker's entry reclaimed) resolves nothing twice. Identical units already dispatched
by another replica are not sent again: this replica waits for their stored result.

A claim on a unit names its replica and counts only while that replica's lease lives
(see `presence`): the units of a replica that died, with chunks still unsent in its
memory, are taken over by the replicas waiting for them within seconds. A replica that
was only stopped and comes back does no harm: its late results are the same verdicts
under the same keys, and it releases only the claims that are still its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import queue
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from rlvr.service import presence, redis_keys
from rlvr.service.dispatch.fair import FairQueue
from rlvr.service.errors import BackendUnavailable, Overloaded
from rlvr.service.redis_conn import BLOCKING_READ_S, REDIS_ERRORS, as_text
from rlvr.service.work import Unit, UnitResult, infrastructure_failure

log = logging.getLogger(__name__)

RECONNECT_BACKOFF_S = 0.2
FOLLOWER_POLL_S = 0.05
# How often the live workers' capacity is read again, while there is work to send.
WINDOW_REFRESH_S = 1.0

# KEYS: a replica's lease, then claims. ARGV: the replica, and '1' to release only while
# its lease is gone. Deletes those of the claims that replica holds: one another replica
# has taken over since is not touched.
RELEASE_LUA = """
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = 0
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then n = n + redis.call('DEL', KEYS[i]) end
end
return n
"""


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Marks a task's exception as seen: the request failed for another reason first."""
    if not task.cancelled():
        task.exception()


@dataclass(eq=False)
class _Chunk:
    """One stream entry's worth of a request's units, and the futures they resolve."""

    units: list[Unit]
    futures: list[asyncio.Future[UnitResult]]
    entry: str | None = None
    open: int = field(default=0)


class RedisDispatcher:
    # Workers write verdicts into the shared cache themselves (see service.worker).
    stores_verdicts = True

    def __init__(
        self,
        client: Redis,
        reader_client: Redis,
        *,
        chunk_size: int,
        max_queue: int,
        result_timeout_s: float,
        window_chunks: int | None = None,
        replica: str | None = None,
        lease_ttl_s: float = presence.REPLICA_LEASE_TTL_S,
        lease_interval_s: float = presence.REPLICA_BEAT_INTERVAL_S,
    ) -> None:
        self.client = client
        self.reader_client = reader_client
        self.chunk_size = chunk_size
        self.max_queue = max_queue
        self.result_timeout_s = result_timeout_s
        self.replica = replica or uuid.uuid4().hex[:12]
        self.reply_key = redis_keys.reply_list(self.replica)
        self._waiting: dict[str, asyncio.Future[UnitResult]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.lease_ttl_s = lease_ttl_s
        self.lease_interval_s = lease_interval_s
        self._lease: asyncio.Task[None] | None = None
        self._release_script = client.register_script(RELEASE_LUA)
        # Fairness: the stream is a FIFO that every replica and worker shares, so this
        # replica keeps only a window of its chunks there (as many as the live workers
        # can hold) and picks what goes next round-robin between its requests. A 1-item
        # request then waits behind one window, not behind every queued batch.
        self.window_chunks = window_chunks
        self._unsent: FairQueue[_Chunk] = FairQueue()
        self._outstanding = 0
        self._pumping = False
        self._window = max_queue
        self._window_read_at = -WINDOW_REFRESH_S
        self._pumps: set[asyncio.Task[None]] = set()
        self.connected = False
        self.last_error: str | None = None

    async def start(self) -> None:
        self._reader = asyncio.create_task(self._read_replies(), name="rlvr-redis-replies")
        self._lease = asyncio.create_task(self._hold_lease(), name="rlvr-redis-lease")

    async def close(self) -> None:
        for task in list(self._pumps):
            task.cancel()
        for background in (self._reader, self._lease):
            if background is not None:
                background.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await background
        self._fail_waiting(BackendUnavailable("dispatcher closed"))
        # Whatever this replica still claims passes to the others at once.
        with contextlib.suppress(*REDIS_ERRORS):
            await presence.drop_lease(self.client, self.replica)

    async def _hold_lease(self) -> None:
        """Keeps this replica's claims valid while it lives (see `presence`)."""
        while True:
            with contextlib.suppress(*REDIS_ERRORS):
                async with self.client.pipeline(transaction=False) as pipe:
                    presence.hold_lease(pipe, self.replica, self.lease_ttl_s)
                    await pipe.execute()
            await asyncio.sleep(self.lease_interval_s)

    # ---- replies ----------------------------------------------------------------------

    async def _read_replies(self) -> None:
        while True:
            try:
                popped = await self.reader_client.blpop([self.reply_key], timeout=BLOCKING_READ_S)
                self.connected = True
            except REDIS_ERRORS as exc:
                self._lost(exc)
                await asyncio.sleep(RECONNECT_BACKOFF_S)
                continue
            if popped is not None:
                self._resolve_reply(popped[1])

    def _resolve_reply(self, raw_message: bytes | str) -> None:
        try:
            results = json.loads(raw_message)["results"]
        except (ValueError, KeyError, TypeError):
            log.error("malformed reply on %s", self.reply_key)
            return
        for key, raw in results.items():
            fut = self._waiting.get(key)
            if fut is not None and not fut.done():
                fut.set_result(UnitResult.from_dict(raw))

    def _lost(self, exc: BaseException) -> None:
        if self.connected or self.last_error is None:
            log.warning("lost Redis: %s", exc)
        self.connected = False
        self.last_error = f"{type(exc).__name__}: {exc}"
        # Entries may have died with the server: fail fast rather than wait for nothing.
        self._fail_waiting(BackendUnavailable(f"Redis connection lost: {self.last_error}"))

    def _fail_waiting(self, exc: BaseException) -> None:
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(exc)

    @contextlib.contextmanager
    def _redis_needed(self) -> Iterator[None]:
        """For the steps a request cannot do without: Redis out of reach fails it (503)."""
        try:
            yield
        except REDIS_ERRORS as exc:
            self._lost(exc)
            raise BackendUnavailable(f"Redis unavailable: {self.last_error}") from exc

    # ---- dispatch ---------------------------------------------------------------------

    async def run(self, units: Sequence[Unit]) -> list[UnitResult]:
        if not units:
            return []
        return await self._run(units, time.monotonic() + self.result_timeout_s)

    async def _run(self, units: Sequence[Unit], deadline: float) -> list[UnitResult]:
        loop = asyncio.get_running_loop()
        leaders, followers = await self._claim(units)
        futures = {u.key: loop.create_future() for u in leaders}
        self._waiting.update(futures)
        slices = [leaders[start : start + self.chunk_size] for start in range(0, len(leaders), self.chunk_size)]
        chunks = [_Chunk(part, [futures[u.key] for u in part]) for part in slices]
        owner = object()
        try:
            if chunks:
                await self._admit()
                self._unsent.put_many(owner, chunks)
                self._kick()
            results = await self._collect(units, futures, followers, deadline)
        except asyncio.CancelledError:
            await self._withdraw([c.entry for c in chunks if c.entry is not None])
            raise
        finally:
            self._unsent.cancel(owner)
            for key, fut in futures.items():
                self._waiting.pop(key, None)
                fut.cancel()  # a no-op when resolved; otherwise frees this request's share of the window
            if leaders:
                with contextlib.suppress(*REDIS_ERRORS):
                    await self._release(self.replica, [u.key for u in leaders], only_if_dead=False)
        return results

    async def _claim(self, units: Sequence[Unit]) -> tuple[list[Unit], list[Unit]]:
        """Split into units this replica sends and units another replica already sent.
        The lease is refreshed with the claims, so that no claim is ever made without it."""
        # A backstop only: the lease is what ends the claims of a replica that died.
        ttl = max(1, int(self.result_timeout_s))
        with self._redis_needed():
            async with self.client.pipeline(transaction=False) as pipe:
                presence.hold_lease(pipe, self.replica, self.lease_ttl_s)
                for u in units:
                    pipe.set(redis_keys.in_flight(u.key), self.replica, nx=True, ex=ttl)
                claimed = (await pipe.execute())[1:]
        leaders = [u for u, ok in zip(units, claimed, strict=True) if ok]
        followers = [u for u, ok in zip(units, claimed, strict=True) if not ok]
        return leaders, followers

    async def _release(self, replica: str, keys: list[str], *, only_if_dead: bool) -> None:
        """Deletes the claims on `keys` that `replica` holds; with `only_if_dead`, only
        once its lease is gone (checked in the same script, so that a replica that comes
        back meanwhile keeps them)."""
        claims = [redis_keys.in_flight(k) for k in keys]
        flag = "1" if only_if_dead else "0"
        await self._release_script(keys=[redis_keys.replica_lease(replica), *claims], args=[replica, flag])

    async def _withdraw(self, entries: list[str]) -> None:
        """The request was cancelled (its client left): entries no worker has read yet
        are deleted, so they cost nothing; one being verified finishes unheeded."""
        if entries:
            with contextlib.suppress(*REDIS_ERRORS):
                await self.client.xdel(redis_keys.JOB_STREAM, *entries)

    async def _admit(self) -> None:
        """429 when the stream and this replica's unsent chunks are at `max_queue`."""
        with self._redis_needed():
            depth = await self.client.xlen(redis_keys.JOB_STREAM)
        depth += self._unsent.qsize()
        if depth >= self.max_queue:
            raise Overloaded(
                f"the job stream holds {depth} entries, at its limit of {self.max_queue}", retry_after_s=2.0
            )

    def _kick(self) -> None:
        """Starts the pump unless it is running. It runs as its own task, so that a
        request cancelled mid-send cannot strand the other requests' chunks it carries."""
        if not self._pumping:
            self._pumping = True
            task = asyncio.get_running_loop().create_task(self._pump())
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _pump(self) -> None:
        """Sends unsent chunks, round-robin between requests, while the window has room.
        It loops until the window is full or nothing is left, so chunks queued while it
        awaits Redis are picked up too."""
        try:
            while batch := self._take(await self._window_size() - self._outstanding):
                if not await self._send(batch):
                    return
        finally:
            self._pumping = False

    def _take(self, room: int) -> list[_Chunk]:
        batch: list[_Chunk] = []
        while len(batch) < room:
            try:
                chunk = self._unsent.get(0.0)
            except queue.Empty:
                break
            if chunk is not None and not all(f.done() for f in chunk.futures):
                batch.append(chunk)
        return batch

    async def _send(self, batch: list[_Chunk]) -> bool:
        """Puts `batch` on the stream; False when Redis is out of reach (the waiting
        requests have been failed with a 503 then)."""
        self._outstanding += len(batch)
        try:
            with self._redis_needed():
                async with self.client.pipeline(transaction=False) as pipe:
                    for chunk in batch:
                        pipe.xadd(
                            redis_keys.JOB_STREAM,
                            {
                                "chunk": uuid.uuid4().hex,
                                "reply": self.reply_key,
                                "units": json.dumps([u.to_dict() for u in chunk.units]),
                            },
                        )
                    entries = await pipe.execute()
        except BackendUnavailable:
            self._outstanding -= len(batch)
            return False
        for chunk, entry in zip(batch, entries, strict=True):
            chunk.entry = as_text(entry)
            self._track(chunk)
        return True

    def _track(self, chunk: _Chunk) -> None:
        """The chunk leaves the window when all its futures are done: answered, failed,
        or cancelled because their request ended."""
        pending = [f for f in chunk.futures if not f.done()]
        chunk.open = len(pending)
        if not pending:
            self._chunk_done()

        def one_done(_: asyncio.Future[UnitResult]) -> None:
            chunk.open -= 1
            if chunk.open == 0:
                self._chunk_done()

        for fut in pending:
            fut.add_done_callback(one_done)

    def _chunk_done(self) -> None:
        self._outstanding -= 1
        if self._unsent.qsize():
            self._kick()

    async def _window_size(self) -> int:
        """Chunks this replica may have on the stream or in workers' hands at once: the
        setting, else what the live workers can hold together; with no worker heard
        from (or an older worker that does not announce itself), nothing is held back."""
        if self.window_chunks is not None:
            return self.window_chunks
        now = time.monotonic()
        if now - self._window_read_at >= WINDOW_REFRESH_S:
            self._window_read_at = now
            with contextlib.suppress(*REDIS_ERRORS):
                self._window = await presence.live_capacity(self.client) or self.max_queue
        return self._window

    async def _collect(
        self,
        units: Sequence[Unit],
        futures: dict[str, asyncio.Future[UnitResult]],
        followers: list[Unit],
        deadline: float,
    ) -> list[UnitResult]:
        # Followers are watched meanwhile, so that a unit whose owner died is taken
        # over at once, not after this request's own units are done.
        following = asyncio.ensure_future(self._follow(followers, deadline)) if followers else None
        try:
            got = await self._led(futures, deadline)
            if following is not None:
                got.update(await following)
        finally:
            if following is not None:
                following.cancel()  # a no-op once it is done
                following.add_done_callback(_retrieved)
        missing = infrastructure_failure(f"no worker answered within {self.result_timeout_s:g}s")
        return [got.get(u.key, missing) for u in units]

    async def _led(self, futures: dict[str, asyncio.Future[UnitResult]], deadline: float) -> dict[str, UnitResult]:
        """The results of the units this replica sent, as they arrive within `deadline`."""
        if not futures:
            return {}
        done, _ = await asyncio.wait(futures.values(), timeout=max(0.0, deadline - time.monotonic()))
        failures = [exc for fut in done if (exc := fut.exception()) is not None]
        if failures:
            raise failures[0]  # Redis went away: the request fails as a whole (503)
        return {key: fut.result() for key, fut in futures.items() if fut in done}

    async def _follow(self, units: list[Unit], deadline: float) -> dict[str, UnitResult]:
        """Wait for results another replica's workers will store; take over the units
        no live replica holds: their owner gave up, or died, or is stopped."""
        pending = {u.key: u for u in units}
        got: dict[str, UnitResult] = {}
        while pending and time.monotonic() < deadline:
            with self._redis_needed():
                stored, owners = await self._look(list(pending))
                free = await self._free(owners)
            for key, raw in stored.items():
                got[key] = UnitResult.from_dict(json.loads(raw))
                del pending[key]
            orphans = [pending.pop(key) for key in free]
            if orphans:
                got.update(zip((u.key for u in orphans), await self._run(orphans, deadline), strict=True))
            if pending:
                await asyncio.sleep(FOLLOWER_POLL_S)
        return got

    async def _look(self, keys: list[str]) -> tuple[dict[str, bytes | str], dict[str, str | None]]:
        """The stored results among `keys`, and who claims each of the others (None: nobody)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.get(redis_keys.result(key))
                pipe.get(redis_keys.in_flight(key))
            replies = await pipe.execute()
        stored: dict[str, bytes | str] = {}
        owners: dict[str, str | None] = {}
        for i, key in enumerate(keys):
            raw, owner = replies[2 * i], replies[2 * i + 1]
            if raw is not None:
                stored[key] = raw
            else:
                owners[key] = None if owner is None else as_text(owner)
        return stored, owners

    async def _free(self, owners: dict[str, str | None]) -> list[str]:
        """The keys no live replica claims; the claims of replicas whose lease is gone
        are released on the way, so that they can be claimed again."""
        free = [key for key, owner in owners.items() if owner is None]
        held: dict[str, list[str]] = {}
        for key, owner in owners.items():
            if owner is not None:
                held.setdefault(owner, []).append(key)
        for owner in await presence.dead_replicas(self.client, held):
            log.warning("replica %s is gone: taking over %d of its units", owner, len(held[owner]))
            await self._release(owner, held[owner], only_if_dead=True)
            free.extend(held[owner])
        return free

    # ---- health -----------------------------------------------------------------------

    async def stream_stats(self) -> dict[str, Any]:
        try:
            depth = await self.client.xlen(redis_keys.JOB_STREAM)
            dead = await self.client.xlen(redis_keys.DEAD_LETTER_STREAM)
            groups = await self.client.xinfo_groups(redis_keys.JOB_STREAM) if depth or dead else []
            stats = await self.client.hgetall(redis_keys.STATS)
        except REDIS_ERRORS as exc:
            return {"ready": False, "error": f"{type(exc).__name__}: {exc}"}
        group = next((g for g in groups if as_text(g.get("name")) == redis_keys.WORKER_GROUP), {})
        return {
            "ready": True,
            "queue_depth": depth,
            "pending": int(group.get("pending", 0) or 0),
            "lag": int(group.get("lag", 0) or 0),
            "consumers": int(group.get("consumers", 0) or 0),
            "dead_letter_depth": dead,
            "counters": {as_text(k): int(v) for k, v in stats.items() if as_text(k).isidentifier()},
        }

    def health(self) -> dict[str, Any]:
        return {
            "kind": "redis",
            "ready": self.connected,
            "replica": self.replica,
            "waiting_units": len(self._waiting),
            "window_chunks": self._window if self.window_chunks is None else self.window_chunks,
            "chunks_outstanding": self._outstanding,
            "chunks_unsent": self._unsent.qsize(),
            "last_error": self.last_error,
        }
