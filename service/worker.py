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
import uuid
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from service import redis_keys
from service.dispatch.embedded import EmbeddedDispatcher
from service.settings import Settings
from service.work import Unit, UnitResult, infrastructure_failure

log = logging.getLogger("rlvr.worker")

READ_BLOCK_MS = 1000
RECONNECT_BACKOFF_S = 0.5
MAX_RECONNECT_BACKOFF_S = 5.0


def redis_client(settings: Settings, *, blocking: bool = False) -> Redis:
    assert settings.redis_url is not None
    timeout = settings.redis_op_timeout_s + (READ_BLOCK_MS / 1000 + 1 if blocking else 0)
    return Redis.from_url(
        settings.redis_url,
        socket_timeout=timeout,
        socket_connect_timeout=settings.redis_op_timeout_s,
        health_check_interval=10,
    )


class Worker:
    def __init__(self, settings: Settings, processes: int) -> None:
        self.settings = settings
        self.processes = processes
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.client = redis_client(settings, blocking=True)
        self.pool = EmbeddedDispatcher(
            workers=processes, chunk_size=settings.chunk_size, max_rss_mb=settings.worker_max_rss_mb
        )
        # Chunks being verified here, so that the heartbeat can keep them claimed.
        self.in_progress: set[str] = set()
        self.slots = asyncio.Semaphore(processes * 2)
        self.stopping = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        await self.pool.start()
        log.info("worker %s: %d processes on %s", self.name, self.processes, self.settings.redis_url)
        heartbeat = asyncio.create_task(self._heartbeat())
        backoff = RECONNECT_BACKOFF_S
        try:
            while not self.stopping.is_set():
                try:
                    await self._ensure_group()
                    await self._consume()
                    backoff = RECONNECT_BACKOFF_S
                except (RedisError, OSError) as exc:
                    log.warning("redis unavailable (%s); retrying in %.1fs", exc, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, MAX_RECONNECT_BACKOFF_S)
        finally:
            heartbeat.cancel()
            if self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
            await self.pool.close()
            await self.client.aclose()

    async def _ensure_group(self) -> None:
        try:
            await self.client.xgroup_create(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def _consume(self) -> None:
        idle_ms = int(self.settings.redis_reclaim_idle_s * 1000)
        while not self.stopping.is_set():
            await self.slots.acquire()
            try:
                entries = await self._reclaim(idle_ms)
                if not entries:
                    got = await self.client.xreadgroup(
                        redis_keys.WORKER_GROUP,
                        self.name,
                        {redis_keys.JOB_STREAM: ">"},
                        count=1,
                        block=READ_BLOCK_MS,
                    )
                    entries = [e for stream in got or [] for e in stream[1]]  # type: ignore[union-attr]
            except ResponseError as exc:
                self.slots.release()
                if "NOGROUP" in str(exc):  # Redis restarted empty: recreate and go on
                    await self._ensure_group()
                    continue
                raise
            except BaseException:
                self.slots.release()
                raise
            if not entries:
                self.slots.release()
                continue
            entry_id, fields = entries[0]
            for extra_id, extra_fields in entries[1:]:  # XAUTOCLAIM may hand back more than asked
                await self.slots.acquire()
                self._spawn(_s(extra_id), extra_fields)
            self._spawn(_s(entry_id), fields)

    def _spawn(self, entry_id: str, fields: dict[Any, Any]) -> None:
        task = asyncio.create_task(self._handle(entry_id, fields))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _reclaim(self, idle_ms: int) -> list[Any]:
        reply = await self.client.xautoclaim(
            redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, self.name, min_idle_time=idle_ms, start_id="0-0", count=1
        )
        entries = [e for e in reply[1] if e[1]]  # entries deleted meanwhile come back empty
        if entries:
            await self.client.hincrby(redis_keys.STATS, "reclaimed", len(entries))
            log.info("reclaimed %d idle entries", len(entries))
        return entries

    async def _deliveries(self, entry_id: str) -> int:
        info = await self.client.xpending_range(
            redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, min=entry_id, max=entry_id, count=1
        )
        return int(info[0]["times_delivered"]) if info else 1

    async def _handle(self, entry_id: str, raw_fields: dict[Any, Any]) -> None:
        self.in_progress.add(entry_id)
        try:
            fields = {_s(k): _s(v) for k, v in raw_fields.items()}
            reply = fields.get("reply", "")
            try:
                units = [Unit.from_dict(d) for d in json.loads(fields["units"])]
            except (KeyError, ValueError, TypeError) as exc:
                await self._dead_letter(entry_id, fields, [], reply, f"malformed entry: {exc}")
                return
            if await self._deliveries(entry_id) > self.settings.redis_max_deliveries:
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
        except (RedisError, OSError) as exc:
            # Unacknowledged: another worker (or this one) reclaims the entry later.
            log.warning("could not finish entry %s: %s", entry_id, exc)
        finally:
            self.in_progress.discard(entry_id)
            self.slots.release()

    async def _publish(self, entry_id: str, reply: str, units: list[Unit], results: list[UnitResult]) -> None:
        # First writer wins: a unit processed twice answers with the first result both times.
        async with self.client.pipeline(transaction=False) as pipe:
            for unit, res in zip(units, results, strict=True):
                pipe.set(redis_keys.result(unit.key), json.dumps(res.to_dict()), nx=True, ex=redis_keys.RESULT_TTL_S)
                pipe.get(redis_keys.result(unit.key))
            stored = await pipe.execute()
        final = {u.key: json.loads(stored[2 * i + 1]) for i, u in enumerate(units)}
        async with self.client.pipeline(transaction=True) as pipe:
            for unit in units:
                res = UnitResult.from_dict(final[unit.key])
                if res.cacheable:
                    pipe.set(redis_keys.verdict(unit.key), json.dumps(final[unit.key]), ex=self.settings.cache_ttl_s)
            if reply:
                pipe.rpush(reply, json.dumps({"entry": entry_id, "results": final}))
                pipe.expire(reply, redis_keys.REPLY_TTL_S)
            pipe.xack(redis_keys.JOB_STREAM, redis_keys.WORKER_GROUP, entry_id)
            pipe.xdel(redis_keys.JOB_STREAM, entry_id)
            pipe.hincrby(redis_keys.STATS, "processed_units", len(units))
            await pipe.execute()

    async def _dead_letter(
        self, entry_id: str, fields: dict[str, str], units: list[Unit], reply: str, why: str
    ) -> None:
        log.error("dead-lettering entry %s: %s", entry_id, why)
        letter: dict[Any, Any] = {**fields, "entry": entry_id, "reason": why}
        await self.client.xadd(redis_keys.DEAD_LETTER_STREAM, letter)
        await self.client.hincrby(redis_keys.STATS, "dead_lettered", 1)
        failures = [infrastructure_failure(f"dead-lettered: {why}", entry=entry_id) for _ in units]
        await self._publish(entry_id, reply, units, failures)

    async def _heartbeat(self) -> None:
        interval = max(0.2, self.settings.redis_reclaim_idle_s / 3)
        while True:
            await asyncio.sleep(interval)
            if not self.in_progress:
                continue
            with contextlib.suppress(RedisError, OSError):
                await self.client.xclaim(
                    redis_keys.JOB_STREAM,
                    redis_keys.WORKER_GROUP,
                    self.name,
                    min_idle_time=0,
                    message_ids=list(self.in_progress),
                    justid=True,
                )


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def run_worker(settings: Settings, processes: int) -> None:
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")

    async def main() -> None:
        worker = Worker(settings, processes)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stopping.set)
        await worker.run()

    asyncio.run(main())
