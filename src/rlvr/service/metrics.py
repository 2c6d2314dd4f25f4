"""Prometheus metrics, one registry per app so that tests can run several apps."""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.items = Counter("rlvr_items", "Graded units by verifier and verdict", ["verifier", "verdict"], registry=r)
        self.latency = Histogram(
            "rlvr_verify_seconds", "Verification time per unit", ["verifier"], buckets=LATENCY_BUCKETS_S, registry=r
        )
        self.cache_hits = Counter("rlvr_cache_hits", "Verdict cache hits", registry=r)
        self.cache_misses = Counter("rlvr_cache_misses", "Verdict cache misses", registry=r)
        self.in_flight = Gauge("rlvr_in_flight_items", "Units being graded now", registry=r)
        self.requests = Counter("rlvr_grade_requests", "Grade requests by HTTP status", ["status"], registry=r)
        self.worker_restarts = Counter(
            "rlvr_worker_restarts", "Verifier worker processes replaced", ["reason"], registry=r
        )
        self.queue_depth = Gauge("rlvr_queue_depth", "Entries on the Redis job stream", registry=r)
        self.queue_pending = Gauge("rlvr_queue_pending", "Entries delivered to workers, not yet acked", registry=r)
        self.queue_lag = Gauge("rlvr_queue_lag", "Entries not yet delivered to any worker", registry=r)
        self.reclaimed = Gauge("rlvr_reclaimed_entries", "Entries reclaimed from dead workers (all time)", registry=r)
        self.dead_lettered = Gauge("rlvr_dead_lettered_entries", "Entries moved to the dead-letter stream", registry=r)
        self.cache_hit_ratio = Gauge("rlvr_cache_hit_ratio", "Cache hits / lookups since start", registry=r)
        self.invalid_items = Counter(
            "rlvr_invalid_items",
            "Items masked without grading: their verifier refused their params or ground truth",
            ["verifier"],
            registry=r,
        )
        self.signals = Counter(
            "rlvr_signals",
            "Graded units that raised a signal (what the response tried that its verifier guards against)",
            ["verifier", "signal"],
            registry=r,
        )
        self.rejected = Counter("rlvr_rejected_requests", "Requests refused before grading", ["reason"], registry=r)
        self.sessions_live = Gauge("rlvr_sessions_live", "Tool sessions this replica holds", registry=r)
        self.sessions_opened = Gauge("rlvr_sessions_opened", "Tool sessions opened here (all time)", registry=r)
        self.sessions_reaped = Gauge("rlvr_sessions_reaped", "Tool sessions ended idle (all time)", registry=r)
        self.session_calls = Gauge(
            "rlvr_session_calls", "Session calls answered, by status (all time)", ["status"], registry=r
        )
        self._cache_hits_total = 0
        self._cache_lookups_total = 0

    def sessions(self, stats: Mapping[str, int | str], calls: Mapping[str, int]) -> None:
        """Copies the session table's counts into the gauges."""
        self.sessions_live.set(int(stats["live"]))
        self.sessions_opened.set(int(stats["opened"]))
        self.sessions_reaped.set(int(stats["reaped"]))
        for status, count in calls.items():
            self.session_calls.labels(status).set(count)

    def cache_lookups(self, hits: int, misses: int) -> None:
        """Counts verdict cache lookups and keeps the hit ratio since start current."""
        self.cache_hits.inc(hits)
        self.cache_misses.inc(misses)
        self._cache_hits_total += hits
        self._cache_lookups_total += hits + misses
        if self._cache_lookups_total:
            self.cache_hit_ratio.set(self._cache_hits_total / self._cache_lookups_total)
