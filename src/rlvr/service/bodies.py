"""Request bodies parsed by the service itself rather than by FastAPI, so that every
failure names the item and field (`BadRequest`, a 422), a duplicated key is refused,
and no body becomes Python objects before what they would cost is known to be within
the limits (`BodyParser`, with `body_cost`)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import msgspec
from pydantic import BaseModel, ValidationError

from rlvr.service.body_cost import (
    GradeShape,
    ShapeError,
    cost_within,
    grade_shape,
    outline,
    string_width,
    upper_cost,
    value_cost,
)
from rlvr.service.errors import BadRequest, PayloadTooLarge
from rlvr.service.grade_body import error_messages, validate_grade
from rlvr.service.models import GradeRequest
from rlvr.service.planning import MAX_ERRORS_LISTED

Model = TypeVar("Model", bound=BaseModel)
Parsed = TypeVar("Parsed")
# Smaller bodies (a single item, as verl, OpenRLHF and slime send) are parsed on the
# event loop: a thread hop costs more than parsing them.
INLINE_PARSE_BYTES = 16 * 1024
# Below this a body cannot cost enough to be worth counting first: even as the densest
# JSON (a list of `[]`, about 24x) it stays under half a megabyte.
UNCOUNTED_BODY_BYTES = INLINE_PARSE_BYTES
# As deep as pydantic's own JSON parser goes; deeper values would exhaust the stack of
# whatever walks them next (canonical JSON, a verifier).
MAX_JSON_DEPTH = 255
_CONTAINERS = (dict, list)


@dataclass(frozen=True)
class BodyLimits:
    """What a request body may hold (`Settings` gives them; see there)."""

    max_items: int
    max_verifier_refs: int
    max_parse_expansion: float
    parse_floor_bytes: int
    max_object_keys: int

    def budget(self, body: bytes) -> int:
        """Bytes of Python objects a body of this size may decode to."""
        return int(self.max_parse_expansion * len(body)) + self.parse_floor_bytes


Precheck = Callable[[Any], None]


def check_lists(value: Any, limits: dict[str, int], items: type | None = None) -> None:
    """BadRequest when a list (or object) in `value` named in `limits` is longer than
    its limit there, or, given `items`, holds a value of another type: a precheck."""
    if not isinstance(value, dict):
        return
    for name, limit in limits.items():
        entries = value.get(name)
        if isinstance(entries, list | dict) and len(entries) > limit:
            raise BadRequest(f"{name}: {len(entries)} entries exceed the limit of {limit}")
        if items is not None and isinstance(entries, list):
            bad = next((i for i, entry in enumerate(entries) if not isinstance(entry, items)), None)
            if bad is not None:
                raise BadRequest(f"{name}[{bad}]: Input should be a valid {items.__name__}")


@dataclass
class DecodeBudget:
    """Bytes of objects what is left of a request may still decode to. What the body was
    charged may be its first bound (which counts the punctuation of the JSON its strings
    hold as its own): `refund` charges it exactly instead, once."""

    left: int
    body: bytes = b""
    charged: int = 0

    def refund(self) -> None:
        if self.body:
            self.left += self.charged - outline(self.body).cost(string_width(self.body))
            self.body = b""


class BodyParser:
    """Parses request bodies into their models once their cost is known to be bounded."""

    def __init__(self, limits: BodyLimits, concurrency: int) -> None:
        self.limits = limits
        # A large body peaks at several times its size while parsed: a few at a time.
        self._parsing = asyncio.Semaphore(concurrency)

    async def off_loop(self, parse: Callable[[bytes], Parsed], body: bytes) -> Parsed:
        """`parse(body)`, in a thread when the body is large enough to hold up the event
        loop, a few such at a time."""
        if len(body) <= INLINE_PARSE_BYTES:
            return parse(body)
        async with self._parsing:
            return await asyncio.get_running_loop().run_in_executor(None, parse, body)

    def parse(self, model: type[Model], body: bytes, precheck: Precheck | None = None) -> Model:
        """`body` as `model` (see `parse_body`); PayloadTooLarge when its JSON would
        decode to more objects than its size allows."""
        return self.parse_with_budget(model, body, precheck)[0]

    def parse_with_budget(
        self, model: type[Model], body: bytes, precheck: Precheck | None = None
    ) -> tuple[Model, DecodeBudget]:
        """`parse`, and what is left of the body's budget for the JSON its strings hold.
        `precheck` sees the JSON value first: pydantic builds an error for every bad
        entry of a list, so the lengths of a model's lists are checked before it runs."""
        budget = DecodeBudget(self.limits.budget(body))
        if len(body) > UNCOUNTED_BODY_BYTES:
            cost = cost_within(body, budget.left)
            if cost is None:
                raise PayloadTooLarge(self._too_dense("body", len(body)))
            budget = DecodeBudget(budget.left - cost, body, cost)
        return parse_body(model, body, self.limits.max_object_keys, precheck), budget

    def parse_grade(self, body: bytes) -> GradeRequest:
        """A grade request: its items and verifier references counted, and its values'
        cost checked, before any is read; equal free-form values are read once."""
        try:
            shape = grade_shape(body)
        except ShapeError as exc:
            # Not a grade request's outline: every error is named where the whole body is
            # cheap enough to read, the first found where it is not.
            if len(body) > UNCOUNTED_BODY_BYTES and cost_within(body, self.limits.budget(body)) is None:
                raise BadRequest(str(exc)) from None
            return validate_grade(decode_json(body, self.limits.max_object_keys))
        self._check_counts(shape)
        if len(body) > UNCOUNTED_BODY_BYTES:
            self._check_cost(shape, body)
        self._check_keys(shape, body)
        try:
            value = shape.request_value(read_json, SharedReader().read)
        except BadRequest as exc:
            raise BadRequest(_unreadable(shape, exc)) from None
        return validate_grade(value, keys_checked=True)

    def _check_counts(self, shape: GradeShape) -> None:
        limits = self.limits
        if shape.items > limits.max_items:
            raise BadRequest(f"items: {shape.items} items exceed the limit of {limits.max_items}")
        if shape.verifier_refs > limits.max_verifier_refs:
            raise BadRequest(
                f"items: {shape.verifier_refs} verifier references exceed the limit of "
                f"{limits.max_verifier_refs} per request"
            )

    def _check_keys(self, shape: GradeShape, body: bytes) -> None:
        """BadRequest naming the value with a repeated key or too many keys in one object:
        the whole body is checked in one pass, its values one by one only to name it."""
        fault = key_fault(body, self.limits.max_object_keys)
        if fault is None:
            return
        where = next(
            (w for w, raw, _ in shape.values() if raw and key_fault(bytes(raw), self.limits.max_object_keys)), "body"
        )
        raise BadRequest(f"{where}: {fault}")

    def _check_cost(self, shape: GradeShape, body: bytes) -> None:
        budget = self.limits.budget(body)
        if upper_cost(body) <= budget:
            return  # the whole body's bound is above its values' together
        ascii_body = body.isascii()
        if sum(value_cost(raw, exact=False, ascii_body=ascii_body) for raw in _distinct(shape)) <= budget:
            return
        # The first bound counts punctuation inside strings: count again, exactly.
        for raw in _distinct(shape):
            budget -= value_cost(raw, exact=True, ascii_body=ascii_body)
            if budget < 0:
                where = next(w for w, r, _ in shape.values() if r is raw)
                raise PayloadTooLarge(self._too_dense(where, len(raw)))

    def embedded_json(self, text: str, where: str, budget: DecodeBudget) -> Any:
        """The JSON value a string holds (a dataset's label holding code tests), once its
        cost is within what is left of `budget`, which it spends; BadRequest when it is
        not JSON, nests too deeply or repeats a key."""
        raw = text.encode()
        cost = value_cost(raw, exact=False, ascii_body=False)
        if cost > budget.left:
            budget.refund()
            cost = value_cost(raw, exact=True, ascii_body=False)
        self.spend(budget, cost, where, len(raw))
        return decode_json(raw, self.limits.max_object_keys)

    def spend(self, budget: DecodeBudget, cost: int, where: str, size: int) -> None:
        """Charges `budget` for `cost` bytes of objects made from `size` bytes of the body
        (a copy of a value, a value a string holds); PayloadTooLarge past it."""
        if cost > budget.left:
            budget.refund()
            if cost > budget.left:
                raise PayloadTooLarge(self._too_dense(where, size))
        budget.left -= cost

    def _too_dense(self, where: str, size: int) -> str:
        return (
            f"{where}: {size} bytes of JSON would decode to more than {self.limits.max_parse_expansion:g} "
            f"times the body's size in objects (many small containers, strings or numbers); "
            f"send fewer, or larger, values"
        )


