"""Turns a grade request into units, grades each distinct unit once, and assembles rewards.

Planning (`rlvr.service.planning`) happens first and completely: a request at fault is
refused before any grading starts, and an item whose params or ground truth its
verifier refuses is answered masked, without grading, while the rest are graded. Then
units are deduplicated (the G responses of a GRPO group often repeat), looked up in the
verdict cache, joined to identical units already in flight from other requests, and only
the rest reach the dispatcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter as TallyCounter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from rlvr.service.cache import VerdictCache
from rlvr.service.coalesce import Coalescer
from rlvr.service.dispatch import Dispatcher
from rlvr.service.errors import BadRequest, Overloaded
from rlvr.service.groups import apply_group_stats
from rlvr.service.metrics import Metrics
from rlvr.service.models import (
    GradeItem,
    GradeRequest,
    GradeResponse,
    GradeResult,
    GradeStats,
    InvalidItem,
    ValidateResponse,
)
from rlvr.service.planning import MAX_ERRORS_LISTED, MAX_ITEM_ERRORS_LISTED, Component, PlannedItem, Planner
from rlvr.service.settings import Settings
from rlvr.service.work import Canonical, Unit, UnitResult, canonical, infrastructure_failure
from rlvr.verifiers.base import Verdict
from rlvr.verifiers.registry import Registry

# The components of a composite item whose reasons and details its answer holds.
MAX_COMPONENTS_TOLD = 8


class Grader:
    """Grades requests: plans units, admits them against `max_in_flight`, resolves each
    distinct unit once (cache, then units in flight, then the dispatcher) and assembles
    one result per item."""

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        dispatcher: Dispatcher,
        cache: VerdictCache,
        metrics: Metrics,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.dispatcher = dispatcher
        self.cache = cache
        self.metrics = metrics
        self.in_flight_units = 0
        self._coalescer = Coalescer(dispatcher)
        self._in_flight: dict[tuple[str, float], asyncio.Future[UnitResult | None]] = {}
        # Planning a large request is CPU work: it runs in threads, a few at a time, so
        # that the event loop (health checks included) keeps answering meanwhile.
        self._planning = asyncio.Semaphore(settings.planning_concurrency)

    # ---- validation -------------------------------------------------------------------

    def _deadline(self, request: GradeRequest, default: float | None) -> float:
        if request.deadline_s is not None:
            if request.deadline_s > self.settings.max_deadline_s:
                raise BadRequest(
                    f"deadline_s: {request.deadline_s:g} exceeds the server maximum of "
                    f"{self.settings.max_deadline_s:g}s"
                )
            if request.deadline_s < self.settings.min_deadline_s:
                raise BadRequest(
                    f"deadline_s: {request.deadline_s:g} is below the server minimum of "
                    f"{self.settings.min_deadline_s:g}s, the least in which it can start an item"
                )
            return request.deadline_s
        return min(default or self.settings.default_deadline_s, self.settings.max_deadline_s)

    def plan(self, request: GradeRequest) -> list[PlannedItem]:
        """Every item as units; BadRequest naming the items and fields when any is invalid."""
        if len(request.items) > self.settings.max_items:
            raise BadRequest(f"items: {len(request.items)} items exceed the limit of {self.settings.max_items}")
        if not request.items:
            raise BadRequest("items: at least one item is required")
        _check_groups(request)
        ground_truths = self._check_cost(request.items)
        planner = Planner(self.registry, lambda default: self._deadline(request, default), request.strict)
        return planner.plan(request.items, ground_truths)

    def _check_cost(self, items: Sequence[GradeItem]) -> list[Canonical | None]:
        """Each item's ground truth as the keys see it, once the request's planning cost is
        known to be within the limits (else BadRequest): a few items can name one verifier
        many times over a large ground truth or response."""
        refs = sum(1 if isinstance(item.verifier, str) else len(item.verifier) for item in items)
        if refs > self.settings.max_verifier_refs:
            raise BadRequest(
                f"items: {refs} verifier references exceed the limit of {self.settings.max_verifier_refs} per request"
            )
        ground_truths: list[Canonical | None] = []
        # A group's items share one ground truth object (the body's reader gives equal
        # values one): its canonical JSON is built once.
        by_object: dict[int, Canonical | None] = {}
        cost = 0
        for item in items:
            found = id(item.ground_truth)
            if found not in by_object:
                by_object[found] = _canonical_or_none(item.ground_truth)
            truth = by_object[found]
            ground_truths.append(truth)
            item_refs = 1 if isinstance(item.verifier, str) else len(item.verifier)
            cost += item_refs * (len(item.response) + (truth.size if truth else 0))
            if cost > self.settings.max_planning_chars:
                raise BadRequest(
                    f"items: verifier references times (response + ground truth) characters exceed the limit of "
                    f"{self.settings.max_planning_chars} per request"
                )
        return ground_truths

    async def plan_off_loop(self, request: GradeRequest, small: bool) -> list[PlannedItem]:
        """`small`: the request came in a body small enough to plan faster than a thread
        hop takes (verl and OpenRLHF send one item); a few items can still be a large
        ground truth, so it is the body's size that decides."""
        if small:
            return self.plan(request)
        async with self._planning:
            return await asyncio.get_running_loop().run_in_executor(None, self.plan, request)

    async def validate(self, request: GradeRequest, small: bool = False) -> ValidateResponse:
        """The items `grade` would mask as invalid, without grading any (`small`: see
        `plan_off_loop`)."""
        planned = await self.plan_off_loop(request.model_copy(update={"strict": False}), small)
        invalid = [
            InvalidItem(index=i, id=p.item.id, verifier=p.invalid_verifier, errors=p.invalid[:MAX_ITEM_ERRORS_LISTED])
            for i, p in enumerate(planned)
            if p.invalid
        ]
        return ValidateResponse(valid=not invalid, items=len(planned), invalid=invalid)

    # ---- grading ----------------------------------------------------------------------

    async def grade(self, request: GradeRequest, small: bool = False) -> GradeResponse:
        """The graded answer (`small`: see `plan_off_loop`)."""
        started = time.perf_counter()
        planned = await self.plan_off_loop(request, small)
        unique = _distinct_units(planned)
        with self._admitted(len(unique)):
            results, hits, dispatched = await self._resolve(unique)
        out = [self._assemble(p, results, hits) for p in planned]
        groups = apply_group_stats(out, request.advantage)
        invalid = self._count_invalid(planned)
        stats = GradeStats(
            items=len(out),
            invalid=invalid,
            unique=len(unique),
            cache_hits=len(hits),
            dispatched=dispatched,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            verdicts=dict(TallyCounter(r.verdict.value for r in out)),
            signals=dict(TallyCounter(name for r in out for name in r.signals)),
            groups=groups,
        )
        return GradeResponse(results=out, stats=stats)

    @contextlib.contextmanager
    def _admitted(self, units: int) -> Iterator[None]:
        """Counts `units` as in flight while they are graded; Overloaded past the limit."""
        if self.in_flight_units + units > self.settings.max_in_flight:
            self.metrics.rejected.labels("overloaded").inc()
            raise Overloaded(
                f"{self.in_flight_units} items in flight; this request's {units} would pass the limit "
                f"of {self.settings.max_in_flight}",
                retry_after_s=1.0,
            )
        self.in_flight_units += units
        self.metrics.in_flight.inc(units)
        try:
            yield
        finally:
            self.in_flight_units -= units
            self.metrics.in_flight.dec(units)

    async def _resolve(self, unique: dict[str, Unit]) -> tuple[dict[str, UnitResult], set[str], int]:
        """Results of every unit, the keys served from the cache, and how many were dispatched."""
        cached = await self.cache.get_many(unique)
        self.metrics.cache_lookups(hits=len(cached), misses=len(unique) - len(cached))
        results: dict[str, UnitResult] = dict(cached)
        todo = [u for k, u in unique.items() if k not in cached]
        dispatched = 0
        while todo:
            mine, waiting = self._join_in_flight(todo)
            await self._dispatch_own(mine, results)
            dispatched += len(mine)
            todo = []
            for key, fut in waiting.items():
                shared = await asyncio.shield(fut)
                if shared is None:
                    todo.append(unique[key])  # its request left before it was graded: ours to grade
                else:
                    results[key] = shared
        return results, set(cached), dispatched

    async def _dispatch_own(self, mine: list[Unit], results: dict[str, UnitResult]) -> None:
        """Dispatch the units this request took, and hand their results to the requests
        waiting for them. A failed dispatch is every one's failure; a dispatch cut
        short because this request was cancelled (its client left) is nobody's: the
        units go to the others as None, and the first of them dispatches them again."""
        try:
            if mine:
                await self._dispatch(mine, results)
        except Exception as exc:
            failure = infrastructure_failure(f"dispatch failed: {type(exc).__name__}: {exc}")
            for unit in mine:
                results.setdefault(unit.key, failure)
            raise
        finally:
            for unit in mine:
                fut = self._in_flight.pop(_flight_key(unit), None)
                if fut is not None and not fut.done():
                    fut.set_result(results.get(unit.key))

    def _join_in_flight(self, units: Iterable[Unit]) -> tuple[list[Unit], dict[str, asyncio.Future[UnitResult | None]]]:
        """Units this request dispatches, and futures of those another request already is."""
        loop = asyncio.get_running_loop()
        mine: list[Unit] = []
        waiting: dict[str, asyncio.Future[UnitResult | None]] = {}
        for unit in units:
            other = self._in_flight.get(_flight_key(unit))
            if other is not None:
                waiting[unit.key] = other
            else:
                self._in_flight[_flight_key(unit)] = loop.create_future()
                mine.append(unit)
        return mine, waiting

    async def _dispatch(self, units: list[Unit], results: dict[str, UnitResult]) -> None:
        fresh = await self._coalescer.run(units)
        for unit, res in zip(units, fresh, strict=True):
            results[unit.key] = res
            self.metrics.items.labels(unit.verifier, res.verdict).inc()
            self.metrics.latency.labels(unit.verifier).observe(res.elapsed_ms / 1000.0)
            for name in res.signals:
                self.metrics.signals.labels(unit.verifier, name).inc()
        if not self.dispatcher.stores_verdicts:
            await self.cache.set_many({u.key: r for u, r in zip(units, fresh, strict=True) if r.cacheable})

    def _count_invalid(self, planned: list[PlannedItem]) -> int:
        invalid = [p for p in planned if p.invalid]
        for p in invalid:
            self.metrics.invalid_items.labels(p.invalid_verifier).inc()
        return len(invalid)

    @staticmethod
    def _assemble(p: PlannedItem, results: dict[str, UnitResult], hits: set[str]) -> GradeResult:
        if p.invalid:
            return _invalid_result(p)
        parts = [(c, results[c.unit.key]) for c in p.components]
        scores = {c.label: r.score for c, r in parts}
        mask = any(r.mask for _, r in parts)
        reward = 0.0 if mask else math.fsum(c.weight * r.score for c, r in parts)
        verdict = _combine_verdicts(parts)
        if len(parts) == 1:
            reason, details = parts[0][1].reason, parts[0][1].details
        else:
            # An item may name 50,000 references to one unit: its answer tells of the first
            # few, each of which is bounded (`work.bounded_details`), and scores them all.
            told = parts[:MAX_COMPONENTS_TOLD]
            reason = "; ".join(f"{c.label}: {r.reason}" for c, r in told if r.reason)
            details = {c.label: r.details for c, r in told}
            if len(parts) > len(told):
                details["details_truncated"] = True
        return GradeResult(
            id=p.item.id,
            reward=reward if math.isfinite(reward) else 0.0,
            verdict=verdict,
            mask=mask,
            scores=scores,
            reason=reason,
            details=details,
            cached=all(c.unit.key in hits for c, _ in parts),
            elapsed_ms=math.fsum(r.elapsed_ms for _, r in parts),
            group=p.item.group,
            advantage=None,
            agreement=None,
            signals=_signals(parts),
        )


