"""Planning: a grade request's items checked against their verifiers and turned into units.

Two kinds of fault, kept apart on purpose:

- The request's own: an unknown verifier, an empty verifier list, params beside a list.
  The trainer sent something no batch can be graded with: a 422 naming every field.
- An item's data: params or a ground truth its verifier's models refuse. Real datasets
  carry such rows (IFEval's own `letter: "#"`), and one of them must not stop a training
  step: the item is planned as invalid, answered `verdict: error` with `mask: true` and
  the fields named, and the rest are graded. A request with `strict: true` asks for the
  422 instead.
"""

from __future__ import annotations

from collections import Counter as TallyCounter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from rlvr.service.errors import BadRequest
from rlvr.service.models import UNION_TAGS, GradeItem
from rlvr.service.work import Canonical, Unit, canonical, prepared_key, unit_key
from rlvr.verifiers.errors import PluginError, UnknownVerifier
from rlvr.verifiers.registry import LoadedVerifier, Registry

__all__ = [
    "MAX_ERRORS_LISTED",
    "MAX_ITEM_ERRORS_LISTED",
    "Component",
    "PlannedItem",
    "Planner",
    "format_loc",
    "validation_messages",
]

MAX_ERRORS_LISTED = 20
# An item's own list, in an answer that may hold ten thousand of them, and the length
# of one message (a verifier's may list every value it knows).
MAX_ITEM_ERRORS_LISTED = 5
MAX_MESSAGE_CHARS = 300


# How pydantic names a union member wrapped in validator functions:
# `function-after[_check(), function-after[_size(), AssertTests]]`.
_WRAPPED_MEMBER = ("function-after[", "function-before[", "function-wrap[", "function-plain[")


def format_loc(prefix: str, loc: Sequence[Any]) -> str:
    """A field's path: `items[0].ground_truth(AssertTests).tests`, a union's member in
    parentheses by its model's name (a tagged union's tags are given so)."""
    out = prefix
    for part in loc:
        if part in UNION_TAGS:
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.startswith(_WRAPPED_MEMBER):
            out += f"({part.rstrip(']').rsplit(' ', 1)[-1]})"
        elif part.startswith("(") and part.endswith(")"):  # a tagged union's member, named so
            out += part
        else:
            out += f".{part}"
    return out


def validation_messages(prefix: str, exc: ValidationError) -> list[str]:
    return [f"{format_loc(prefix, e['loc'])}: {e['msg']}"[:MAX_MESSAGE_CHARS] for e in exc.errors(include_url=False)]


@dataclass(slots=True)
class Component:
    label: str
    weight: float
    unit: Unit


@dataclass(slots=True)
class PlannedItem:
    """An item's units; or, when its params or ground truth are invalid, none, and
    `invalid` names each bad field within the item (`ground_truth.kwargs[2].letter: ...`)."""

    item: GradeItem
    components: list[Component]
    invalid: list[str] = field(default_factory=list)
    # The verifier whose models refused the item, for the metrics.
    invalid_verifier: str = ""


@dataclass(slots=True)
class _Ref:
    """One verifier an item names: where it is in the request, and where its params are
    in the item."""

    where: str
    name: str
    weight: float
    params: Any
    params_field: str
    ground_truth: Canonical | None


@dataclass(slots=True)
class _Checked:
    """Params and ground truth that passed their verifier's models, as canonical JSON data."""

    prep_key: str
    params: Any
    ground_truth: Any


@dataclass(frozen=True, slots=True)
class _Refused:
    """Which of params and ground truth a verifier's models refused, with the messages'
    field paths relative to it, so that every item sharing the pair is told of its own."""

    part: str  # "params" or "ground_truth"
    messages: tuple[str, ...]

    def prefix(self, ref: _Ref) -> str:
        return ref.params_field if self.part == "params" else "ground_truth"


