"""`rlvr worker`: consumes the job stream and verifies chunks on a local process pool.

Delivery is at least once: XREADGROUP, verify, write the results (idempotently, keyed
by unit hash), push them to the owner's reply list, then XACK and XDEL. Entries left
pending by a dead worker are taken over with XAUTOCLAIM once idle longer than
`redis_reclaim_idle_s`; this worker keeps its own in-progress entries fresh (XCLAIM
JUSTID) so a long chunk is not stolen. An entry delivered more than
`redis_max_deliveries` times goes to the dead-letter stream and its units are answered
as masked errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import time
import uuid
from typing import Any

from redis.exceptions import ResponseError

from rlvr.service import presence, redis_keys
from rlvr.service.dispatch.pool import PoolDispatcher
from rlvr.service.errors import BackendUnavailable
from rlvr.service.redis_conn import BLOCKING_READ_S, REDIS_ERRORS, as_text, redis_client
from rlvr.service.settings import Settings, builtin_config
from rlvr.service.work import Unit, UnitResult, infrastructure_failure

log = logging.getLogger("rlvr.worker")

# KEYS: job stream, stats hash, then (result key, verdict key) per unit.
# ARGV: entry id, reply list, result TTL, verdict TTL, reply TTL, then (unit key, result JSON,
# cacheable flag) per unit. Only a cacheable result (final, unmasked, independent of the
# deadline) is stored and shared; the first one stored wins (SET NX), so a chunk processed
# twice replies with the same results both times. A timeout or a masked failure goes to
# its own request only: a retry grades again.
PUBLISH_LUA = (
    """