def _signals(parts: list[tuple[Component, UnitResult]]) -> list[str]:
    """The item's signals: each that any of its units raised, once, in order."""
    if len(parts) == 1:
        return list(parts[0][1].signals)
    return list(dict.fromkeys(name for _, r in parts for name in r.signals))


def _invalid_result(p: PlannedItem) -> GradeResult:
    """An item its verifier's models refused: masked, since a broken dataset row says
    nothing of the response, with the fields named."""
    shown = p.invalid[:MAX_ITEM_ERRORS_LISTED]
    return GradeResult(
        id=p.item.id,
        reward=0.0,
        verdict=Verdict.ERROR,
        mask=True,
        reason=f"invalid item: {shown[0]}"
        + (f" (and {len(shown) - 1} more in details.invalid)" if len(shown) > 1 else ""),
        details={"invalid": shown},
        group=p.item.group,
    )


def _check_groups(request: GradeRequest) -> None:
    """An advantage is relative to a group: with `advantage`, every item needs one."""
    if request.advantage is None:
        return
    missing = [i for i, item in enumerate(request.items) if item.group is None]
    if missing:
        shown = [f"items[{i}].group: required when advantage is set" for i in missing[:MAX_ERRORS_LISTED]]
        raise BadRequest("; ".join(shown), details={"errors": shown})