class Planner:
    """Turns a request's items into units, noting every error instead of stopping at the first."""

    def __init__(self, registry: Registry, deadline: Callable[[float | None], float], strict: bool) -> None:
        self.registry = registry
        self.deadline = deadline
        self.strict = strict
        self.errors: list[str] = []
        # Items of one prompt group share params and ground truth: validate each distinct
        # pair once, and each distinct ground truth once whatever the params beside it (a
        # list of references differing only in params must not copy it for each).
        self._checked: dict[tuple[str, bytes, bytes], _Checked | _Refused] = {}
        self._truths: dict[tuple[str, bytes], Any] = {}
        # Items of a group share their params' object too: its canonical JSON once.
        self._params: dict[int, Canonical] = {}
        # A refusal's messages as one reference names them: every item and reference
        # sharing the refused value shares them too, rather than a copy each.
        self._named: dict[tuple[int, str], tuple[str, ...]] = {}

    def plan(self, items: Sequence[GradeItem], ground_truths: Sequence[Canonical | None]) -> list[PlannedItem]:
        """Units of every item, given each item's ground truth as the keys see it (None:
        not JSON data); BadRequest naming the fields when the request is at fault."""
        planned: list[PlannedItem] = []
        for index, item in enumerate(items):
            where = f"items[{index}]"
            refs = self._refs(where, item, ground_truths[index])
            if refs is not None:
                planned.append(self._planned(where, item, refs))
            if len(self.errors) >= MAX_ERRORS_LISTED:
                break
        if self.errors:
            shown = self.errors[:MAX_ERRORS_LISTED]
            raise BadRequest("; ".join(shown), details={"errors": shown})
        return planned

    def _refs(self, where: str, item: GradeItem, truth: Canonical | None) -> list[_Ref] | None:
        if isinstance(item.verifier, str):
            return [_Ref(f"{where}.verifier", item.verifier, 1.0, item.params, "params", truth)]
        if not item.verifier:
            self.errors.append(f"{where}.verifier: the verifier list is empty")
            return None
        if item.params:
            self.errors.append(f"{where}.params: with a list of verifiers, give params inside each entry")
            return None
        return [
            _Ref(f"{where}.verifier[{j}]", ref.name, ref.weight, ref.params, f"verifier[{j}].params", truth)
            for j, ref in enumerate(item.verifier)
        ]

    def _planned(self, where: str, item: GradeItem, refs: list[_Ref]) -> PlannedItem:
        planned = PlannedItem(item, [])
        # A verifier named twice scores under `name` and `name#2`.
        seen: TallyCounter[str] = TallyCounter()
        for ref in refs:
            checked = self._unit(where, item, ref)
            if isinstance(checked, tuple):
                room = MAX_ITEM_ERRORS_LISTED - len(planned.invalid)
                planned.invalid.extend(checked[: max(room, 0)])
                planned.invalid_verifier = planned.invalid_verifier or ref.name
            elif checked is not None:
                seen[ref.name] += 1
                label = ref.name if seen[ref.name] == 1 else f"{ref.name}#{seen[ref.name]}"
                planned.components.append(Component(label, ref.weight, checked))
        if planned.invalid:
            if self.strict:
                room = MAX_ERRORS_LISTED - len(self.errors)
                self.errors.extend(f"{where}.{message}" for message in planned.invalid[: max(room, 0)])
            planned.components = []
        return planned

    def _unit(self, where: str, item: GradeItem, ref: _Ref) -> Unit | tuple[str, ...] | None:
        """The ref's unit; the messages naming its invalid fields; or None, the request's
        error noted."""
        try:
            loaded = self.registry.get(ref.name)
        except (UnknownVerifier, PluginError) as exc:
            self.errors.append(f"{ref.where}: {exc.message}")
            return None
        checked = self._check(where, item, ref, loaded)
        if checked is None:
            return None
        if isinstance(checked, _Refused):
            return self._named_refusal(checked, ref)
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

    def _named_refusal(self, refused: _Refused, ref: _Ref) -> tuple[str, ...]:
        prefix = refused.prefix(ref)
        key = (id(refused), prefix)
        if key not in self._named:
            self._named[key] = tuple(prefix + message for message in refused.messages[:MAX_ITEM_ERRORS_LISTED])
        return self._named[key]

    def _check(self, where: str, item: GradeItem, ref: _Ref, loaded: LoadedVerifier) -> _Checked | _Refused | None:
        try:
            params = self._params.get(id(ref.params)) or canonical(ref.params)
            truth = ref.ground_truth or canonical(item.ground_truth)
        except (TypeError, ValueError) as exc:
            self.errors.append(f"{where}: not JSON data: {exc}")
            return None
        self._params[id(ref.params)] = params
        memo_key = (ref.name, params.digest, truth.digest)
        checked = self._checked.get(memo_key)
        if checked is None:
            checked = self._validate(loaded, ref, item.ground_truth, params, truth)
            self._checked[memo_key] = checked
        return checked

    def _validate(
        self, loaded: LoadedVerifier, ref: _Ref, ground_truth: Any, params_id: Canonical, truth_id: Canonical
    ) -> _Checked | _Refused:
        """The ref's params and the ground truth as JSON data once its verifier's models
        accept them."""
        params = _validated(loaded.params_adapter, ref.params, "params")
        if isinstance(params, _Refused):
            return params
        truth_key = (ref.name, truth_id.digest)
        if truth_key not in self._truths:
            self._truths[truth_key] = _validated(loaded.ground_truth_adapter, ground_truth, "ground_truth")
        truth = self._truths[truth_key]
        if isinstance(truth, _Refused):
            return truth
        return _Checked(prepared_key(ref.name, loaded.version, params_id, truth_id), params, truth)


def _validated(adapter: TypeAdapter[Any], value: Any, part: str) -> Any:
    """`value` once `adapter` accepts it, else _Refused. A model that raises
    instead of refusing (a plugin's validator with a bug) refuses the item, with the
    exception named: one row's data must not fail the request."""
    try:
        adapter.validate_python(value)
    except ValidationError as exc:
        return _Refused(part, tuple(validation_messages("", exc)[:MAX_ERRORS_LISTED]))
    except Exception as exc:
        return _Refused(part, (f": the verifier's model raised {type(exc).__name__}: {exc}"[:500],))
    # The value as it came, not the model's dump: it is JSON data already, the worker
    # validates it again into the same model, and a dump of a large ground truth would be
    # one more copy of it while the request is graded.
    return value
