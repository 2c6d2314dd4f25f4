"""The unit of work and how a worker process executes it.

A *unit* is one (verifier, params, ground truth, response) to verify: an item with a
composite verifier is several units. Units travel to worker processes (embedded pool
or Redis stream) as plain JSON-able data, and results come back the same way, so the
same code serves every dispatcher.
"""

from __future__ import annotations

import hashlib
import math
import time
import traceback
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import msgspec

from rlvr.verifiers.base import BatchEntry, Details, GradeInput, Outcome, Verdict
from rlvr.verifiers.registry import LoadedVerifier, Registry

PREPARED_CACHE_ENTRIES = 4096
MAX_REASON_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Canonical:
    """A JSON value as the keys see it: the digest of its canonical JSON (keys sorted, no
    spaces) and that JSON's size. Only the digest is kept: a ground truth's canonical
    text can be several times its body's (`1.5e15` is `1500000000000000.0`)."""

    digest: bytes
    size: int


_CANONICAL = msgspec.json.Encoder(order="sorted")
# A long list is encoded this many entries at a time, and its containers' entries (to
# this depth) one at a time, so that no more than a piece of the canonical text is held.
CANONICAL_PIECE_ENTRIES = 4096
CANONICAL_PIECE_DEPTH = 3


def canonical(value: Any) -> Canonical:
    """TypeError or ValueError when `value` is not JSON data."""
    h = hashlib.blake2b(digest_size=16)
    try:
        size = _feed(h, value, CANONICAL_PIECE_DEPTH)
    except msgspec.EncodeError as exc:
        raise TypeError(str(exc)) from None
    return Canonical(h.digest(), size)


def _feed(h: Any, value: Any, depth: int) -> int:
    """Hashes `value`'s canonical JSON into `h`, a piece at a time; its size."""
    if depth and type(value) is dict and value:
        size = 1
        h.update(b"{")
        for i, key in enumerate(sorted(value)):
            head = (b"," if i else b"") + _CANONICAL.encode(key) + b":"
            h.update(head)
            size += len(head) + _feed(h, value[key], depth - 1)
        h.update(b"}")
        return size + 1
    if depth and type(value) is list and value:
        size = 1
        h.update(b"[")
        for start in range(0, len(value), CANONICAL_PIECE_ENTRIES):
            piece = value[start : start + CANONICAL_PIECE_ENTRIES]
            if start:
                h.update(b",")
                size += 1
            if len(piece) == 1:
                size += _feed(h, piece[0], depth - 1)
            else:
                text = _CANONICAL.encode(piece)
                h.update(memoryview(text)[1:-1])
                size += len(text) - 2
        h.update(b"]")
        return size + 1
    text = _CANONICAL.encode(value)
    h.update(text)
    return len(text)