def _unreadable(shape: GradeShape, exc: BadRequest) -> str:
    """`exc`'s message, naming the first value that cannot be read (a lone surrogate,
    `1e400`) rather than the body."""
    for where, raw, _ in shape.values():
        try:
            if raw:
                read_json(raw)
        except BadRequest as found:
            return found.message.replace("body", where, 1)
    return exc.message


def _distinct(shape: GradeShape) -> Iterator[msgspec.Raw]:
    """The shape's values, each free-form one once however often it is repeated."""
    seen: set[bytes] = set()
    for _, raw, free_form in shape.values():
        if free_form and raw:
            digest = _digest(raw)
            if digest in seen:
                continue
            seen.add(digest)
        yield raw


def _digest(raw: msgspec.Raw) -> bytes:
    return hashlib.blake2b(memoryview(raw), digest_size=16).digest()


class SharedReader:
    """Reads JSON values, giving one object for equal ones (a group's ground truth comes
    with each of its responses)."""

    def __init__(self) -> None:
        self._read: dict[bytes, Any] = {}

    def read(self, raw: msgspec.Raw) -> Any:
        digest = _digest(raw)
        if digest not in self._read:
            self._read[digest] = read_json(raw)
        return self._read[digest]


def read_json(raw: msgspec.Raw | bytes) -> Any:
    """One JSON value of a body whose keys are checked (`key_fault`); BadRequest
    when it nests too deeply."""
    try:
        value = msgspec.json.decode(raw)
    except RecursionError:
        raise BadRequest(f"body: nested deeper than {MAX_JSON_DEPTH} levels") from None
    except msgspec.DecodeError as exc:  # the outline skips values, checking their syntax only
        raise BadRequest(f"body: not valid JSON ({exc})") from None
    if type(value) in _CONTAINERS and _depth(value) > MAX_JSON_DEPTH:
        raise BadRequest(f"body: nested deeper than {MAX_JSON_DEPTH} levels")
    return value