def _flight_key(unit: Unit) -> tuple[str, float]:
    """Units graded once for every request that has them in flight together: the same
    verdict-cache key and the same deadline (a timeout under one deadline says nothing
    of another)."""
    return unit.key, unit.deadline_s


def _distinct_units(planned: list[PlannedItem]) -> dict[str, Unit]:
    """Each distinct unit once, in order of first appearance (which also supplies its deadline)."""
    unique: dict[str, Unit] = {}
    for p in planned:
        for c in p.components:
            unique.setdefault(c.unit.key, c.unit)
    return unique


def _combine_verdicts(parts: list[tuple[Component, UnitResult]]) -> str:
    """One verdict for a composite: failures first, then all-or-nothing, else partial."""
    verdicts = [r.verdict for _, r in parts]
    if len(parts) == 1:
        return verdicts[0]
    for severe in (Verdict.ERROR.value, Verdict.TIMEOUT.value):
        if severe in verdicts:
            return severe
    primary = max(parts, key=lambda cr: cr[0].weight)[1]
    if all(r.score >= 1.0 for _, r in parts):
        return Verdict.CORRECT.value
    if all(r.score <= 0.0 for _, r in parts):
        return Verdict.NO_ANSWER.value if primary.verdict == Verdict.NO_ANSWER.value else Verdict.INCORRECT.value
    return Verdict.PARTIAL.value


def _canonical_or_none(value: Any) -> Canonical | None:
    try:
        return canonical(value)
    except (TypeError, ValueError):
        return None  # the planner reports it
