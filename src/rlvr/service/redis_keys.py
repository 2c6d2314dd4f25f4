"""Every Redis key and stream name rlvr uses, in one place."""

from __future__ import annotations

PREFIX = "rlvr:"

JOB_STREAM = PREFIX + "jobs"
"""Chunks of units to verify: fields `units` (JSON list), `reply` (list key), `chunk` (id)."""

WORKER_GROUP = "rlvr-workers"
"""The consumer group every `rlvr worker` reads JOB_STREAM through."""

DEAD_LETTER_STREAM = PREFIX + "jobs:dead"
"""Entries delivered more than `redis_max_deliveries` times, kept for inspection."""

WORKERS = PREFIX + "workers"
"""Sorted set of live `rlvr worker` processes: member `<chunks it can hold>|<name>`, score
the Redis server's time of its last presence beat. API replicas size their window from it."""

STATS = PREFIX + "stats"
"""Hash of counters workers keep: reclaimed, dead_lettered, processed_units, worker heartbeats."""


def reply_list(replica: str) -> str:
    """Where workers push the results for one API replica's requests."""
    return f"{PREFIX}reply:{replica}"


def verdict(key: str) -> str:
    """The shared verdict cache: one unit's result, with the cache TTL."""
    return f"{PREFIX}verdict:{key}"


def result(key: str) -> str:
    """A unit's first result, written once (SET NX): repeats read this one back."""
    return f"{PREFIX}result:{key}"


def in_flight(key: str) -> str:
    """Held by the API replica that dispatched a unit, so other replicas wait instead.
    Its value names that replica: the claim counts while the replica's lease lives."""
    return f"{PREFIX}inflight:{key}"


def replica_lease(replica: str) -> str:
    """Exists while an API replica lives: it refreshes the key's short TTL (see `presence`)."""
    return f"{PREFIX}replica:{replica}"


def session_holder(holder: str) -> str:
    """Exists while an API replica holds tool sessions: its lease (`session_routing`)."""
    return f"{PREFIX}sessions:holder:{holder}"


def session_requests(holder: str) -> str:
    """List of requests (JSON) other replicas send to the sessions a replica holds."""
    return f"{PREFIX}sessions:requests:{holder}"


def session_reply(asker: str, request: str) -> str:
    """Where a holder pushes its answer to one request of another replica."""
    return f"{PREFIX}sessions:reply:{asker}:{request}"


RESULT_TTL_S = 600
REPLY_TTL_S = 3600