class _KeyFault(Exception):
    """Raised out of the standard library's JSON reading, which would wrap a ValueError."""


def key_fault(body: bytes, max_keys: int) -> str | None:
    """What is wrong with the keys of `body`'s objects: a key that appears twice in one
    object (JSON leaves that undefined: refused, not guessed), or more than `max_keys` in
    one (a verifier's model builds an error for each key it does not know); None when
    nothing is. Each object is dropped once checked, so that this holds no more than one
    object's keys at a time."""
    try:
        # Read as Latin-1, a character per byte, so that the text is never wider than the
        # body (as UTF-8, one character past U+FFFF makes all of it four bytes a
        # character); JSON's structure is ASCII. `_key` reads each key back as UTF-8.
        # Numbers are not kept either: only keys are checked here, and a list of numbers
        # would otherwise be built whole, as it is again when the body is read.
        json.loads(
            body.decode("latin-1"),
            object_pairs_hook=partial(_check_keys, max_keys=max_keys),
            parse_int=_nothing,
            parse_float=_nothing,
        )
    except _KeyFault as fault:
        return str(fault)
    except (ValueError, RecursionError):  # msgspec's reading reports these
        pass
    return None


def parse_body(model: type[Model], body: bytes, max_object_keys: int, precheck: Precheck | None = None) -> Model:
    """`body` as `model`; BadRequest naming the item and field, the key at fault (see
    `key_fault`), or the depth past `MAX_JSON_DEPTH`."""
    value = decode_json(body, max_object_keys)
    if precheck is not None:
        precheck(value)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        shown = error_messages(exc)[:MAX_ERRORS_LISTED]
        raise BadRequest("; ".join(shown), details={"errors": shown}) from None


def decode_json(body: bytes, max_object_keys: int) -> Any:
    """`body`'s JSON value; BadRequest when it is not valid JSON, nests too deeply, or
    its keys are at fault (see `key_fault`)."""
    fault = key_fault(body, max_object_keys)
    if fault is not None:
        raise BadRequest(f"body: {fault}")
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise BadRequest(f"body: not valid JSON ({exc})") from None
    except RecursionError:
        raise BadRequest(f"body: nested deeper than {MAX_JSON_DEPTH} levels") from None
    could_be_deep = body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH
    if could_be_deep and _depth(value) > MAX_JSON_DEPTH:
        raise BadRequest(f"body: nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    """How many containers deep `value` goes (a level at a time: no recursion)."""
    depth = 0
    level = [value] if type(value) in _CONTAINERS else []
    while level:
        depth += 1
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            below += [child for child in children if type(child) in _CONTAINERS]
        level = below
    return depth


def _check_keys(pairs: list[tuple[str, Any]], max_keys: int) -> None:
    if len(pairs) > max_keys:
        raise _KeyFault(f"an object of {len(pairs)} keys, over the limit of {max_keys} keys in one object")
    if len(pairs) > 1:
        seen: set[str] = set()
        for latin, _ in pairs:
            key = _key(latin)
            if key in seen:
                raise _KeyFault(f"the key {key[:100]!r} appears twice in one object")
            seen.add(key)


def _nothing(_: str) -> None:
    return None


def _key(latin: str) -> str:
    """A key read from Latin-1 text: its raw characters are its UTF-8 bytes, and its
    escapes (`\\u00e9`) the characters themselves. A key that mixes raw characters past
    ASCII with escapes past U+00FF is left as read (no duplicate of it written another
    way is then found: JSON leaves their meaning undefined, not a reward)."""
    if latin.isascii():
        return latin
    try:
        return latin.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return latin
