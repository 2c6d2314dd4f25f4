"""Turns a grade request into units, grades each distinct unit once, and assembles rewards.

Validation happens first and completely: one bad item rejects the request before any
grading starts. Then units are deduplicated (the G responses of a GRPO group often
repeat), looked up in the verdict cache, joined to identical units already in flight
from other requests, and only the rest reach the dispatcher.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter as TallyCounter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from rlvr.service.cache import VerdictCache
from rlvr.service.dispatch import Dispatcher
from rlvr.service.errors import BadRequest, Overloaded
from rlvr.service.metrics import Metrics
from rlvr.service.models import UNION_TAGS, GradeItem, GradeRequest
from rlvr.service.settings import Settings
from rlvr.service.work import Unit, UnitResult, canonical_json, infrastructure_failure, prepared_key, unit_key
from rlvr.verifiers.base import Verdict
from rlvr.verifiers.errors import PluginError, UnknownVerifier
from rlvr.verifiers.registry import Registry

MAX_ERRORS_LISTED = 20


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


class Grader:
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
        self._in_flight: dict[str, asyncio.Future[UnitResult]] = {}

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
        if len(request.items) > self.settings.max_items:
            raise BadRequest(f"items: {len(request.items)} items exceed the limit of {self.settings.max_items}")
        if not request.items:
            raise BadRequest("items: at least one item is required")
        errors: list[str] = []
        planned: list[_PlannedItem] = []
        # Items of one prompt group share params and ground truth: validate each distinct pair once.
        validated: dict[tuple[str, str, str], tuple[str, Any, Any] | None] = {}
        for index, item in enumerate(request.items):
            where = f"items[{index}]"
            if isinstance(item.verifier, str):
                refs = [(f"{where}.verifier", item.verifier, 1.0, item.params, f"{where}.params")]
            else:
                if not item.verifier:
                    errors.append(f"{where}.verifier: the verifier list is empty")
                    continue
                if item.params:
                    errors.append(f"{where}.params: with a list of verifiers, give params inside each entry")
                    continue
                refs = [
                    (f"{where}.verifier[{j}]", ref.name, ref.weight, ref.params, f"{where}.verifier[{j}].params")
                    for j, ref in enumerate(item.verifier)
                ]
            components: list[_Component] = []
            labels: TallyCounter[str] = TallyCounter()
            for ref_where, name, weight, params, params_where in refs:
                try:
                    loaded = self.registry.get(name)
                except (UnknownVerifier, PluginError) as exc:
                    errors.append(f"{ref_where}: {exc.message}")
                    continue
                try:
                    params_json = canonical_json(params)
                    gt_json = canonical_json(item.ground_truth)
                except (TypeError, ValueError) as exc:
                    errors.append(f"{where}: not JSON-serialisable: {exc}")
                    continue
                memo_key = (name, params_json, gt_json)
                if memo_key not in validated:
                    validated[memo_key] = None
                    try:
                        params_obj = loaded.params_adapter.validate_python(params)
                    except ValidationError as exc:
                        errors.extend(validation_messages(params_where, exc))
                        continue
                    try:
                        gt_obj = loaded.ground_truth_adapter.validate_python(item.ground_truth)
                    except ValidationError as exc:
                        errors.extend(validation_messages(f"{where}.ground_truth", exc))
                        continue
                    validated[memo_key] = (
                        prepared_key(name, loaded.version, params_json, gt_json),
                        loaded.params_adapter.dump_python(params_obj, mode="json"),
                        loaded.ground_truth_adapter.dump_python(gt_obj, mode="json"),
                    )
                entry = validated[memo_key]
                if entry is None:
                    errors.append(f"{where}: same invalid params or ground_truth as an earlier item")
                    continue
                prep, params_clean, gt_clean = entry
                labels[name] += 1
                label = name if labels[name] == 1 else f"{name}#{labels[name]}"
                unit = Unit(
                    key=unit_key(prep, item.response),
                    prep_key=prep,
                    verifier=name,
                    params=params_clean,
                    ground_truth=gt_clean,
                    prompt=item.prompt,
                    response=item.response,
                    deadline_s=self._deadline(request, loaded.default_deadline_s),
                )
                components.append(_Component(label, weight, unit))
            planned.append(_PlannedItem(item, components))
            if len(errors) >= MAX_ERRORS_LISTED:
                break
        if errors:
            shown = errors[:MAX_ERRORS_LISTED]
            raise BadRequest("; ".join(shown), details={"errors": shown})
        return planned

    # ---- grading ----------------------------------------------------------------------

    async def grade(self, request: GradeRequest) -> dict[str, Any]:
        started = time.perf_counter()
        planned = self.plan(request)
        unique: dict[str, Unit] = {}
        for p in planned:
            for c in p.components:
                unique.setdefault(c.unit.key, c.unit)
        if self.in_flight_units + len(unique) > self.settings.max_in_flight:
            self.metrics.rejected.labels("overloaded").inc()
            raise Overloaded(
                f"{self.in_flight_units} items in flight; this request's {len(unique)} would pass the limit "
                f"of {self.settings.max_in_flight}",
                retry_after_s=1.0,
            )
        self.in_flight_units += len(unique)
        self.metrics.in_flight.inc(len(unique))
        try:
            results, hits, dispatched = await self._resolve(unique)
        finally:
            self.in_flight_units -= len(unique)
            self.metrics.in_flight.dec(len(unique))
        out = [self._assemble(p, results, hits) for p in planned]
        verdicts = TallyCounter(r["verdict"] for r in out)
        return {
            "results": out,
            "stats": {
                "items": len(out),
                "unique": len(unique),
                "cache_hits": len(hits),
                "dispatched": dispatched,
                "elapsed_ms": (time.perf_counter() - started) * 1000.0,
                "verdicts": dict(verdicts),
            },
        }

    async def _resolve(self, unique: dict[str, Unit]) -> tuple[dict[str, UnitResult], set[str], int]:
        cached = await self.cache.get_many(unique)
        self.metrics.cache_hits.inc(len(cached))
        self.metrics.cache_misses.inc(len(unique) - len(cached))
        results: dict[str, UnitResult] = dict(cached)
        waiting: dict[str, asyncio.Future[UnitResult]] = {}
        mine: list[Unit] = []
        loop = asyncio.get_running_loop()
        for key, unit in unique.items():
            if key in results:
                continue
            other = self._in_flight.get(key)
            if other is not None:
                waiting[key] = other
            else:
                self._in_flight[key] = loop.create_future()
                mine.append(unit)
        try:
            if mine:
                fresh = await self.dispatcher.run(mine)
                for unit, res in zip(mine, fresh, strict=True):
                    results[unit.key] = res
                    self.metrics.items.labels(unit.verifier, res.verdict).inc()
                    self.metrics.latency.labels(unit.verifier).observe(res.elapsed_ms / 1000.0)
                if not getattr(self.dispatcher, "stores_verdicts", False):
                    await self.cache.set_many({k: r for k, r in results.items() if k not in cached and r.cacheable})
        except BaseException as exc:
            failure = infrastructure_failure(f"dispatch failed: {type(exc).__name__}: {exc}")
            for unit in mine:
                results.setdefault(unit.key, failure)
            raise
        finally:
            for unit in mine:
                fut = self._in_flight.pop(unit.key, None)
                if fut is not None and not fut.done():
                    fut.set_result(results.get(unit.key, infrastructure_failure("dispatch did not complete")))
        for key, fut in waiting.items():
            results[key] = await asyncio.shield(fut)
        return results, set(cached), len(mine)

    @staticmethod
    def _assemble(p: _PlannedItem, results: dict[str, UnitResult], hits: set[str]) -> dict[str, Any]:
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
        return {
            "id": p.item.id,
            "reward": reward if math.isfinite(reward) else 0.0,
            "verdict": verdict,
            "mask": mask,
            "scores": scores,
            "reason": reason,
            "details": details,
            "cached": all(c.unit.key in hits for c, _ in parts),
            "elapsed_ms": math.fsum(r.elapsed_ms for _, r in parts),
            "group": p.item.group,
        }


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