def prepared_key(verifier: str, version: str, params: Canonical, ground_truth: Canonical) -> str:
    h = hashlib.blake2b(digest_size=16)
    for name in (verifier, version):
        h.update(name.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    h.update(params.digest)
    h.update(ground_truth.digest)
    return h.hexdigest()


# Texts are hashed a slice at a time: a ground truth or response can be tens of megabytes,
# and its whole encoding would be one more copy of it while a request is planned.
HASHED_SLICE_CHARS = 1 << 20


def _hash_text(h: Any, text: str, errors: str) -> None:
    for start in range(0, len(text), HASHED_SLICE_CHARS):
        h.update(text[start : start + HASHED_SLICE_CHARS].encode("utf-8", errors))


def unit_key(prep_key: str, prompt: str, response: str) -> str:
    """The verdict-cache key: (verifier, version, params, ground truth), the prompt and
    the response. The prompt, because a verifier may read it (`GradeInput.prompt`): the
    code verifier takes a HumanEval task's code from it where the ground truth has none."""
    h = hashlib.blake2b(prep_key.encode(), digest_size=20)
    for text in (prompt, response):
        h.update(b"\x1f")
        h.update(len(text).to_bytes(8, "little"))
        _hash_text(h, text, "surrogatepass")
    return h.hexdigest()


@dataclass(slots=True)
class Unit:
    key: str
    prep_key: str
    verifier: str
    params: Any
    ground_truth: Any
    prompt: str
    response: str
    deadline_s: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Unit:
        return cls(**data)


@dataclass(slots=True)
class UnitResult:
    score: float
    verdict: str
    reason: str = ""
    details: Details = field(default_factory=dict)
    mask: bool = False
    elapsed_ms: float = 0.0
    signals: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UnitResult:
        return cls(**data)

    @property
    def cacheable(self) -> bool:
        # Timeouts depend on load and masks on infrastructure: neither is a fact about the response.
        return not self.mask and self.verdict not in (Verdict.TIMEOUT.value, Verdict.ERROR.value)


def infrastructure_failure(reason: str, **details: Any) -> UnitResult:
    return UnitResult(0.0, Verdict.ERROR.value, reason, dict(details), mask=True)


def timed_out(deadline_s: float, *, cpu_s: float, wall_s: float) -> UnitResult:
    """The unit used its deadline of CPU time: a fact about the graded item (though not
    one to cache, since the deadline is the request's)."""
    return UnitResult(
        0.0,
        Verdict.TIMEOUT.value,
        f"grading used the item deadline of {deadline_s:g}s of CPU time",
        {"deadline_s": deadline_s, "cpu_s": round(cpu_s, 3), "wall_s": round(wall_s, 3)},
        mask=False,
        elapsed_ms=wall_s * 1000.0,
    )


def stalled(deadline_s: float, *, cpu_s: float, wall_s: float) -> UnitResult:
    """The grader stalled: the wall-time limit passed while little of the CPU deadline
    was used, so the item is not to blame."""
    return infrastructure_failure(
        f"grader stalled: {cpu_s:.2f}s of CPU in {wall_s:.1f}s of wall time (deadline {deadline_s:g}s of CPU)",
        deadline_s=deadline_s,
        cpu_s=round(cpu_s, 3),
        wall_s=round(wall_s, 3),
    )


# Characters of text a unit's details may hold (each other value counts as a few): they
# come back for every verifier reference of every item, and a verifier may echo what it
# was given (the math gold, a ground truth's names) into them.
MAX_DETAILS_CHARS = 2048
_MAX_DETAILS_DEPTH = 32
_INT_RANGE = range(-(2**63), 2**64)


class _BoundedDetails:
    """Details as JSON data within MAX_DETAILS_CHARS: odd values become strings (they must
    survive JSON with allow_nan=False), long ones are cut, and `cut` says if any was."""

    def __init__(self) -> None:
        self.left = MAX_DETAILS_CHARS
        self.cut = False

    def value(self, value: Any, depth: int = 0) -> Any:
        if depth > _MAX_DETAILS_DEPTH:
            return self.text(repr(value))
        if value is None or isinstance(value, bool):
            self.left -= 1
            return value
        if isinstance(value, int):
            if value not in _INT_RANGE:
                return self.text(f"<an integer of {value.bit_length()} bits>")
            self.left -= 8
            return value
        if isinstance(value, float):
            self.left -= 8
            return value if math.isfinite(value) else repr(value)
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return dict(self._entries(((self.text(str(k)), v) for k, v in value.items()), depth))
        if isinstance(value, list | tuple):
            return [v for _, v in self._entries(((None, v) for v in value), depth)]
        return self.text(repr(value)[: MAX_DETAILS_CHARS + 1])

    def _entries(self, pairs: Iterator[tuple[Any, Any]], depth: int) -> Iterator[tuple[Any, Any]]:
        for key, entry in pairs:
            if self.left <= 0:
                self.cut = True
                return
            yield key, self.value(entry, depth + 1)

    def text(self, text: str) -> str:
        if len(text) > max(self.left, 0):
            self.cut = True
            text = text[: max(self.left, 0)] + "…"
        self.left -= max(len(text), 1)
        return text


def bounded_details(details: Any) -> dict[str, Any]:
    """A verifier's details as the service keeps them (see `_BoundedDetails`); marked
    `details_truncated` where something was cut."""
    if isinstance(details, dict) and _plain_size(details) < MAX_DETAILS_CHARS:
        # What the walk would keep, at a tenth of its cost: nothing to cut or convert.
        return {k: list(v) if type(v) is list else v for k, v in details.items()}
    bounded = _BoundedDetails()
    kept: dict[str, Any] = bounded.value(details if isinstance(details, dict) else {"value": details})
    if bounded.cut:
        kept["details_truncated"] = True
    return kept


def _plain_size(details: dict[Any, Any]) -> int:
    """What `_BoundedDetails` would charge for `details`, when it holds only string keys
    and plain values (or flat lists of them) that it keeps as they are; else past any
    bound."""
    size = 0
    for key, value in details.items():
        if type(key) is not str:
            return MAX_DETAILS_CHARS
        size += max(len(key), 1)
        for item in value if type(value) is list else (value,):
            charge = _plain_charge(item)
            if charge is None:
                return MAX_DETAILS_CHARS
            size += charge
    return size


def _plain_charge(value: Any) -> int | None:
    if value is None or type(value) is bool:
        return 1
    if type(value) is str:
        return max(len(value), 1)
    if (type(value) is int and value in _INT_RANGE) or (type(value) is float and math.isfinite(value)):
        return 8
    return None


def _result_from_outcome(outcome: Any, loaded: LoadedVerifier) -> UnitResult:
    verifier = loaded.name
    if not isinstance(outcome, Outcome):
        return infrastructure_failure(f"verifier {verifier!r} returned {type(outcome).__name__}, not an Outcome")
    score = outcome.score
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return infrastructure_failure(f"verifier {verifier!r} returned a non-finite or non-numeric score")
    if not 0.0 <= score <= 1.0:
        return infrastructure_failure(f"verifier {verifier!r} returned score {score!r} outside [0, 1]")
    try:
        verdict = Verdict(outcome.verdict).value
    except ValueError:
        return infrastructure_failure(f"verifier {verifier!r} returned unknown verdict {outcome.verdict!r}")
    details = bounded_details(outcome.details)
    return UnitResult(
        float(score),
        verdict,
        str(outcome.reason)[:MAX_REASON_CHARS],
        details,
        bool(outcome.mask) or verdict == "error",
        signals=_declared(outcome.signals, loaded.signals),
    )


def _declared(signals: Any, vocabulary: Mapping[str, Any]) -> list[str]:
    """The outcome's signals that its verifier declares, once each, in order."""
    if not vocabulary or not isinstance(signals, tuple | list):
        return []
    return [name for name in dict.fromkeys(s for s in signals if isinstance(s, str)) if name in vocabulary]


class UnitRunner:
    """Executes units in a worker process, caching the prepared ground truth."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._prepared: OrderedDict[str, tuple[Any, Any]] = OrderedDict()

    def _prepare(self, loaded: LoadedVerifier, unit: Unit) -> tuple[Any, Any]:
        hit = self._prepared.get(unit.prep_key)
        if hit is not None:
            self._prepared.move_to_end(unit.prep_key)
            return hit
        params = loaded.params_adapter.validate_python(unit.params)
        ground_truth = loaded.ground_truth_adapter.validate_python(unit.ground_truth)
        if loaded.prepare is not None:
            ground_truth = loaded.prepare(params, ground_truth)
        self._prepared[unit.prep_key] = (params, ground_truth)
        if len(self._prepared) > PREPARED_CACHE_ENTRIES:
            self._prepared.popitem(last=False)
        return params, ground_truth

    def batch_size(self, unit: Unit) -> int:
        """How many units of `unit`'s verifier may be verified together (1: alone)."""
        try:
            return self.registry.get(unit.verifier).max_batch
        except Exception:
            return 1  # `run` reports why the verifier cannot be had

    def run_batch(self, units: Sequence[Unit]) -> list[UnitResult | None]:
        """Units of one batching verifier, verified together; None for a unit that is to
        be verified alone with `run` (the verifier said so, or its preparation or the
        batch failed: `run` then reports the failure as its own)."""
        started = time.perf_counter()
        results: list[UnitResult | None] = [None] * len(units)
        entries: list[BatchEntry] = []
        where: list[int] = []
        try:
            loaded = self.registry.get(units[0].verifier)
            assert loaded.verify_many is not None
            for index, unit in enumerate(units):
                try:
                    params, ground_truth = self._prepare(loaded, unit)
                except Exception:
                    continue
                item = GradeInput(unit.prompt, unit.response)
                entries.append(BatchEntry(item, params, ground_truth, unit.deadline_s))
                where.append(index)
            outcomes = loaded.verify_many(entries) if entries else []
        except Exception:
            return results
        if not isinstance(outcomes, list) or len(outcomes) != len(entries):
            return results
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        for index, outcome in zip(where, outcomes, strict=True):
            if outcome is not None:
                result = _result_from_outcome(outcome, loaded)
                result.elapsed_ms = elapsed_ms
                results[index] = result
        return results

    def run(self, unit: Unit) -> UnitResult:
        started = time.perf_counter()
        try:
            loaded = self.registry.get(unit.verifier)
            params, ground_truth = self._prepare(loaded, unit)
            item = GradeInput(unit.prompt, unit.response)
            if loaded.verify_within is not None:
                outcome = loaded.verify_within(BatchEntry(item, params, ground_truth, unit.deadline_s))
            else:
                outcome = loaded.instance.verify(item, params, ground_truth)
            result = _result_from_outcome(outcome, loaded)
        except RecursionError:
            # Deep nesting in the response itself (e.g. thousands of braces): its fault, not ours.
            result = UnitResult(0.0, Verdict.INCORRECT.value, "response too deeply nested to grade")
        except MemoryError:
            # The worker's address-space cap was hit by what the response asked for.
            result = UnitResult(0.0, Verdict.INCORRECT.value, "response exhausted the grader's memory limit")
        except Exception as exc:
            tb = traceback.format_exc(limit=6)
            result = infrastructure_failure(
                f"verifier {unit.verifier!r} raised {type(exc).__name__}: {exc}"[:MAX_REASON_CHARS],
                traceback=tb[-MAX_REASON_CHARS:],
            )
        result.elapsed_ms = (time.perf_counter() - started) * 1000.0
        return result
