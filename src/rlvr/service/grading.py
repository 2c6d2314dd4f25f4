"""Turns a grade request into units, grades each distinct unit once, and assembles rewards.

Validation happens first and completely: one bad item rejects the request before any
grading starts. Then units are deduplicated (the G responses of a GRPO group often
repeat), looked up in the verdict cache, joined to identical units already in flight
from other requests, and only the rest reach the dispatcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter as TallyCounter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from rlvr.service.cache import VerdictCache
from rlvr.service.coalesce import Coalescer
from rlvr.service.dispatch import Dispatcher
from rlvr.service.errors import BadRequest, Overloaded
from rlvr.service.groups import apply_group_stats
from rlvr.service.metrics import Metrics
from rlvr.service.models import UNION_TAGS, GradeItem, GradeRequest, GradeResponse, GradeResult, GradeStats
from rlvr.service.settings import Settings
from rlvr.service.work import Unit, UnitResult, canonical_json, infrastructure_failure, prepared_key, unit_key
from rlvr.verifiers.base import Verdict
from rlvr.verifiers.errors import PluginError, UnknownVerifier
from rlvr.verifiers.registry import LoadedVerifier, Registry

MAX_ERRORS_LISTED = 20
INLINE_PLAN_ITEMS = 8


def format_loc(prefix: str, loc: Sequence[Any]) -> str:
    out = prefix
    for part in loc:
        if part in UNION_TAGS:
            continue
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validation_messages(prefix: str, exc: ValidationError) -> list[str]:
    return [f"{format_loc(prefix, e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)]


@dataclass(slots=True)
class _Component:
    label: str
    weight: float
    unit: Unit


@dataclass(slots=True)
class _PlannedItem:
    item: GradeItem
    components: list[_Component]


@dataclass(slots=True)
class _Ref:
    """One verifier an item names, and where it and its params are in the request."""

    where: str
    name: str
    weight: float
    params: Any
    params_where: str
    ground_truth_json: str | None


@dataclass(slots=True)
class _Checked:
    """Params and ground truth that passed their verifier's models, as canonical JSON data."""

    prep_key: str
    params: Any
    ground_truth: Any