local entry, reply = ARGV[1], ARGV[2]
local result_ttl, verdict_ttl, reply_ttl = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local parts = {}
local n = (#KEYS - 2) / 2
for i = 1, n do
  local rkey, vkey = KEYS[1 + 2 * i], KEYS[2 + 2 * i]
  local ukey, value, cacheable = ARGV[3 + 3 * i], ARGV[4 + 3 * i], ARGV[5 + 3 * i]
  local stored
  if cacheable == '1' then
    stored = redis.call('SET', rkey, value, 'NX', 'GET', 'EX', result_ttl)
    if not stored then redis.call('SET', vkey, value, 'EX', verdict_ttl) end
  else
    stored = redis.call('GET', rkey)
  end
  if stored then value = stored end
  parts[#parts + 1] = cjson.encode(ukey) .. ':' .. value
end
if reply ~= '' then
  redis.call('RPUSH', reply, '{"entry":' .. cjson.encode(entry) .. ',"results":{' .. table.concat(parts, ',') .. '}}')
  redis.call('EXPIRE', reply, reply_ttl)
end
redis.call('XACK', KEYS[1], '"""
    + redis_keys.WORKER_GROUP
    + """', entry)
redis.call('XDEL', KEYS[1], entry)
redis.call('HINCRBY', KEYS[2], 'processed_units', n)
return n
"""
)
RECONNECT_BACKOFF_S = 0.5
# How often a worker whose processes cannot start looks again before it reads entries:
# meanwhile it takes none, and leaves them to the workers that can verify.
POOL_UNAVAILABLE_PAUSE_S = 1.0
# What leaves an entry unacknowledged, for a worker to reclaim later: Redis failing, or
# this worker's processes no longer starting.
UNFINISHED: tuple[type[BaseException], ...] = (*REDIS_ERRORS, BackendUnavailable)
MAX_RECONNECT_BACKOFF_S = 5.0


class Worker:
    """Feeds stream entries to a pool of `processes` verifier processes, keeping up to
    two chunks per process in hand so that none waits on a Redis round trip."""

    def __init__(self, settings: Settings, processes: int) -> None:
        self.settings = settings
        self.processes = processes
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.client = redis_client(settings, blocking=True)
        self.pool = PoolDispatcher(
            config=builtin_config(settings),
            workers=processes,
            chunk_size=settings.chunk_size,
            max_rss_mb=settings.worker_max_rss_mb,
            stall_wall_factor=settings.stall_wall_factor,
            stall_retries=settings.stall_retries,
        )
        # Chunks being verified here, so that the heartbeat can keep them claimed.
        self.in_progress: set[str] = set()
        self.max_in_hand = processes * 2
        # One permit per chunk this worker may hold at once (being read, verified or published).
        self.capacity = asyncio.Semaphore(self.max_in_hand)
        self.stopping = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        self._publish_script = self.client.register_script(PUBLISH_LUA)

    async def run(self) -> None:
        await self.pool.start()
        log.info("worker %s: %d processes on %s", self.name, self.processes, self.settings.redis_url)
        heartbeat = asyncio.create_task(self._heartbeat())
        announce = asyncio.create_task(self._announce())
        backoff = RECONNECT_BACKOFF_S
        try:
            while not self.stopping.is_set():
                try:
                    await self._ensure_group()
                    await self._consume()
                    backoff = RECONNECT_BACKOFF_S
                except REDIS_ERRORS as exc:
                    log.warning("redis unavailable (%s); retrying in %.1fs", exc, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, MAX_RECONNECT_BACKOFF_S)
        finally:
            # Draining: the chunks in hand are finished and acknowledged, and kept claimed
            # meanwhile, so that no other worker reclaims and verifies them again.
            if self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
            heartbeat.cancel()
            announce.cancel()
            with contextlib.suppress(*REDIS_ERRORS):
                await presence.leave(self.client, self.name, self.max_in_hand)
            await self._leave_group()
            await self.pool.close()
            await self.client.aclose()

    async def _leave_group(self) -> None:
        """Deletes this worker's consumer when it holds nothing, so that the group does
        not collect one consumer per worker ever started."""
        with contextlib.suppress(*REDIS_ERRORS, ResponseError):
            if not await self._pending_of(self.name):
                await self.client.xgroup_delconsumer(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, self.name)

    async def _pending_of(self, consumer: str) -> int:
        consumers = await self.client.xinfo_consumers(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP)
        return sum(int(c["pending"]) for c in consumers if as_text(c["name"]) == consumer)

    async def _delete_dead_consumers(self) -> None:
        """Consumers idle past `redis_dead_consumer_idle_s` with nothing pending belong to
        workers that died (a live one reads every few seconds): delete them."""
        idle_ms = self.settings.redis_dead_consumer_idle_s * 1000
        consumers = await self.client.xinfo_consumers(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP)
        for c in consumers:
            name = as_text(c["name"])
            if name != self.name and int(c["pending"]) == 0 and int(c["idle"]) > idle_ms:
                # Deleting is safe even if it came back: XREADGROUP creates it again.
                await self.client.xgroup_delconsumer(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, name)
                log.info("deleted dead consumer %s", name)

    async def _ensure_group(self) -> None:
        try:
            await self.client.xgroup_create(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def _consume(self) -> None:
        idle_ms = int(self.settings.redis_reclaim_idle_s * 1000)
        reclaim_every = max(0.2, self.settings.redis_reclaim_idle_s / 2)
        next_reclaim = 0.0
        while not self.stopping.is_set():
            if self.pool.unavailable() is not None:
                await asyncio.sleep(POOL_UNAVAILABLE_PAUSE_S)
                continue
            free = await self._acquire_capacity()
            if self.stopping.is_set():  # stopped while waiting for room: take nothing new
                self._release(free)
                return
            try:
                reclaimed: list[Any] = []
                if time.monotonic() >= next_reclaim:
                    reclaimed = await self._reclaim(idle_ms, free)
                    next_reclaim = time.monotonic() + reclaim_every
                entries = [(e, True) for e in reclaimed]
                if not entries:
                    entries = [(e, False) for e in await self._read_new(free)]
            except ResponseError as exc:
                self._release(free)
                if "NOGROUP" in str(exc):  # Redis restarted empty: recreate and go on
                    await self._ensure_group()
                    continue
                raise
            except BaseException:
                self._release(free)
                raise
            for (entry_id, fields), was_reclaimed in entries[:free]:
                self._spawn(as_text(entry_id), fields, was_reclaimed)
            self._release(free - len(entries[:free]))

    async def _acquire_capacity(self) -> int:
        """Waits for room for one chunk, then takes what else is free right now."""
        await self.capacity.acquire()
        free = 1
        while not self.capacity.locked() and free < self.max_in_hand:
            await self.capacity.acquire()
            free += 1
        return free

    def _release(self, n: int) -> None:
        for _ in range(n):
            self.capacity.release()

    async def _read_new(self, count: int) -> list[Any]:
        got = await self.client.xreadgroup(
            redis_keys.WORKER_GROUP,
            self.name,
            {redis_keys.JOB_STREAM: ">"},
            count=count,
            block=int(BLOCKING_READ_S * 1000),
        )
        return [e for stream in got or [] for e in stream[1]]  # type: ignore[union-attr]

    def _spawn(self, entry_id: str, fields: dict[Any, Any], reclaimed: bool) -> None:
        task = asyncio.create_task(self._handle(entry_id, fields, reclaimed))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _reclaim(self, idle_ms: int, count: int) -> list[Any]:
        reply = await self.client.xautoclaim(
            redis_keys.JOB_STREAM,
            redis_keys.WORKER_GROUP,
            self.name,
            min_idle_time=idle_ms,
            start_id="0-0",
            count=count,
        )
        entries = [e for e in reply[1] if e[1]]  # entries deleted meanwhile come back empty
        if entries:
            await self.client.hincrby(redis_keys.STATS, "reclaimed", len(entries))
            log.info("reclaimed %d idle entries", len(entries))
        await self._delete_dead_consumers()
        return entries

    async def _deliveries(self, entry_id: str) -> int:
        info = await self.client.xpending_range(
            redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, min=entry_id, max=entry_id, count=1
        )
        return int(info[0]["times_delivered"]) if info else 1

    async def _handle(self, entry_id: str, raw_fields: dict[Any, Any], reclaimed: bool) -> None:
        self.in_progress.add(entry_id)
        try:
            fields = {as_text(k): as_text(v) for k, v in raw_fields.items()}
            reply = fields.get("reply", "")
            try:
                units = [Unit.from_dict(d) for d in json.loads(fields["units"])]
            except (KeyError, ValueError, TypeError) as exc:
                await self._dead_letter(entry_id, fields, [], reply, f"malformed entry: {exc}")
                return
            # A fresh entry is on its first delivery; only reclaimed ones need counting.
            if reclaimed and await self._deliveries(entry_id) > self.settings.redis_max_deliveries:
                await self._dead_letter(
                    entry_id,
                    fields,
                    units,
                    reply,
                    f"entry delivered more than {self.settings.redis_max_deliveries} times",
                )
                return
            results = await self.pool.run(units)
            await self._publish(entry_id, reply, units, results)
        except UNFINISHED as exc:
            # Unacknowledged: another worker (or this one) reclaims the entry later.
            log.warning("could not finish entry %s: %s", entry_id, exc)
        finally:
            self.in_progress.discard(entry_id)
            self.capacity.release()

    async def _publish(self, entry_id: str, reply: str, units: list[Unit], results: list[UnitResult]) -> None:
        """One round trip: store each result once, cache, reply to the owner, ack."""
        args: list[Any] = [entry_id, reply, redis_keys.RESULT_TTL_S, self.settings.cache_ttl_s, redis_keys.REPLY_TTL_S]
        keys: list[str] = [redis_keys.JOB_STREAM, redis_keys.STATS]
        for unit, res in zip(units, results, strict=True):
            keys += [redis_keys.result(unit.key), redis_keys.verdict(unit.key)]
            args += [unit.key, json.dumps(res.to_dict()), "1" if res.cacheable else "0"]
        await self._publish_script(keys=keys, args=args)

    async def _dead_letter(
        self, entry_id: str, fields: dict[str, str], units: list[Unit], reply: str, why: str
    ) -> None:
        log.error("dead-lettering entry %s: %s", entry_id, why)
        letter: dict[Any, Any] = {**fields, "entry": entry_id, "reason": why}
        await self.client.xadd(
            redis_keys.DEAD_LETTER_STREAM, letter, maxlen=self.settings.redis_dead_letter_max, approximate=False
        )
        await self.client.hincrby(redis_keys.STATS, "dead_lettered", 1)
        failures = [infrastructure_failure(f"dead-lettered: {why}", entry=entry_id) for _ in units]
        await self._publish(entry_id, reply, units, failures)

    async def _announce(self) -> None:
        """Tells the API replicas this worker is alive and how many chunks it can hold,
        so that they keep only that much of their work on the stream (fairness)."""
        while True:
            with contextlib.suppress(*REDIS_ERRORS):
                await presence.beat(self.client, self.name, self.max_in_hand)
            await asyncio.sleep(presence.BEAT_INTERVAL_S)

    async def _heartbeat(self) -> None:
        interval = max(0.2, self.settings.redis_reclaim_idle_s / 3)
        while True:
            await asyncio.sleep(interval)
            if not self.in_progress:
                continue
            with contextlib.suppress(*REDIS_ERRORS):
                await self.client.xclaim(
                    redis_keys.JOB_STREAM,
                    redis_keys.WORKER_GROUP,
                    self.name,
                    min_idle_time=0,
                    message_ids=list(self.in_progress),
                    justid=True,
                )


def run_worker(settings: Settings, processes: int) -> None:
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")

    async def main() -> None:
        worker = Worker(settings, processes)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stopping.set)
        await worker.run()

    asyncio.run(main())