class _Planner:
    """Turns a request's items into units, noting every error instead of stopping at the first."""

    def __init__(self, registry: Registry, deadline: Callable[[float | None], float]) -> None:
        self.registry = registry
        self.deadline = deadline
        self.errors: list[str] = []
        # Items of one prompt group share params and ground truth: validate each distinct pair once.
        self._checked: dict[tuple[str, str, str], _Checked | None] = {}

    def plan(self, items: Sequence[GradeItem], ground_truths: Sequence[str | None]) -> list[_PlannedItem]:
        """Units of every item, given each item's ground truth as canonical JSON (None:
        not serialisable)."""
        planned: list[_PlannedItem] = []
        for index, item in enumerate(items):
            where = f"items[{index}]"
            refs = self._refs(where, item, ground_truths[index])
            if refs is not None:
                planned.append(_PlannedItem(item, self._components(where, item, refs)))
            if len(self.errors) >= MAX_ERRORS_LISTED:
                break
        if self.errors:
            shown = self.errors[:MAX_ERRORS_LISTED]
            raise BadRequest("; ".join(shown), details={"errors": shown})
        return planned

    def _refs(self, where: str, item: GradeItem, gt_json: str | None) -> list[_Ref] | None:
        if isinstance(item.verifier, str):
            return [_Ref(f"{where}.verifier", item.verifier, 1.0, item.params, f"{where}.params", gt_json)]
        if not item.verifier:
            self.errors.append(f"{where}.verifier: the verifier list is empty")
            return None
        if item.params:
            self.errors.append(f"{where}.params: with a list of verifiers, give params inside each entry")
            return None
        return [
            _Ref(f"{where}.verifier[{j}]", ref.name, ref.weight, ref.params, f"{where}.verifier[{j}].params", gt_json)
            for j, ref in enumerate(item.verifier)
        ]

    def _components(self, where: str, item: GradeItem, refs: list[_Ref]) -> list[_Component]:
        components: list[_Component] = []
        # A verifier named twice scores under `name` and `name#2`.
        seen: TallyCounter[str] = TallyCounter()
        for ref in refs:
            unit = self._unit(where, item, ref)
            if unit is None:
                continue
            seen[ref.name] += 1
            label = ref.name if seen[ref.name] == 1 else f"{ref.name}#{seen[ref.name]}"
            components.append(_Component(label, ref.weight, unit))
        return components

    def _unit(self, where: str, item: GradeItem, ref: _Ref) -> Unit | None:
        try:
            loaded = self.registry.get(ref.name)
        except (UnknownVerifier, PluginError) as exc:
            self.errors.append(f"{ref.where}: {exc.message}")
            return None
        checked = self._check(where, item, ref, loaded)
        if checked is None:
            return None
        return Unit(
            key=unit_key(checked.prep_key, item.prompt, item.response),
            prep_key=checked.prep_key,
            verifier=ref.name,
            params=checked.params,
            ground_truth=checked.ground_truth,
            prompt=item.prompt,
            response=item.response,
            deadline_s=self.deadline(loaded.default_deadline_s),
        )

    def _check(self, where: str, item: GradeItem, ref: _Ref, loaded: LoadedVerifier) -> _Checked | None:
        try:
            params_json = canonical_json(ref.params)
            gt_json = ref.ground_truth_json if ref.ground_truth_json is not None else canonical_json(item.ground_truth)
        except (TypeError, ValueError) as exc:
            self.errors.append(f"{where}: not JSON-serialisable: {exc}")
            return None
        memo_key = (ref.name, params_json, gt_json)
        if memo_key in self._checked:
            checked = self._checked[memo_key]
            if checked is None:
                self.errors.append(f"{where}: same invalid params or ground_truth as an earlier item")
            return checked
        valid = self._validate(where, item, ref, loaded)
        checked = None
        if valid is not None:
            checked = _Checked(prepared_key(ref.name, loaded.version, params_json, gt_json), *valid)
        self._checked[memo_key] = checked
        return checked

    def _validate(self, where: str, item: GradeItem, ref: _Ref, loaded: LoadedVerifier) -> tuple[Any, Any] | None:
        """(params, ground truth) as JSON data once their models accept them."""
        try:
            params = loaded.params_adapter.validate_python(ref.params)
        except ValidationError as exc:
            self.errors.extend(validation_messages(ref.params_where, exc))
            return None
        try:
            ground_truth = loaded.ground_truth_adapter.validate_python(item.ground_truth)
        except ValidationError as exc:
            self.errors.extend(validation_messages(f"{where}.ground_truth", exc))
            return None
        return (
            loaded.params_adapter.dump_python(params, mode="json"),
            loaded.ground_truth_adapter.dump_python(ground_truth, mode="json"),
        )


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
            return request.deadline_s
        return min(default or self.settings.default_deadline_s, self.settings.max_deadline_s)

    def plan(self, request: GradeRequest) -> list[_PlannedItem]:
        """Every item as units; BadRequest naming the items and fields when any is invalid."""
        if len(request.items) > self.settings.max_items:
            raise BadRequest(f"items: {len(request.items)} items exceed the limit of {self.settings.max_items}")
        if not request.items:
            raise BadRequest("items: at least one item is required")
        _check_groups(request)
        ground_truths = self._check_cost(request.items)
        planner = _Planner(self.registry, lambda default: self._deadline(request, default))
        return planner.plan(request.items, ground_truths)

    def _check_cost(self, items: Sequence[GradeItem]) -> list[str | None]:
        """Each item's ground truth as canonical JSON, once the request's planning cost is
        known to be within the limits (else BadRequest): a few items can name one verifier
        many times over a large ground truth or response."""
        refs = sum(1 if isinstance(item.verifier, str) else len(item.verifier) for item in items)
        if refs > self.settings.max_verifier_refs:
            raise BadRequest(
                f"items: {refs} verifier references exceed the limit of {self.settings.max_verifier_refs} per request"
            )
        ground_truths: list[str | None] = []
        cost = 0
        for item in items:
            try:
                gt_json: str | None = canonical_json(item.ground_truth)
            except (TypeError, ValueError):
                gt_json = None  # the planner reports it
            ground_truths.append(gt_json)
            item_refs = 1 if isinstance(item.verifier, str) else len(item.verifier)
            cost += item_refs * (len(item.response) + len(gt_json or ""))
            if cost > self.settings.max_planning_chars:
                raise BadRequest(
                    f"items: verifier references times (response + ground truth) characters exceed the limit of "
                    f"{self.settings.max_planning_chars} per request"
                )
        return ground_truths

    async def plan_off_loop(self, request: GradeRequest) -> list[_PlannedItem]:
        if len(request.items) <= INLINE_PLAN_ITEMS:
            # A few items plan faster than a thread hop takes (verl and OpenRLHF send one).
            return self.plan(request)
        async with self._planning:
            return await asyncio.get_running_loop().run_in_executor(None, self.plan, request)

    # ---- grading ----------------------------------------------------------------------

    async def grade(self, request: GradeRequest) -> GradeResponse:
        started = time.perf_counter()
        planned = await self.plan_off_loop(request)
        unique = _distinct_units(planned)
        with self._admitted(len(unique)):
            results, hits, dispatched = await self._resolve(unique)
        out = [self._assemble(p, results, hits) for p in planned]
        groups = apply_group_stats(out, request.advantage)
        stats = GradeStats(
            items=len(out),
            unique=len(unique),
            cache_hits=len(hits),
            dispatched=dispatched,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            verdicts=dict(TallyCounter(r.verdict.value for r in out)),
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
        if not self.dispatcher.stores_verdicts:
            await self.cache.set_many({u.key: r for u, r in zip(units, fresh, strict=True) if r.cacheable})

    @staticmethod
    def _assemble(p: _PlannedItem, results: dict[str, UnitResult], hits: set[str]) -> GradeResult:
        parts = [(c, results[c.unit.key]) for c in p.components]
        scores = {c.label: r.score for c, r in parts}
        mask = any(r.mask for _, r in parts)
        reward = 0.0 if mask else math.fsum(c.weight * r.score for c, r in parts)
        verdict = _combine_verdicts(parts)
        if len(parts) == 1:
            reason, details = parts[0][1].reason, parts[0][1].details
        else:
            reason = "; ".join(f"{c.label}: {r.reason}" for c, r in parts if r.reason)
            details = {c.label: r.details for c, r in parts}
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


def _distinct_units(planned: list[_PlannedItem]) -> dict[str, Unit]:
    """Each distinct unit once, in order of first appearance (which also supplies its deadline)."""
    unique: dict[str, Unit] = {}
    for p in planned:
        for c in p.components:
            unique.setdefault(c.unit.key, c.unit)
    return unique


def _combine_verdicts(parts: list[tuple[_Component, UnitResult]]) -> str:
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
