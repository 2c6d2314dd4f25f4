"""What a JSON body will cost in memory once it is Python objects, known before it is:
a body is read into objects (and a grade request into models) only once its counts and
its estimated size are within the limits, so that no body can make the parser itself
the problem (a few megabytes of `[]` are gigabytes of lists).

Two measures, both in C-speed passes over the bytes that allocate at most a copy:
- `cost_within`: the bytes of Python objects a JSON text decodes to, from its counts of
  containers, strings, numbers and separators. A first bound counts the punctuation
  inside strings too; only a text over its budget pays for a second, exact count.
- `grade_shape`: a grade request's items and verifier references counted, and its
  free-form fields (`ground_truth`, `params`, `metadata`) located, by a typed msgspec
  decode that skips every other value and keeps the free-form ones as byte slices.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

__all__ = [
    "GradeShape",
    "Outline",
    "ShapeError",
    "cost_within",
    "grade_shape",
    "outline",
    "string_width",
    "upper_cost",
    "value_cost",
]

# Bytes per decoded object, with the pointer that holds it: CPython's list or dict
# (with its first slots), str header, int or float, and a dict entry. A key costs more
# while its object is read than once it is: the duplicate-key pass holds each of an
# object's keys as a pair in a list, and in the reader's table of keys seen.
CONTAINER_BYTES = 72
STRING_BYTES = 56
NUMBER_BYTES = 32
DICT_ENTRY_BYTES = 120
POINTER_BYTES = 8

# Strings: the two branches never start on the same byte, so matching is linear.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')
# A run of text outside strings, then up to STRINGS_PER_SPAN strings each with the text
# after it: spans tile a JSON text, each ending outside any string, so that a text of
# millions of strings is counted a span at a time rather than all in one list.
STRINGS_PER_SPAN = 4096
_SPAN = re.compile(rb'[^"]*+(?:"(?:[^"\\]++|\\.)*+"[^"]*+){0,%d}+' % STRINGS_PER_SPAN)
# A character past U+FFFF: a 4-byte UTF-8 sequence, or an escaped surrogate.
_ASTRAL = re.compile(rb"[\xf0-\xf4]|\\u[dD][89abAB]")
# Kept for `upper_cost`: structure, quotes, and the `\\` and `u` of a `\\u` escape (kept
# apart, they can only make it think one is there).
_NOT_PUNCTUATION = bytes(b for b in range(256) if b not in b'[]{}",:\\u')
_NOT_DIGITS = bytes(b for b in range(256) if b not in b"0123456789-")


@dataclass
class Outline:
    """The counts of a JSON text, outside its strings but for `strings` and `string_chars`."""

    containers: int = 0
    strings: int = 0
    string_chars: int = 0
    keys: int = 0
    separators: int = 0
    digits: int = 0

    def add(self, text: bytes) -> None:
        stripped, strings = _STRING.subn(b'""', text)
        self.strings += strings
        self.string_chars += len(text) - len(stripped)
        self.containers += stripped.count(b"[") + stripped.count(b"{")
        self.keys += stripped.count(b":")
        self.separators += stripped.count(b",")
        self.digits += len(stripped.translate(None, _NOT_DIGITS))

    def cost(self, width: int = 1) -> int:
        """Bytes of objects, for strings of `width` bytes a character (see `string_width`)."""
        # Numbers of one digit are shared objects; a new one has two characters or more.
        values = self.separators + self.containers
        return (
            CONTAINER_BYTES * self.containers
            + (STRING_BYTES + 2) * self.strings
            + width * self.string_chars
            + DICT_ENTRY_BYTES * self.keys
            + POINTER_BYTES * values
            + NUMBER_BYTES * min(values, self.digits // 2)
        )


def outline(raw: bytes) -> Outline:
    """The counts of the JSON text `raw`, in memory of a span's size."""
    counts = Outline()
    for span in _SPAN.finditer(raw):
        if span.end() > span.start():
            counts.add(span.group())
    return counts


def string_width(raw: bytes) -> int:
    """Bytes a character that CPython's strings from `raw` take at most: 1 for ASCII, 2
    up to U+FFFF, 4 past it (a string takes its widest character's width throughout)."""
    if raw.isascii() and b"\\u" not in raw:
        return 1
    if _ASTRAL.search(raw):
        return 4
    return 2


def value_cost(raw: bytes | msgspec.Raw, *, exact: bool, ascii_body: bool) -> int:
    """What one JSON value decodes to, in bytes: a string by its length, anything else by
    `upper_cost` or, `exact`, by its `outline`."""
    if not raw:
        return 0
    if memoryview(raw)[0] == ord('"'):  # one string: no copy to count
        return STRING_BYTES + len(raw) * (1 if ascii_body else string_width(bytes(raw)))
    text = bytes(raw)
    width = 1 if ascii_body else string_width(text)
    return outline(text).cost(width) if exact else upper_cost(text, width)


def upper_cost(raw: bytes, width: int | None = None) -> int:
    """The bytes of Python objects `raw` decodes to, at most: punctuation inside strings
    counts as structure, and every value as a number of its own. Strings are taken at
    `width` bytes a character, or, not given, 1 for plain ASCII and else the widest, 4."""
    punctuation = raw.translate(None, _NOT_PUNCTUATION)  # one pass; the counts run on what is left
    if width is None:
        width = 1 if raw.isascii() and b"\\u" not in punctuation else 4
    containers = punctuation.count(b"[") + punctuation.count(b"{")
    values = punctuation.count(b",") + containers
    return (
        CONTAINER_BYTES * containers
        + STRING_BYTES * (punctuation.count(b'"') // 2)
        + DICT_ENTRY_BYTES * punctuation.count(b":")
        + (POINTER_BYTES + NUMBER_BYTES) * values
        + width * len(raw)
    )


def cost_within(raw: bytes, budget: int) -> int | None:
    """What `raw` decodes to, in bytes, when it is within `budget`, else None."""
    bound = upper_cost(raw)
    if bound <= budget:
        return bound
    exact = outline(raw).cost(string_width(raw))
    return exact if exact <= budget else None


class ShapeError(ValueError):
    """The body is not a grade request's shape; `where` names the place (`items[3]`)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


_ABSENT = msgspec.Raw()


# Every field is declared, and no other is allowed, so that no value is skipped uncounted.
# Each struct has a required field, so that a list of `{}` fails at its first entry
# rather than being built.
class _RefShape(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    name: str
    weight: msgspec.Raw = _ABSENT
    params: msgspec.Raw = _ABSENT


class _ItemShape(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    response: msgspec.Raw
    verifier: str | list[_RefShape]
    id: msgspec.Raw = _ABSENT
    prompt: msgspec.Raw = _ABSENT
    ground_truth: msgspec.Raw = _ABSENT
    params: msgspec.Raw = _ABSENT
    group: msgspec.Raw = _ABSENT
    metadata: msgspec.Raw = _ABSENT


class _BodyShape(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    items: list[_ItemShape]
    deadline_s: msgspec.Raw = _ABSENT
    advantage: msgspec.Raw = _ABSENT
    strict: msgspec.Raw = _ABSENT


_DECODER = msgspec.json.Decoder(_BodyShape)
_AT = re.compile(r" - at `\$(.*)`$")
_ITEM_FIELDS = ("response", "id", "prompt", "ground_truth", "params", "group", "metadata")
_FREE_FORM = frozenset({"ground_truth", "params", "metadata"})


@dataclass(frozen=True)
class GradeShape:
    """A grade request's counts, and a view of each of its values but the verifier names."""

    items: int
    verifier_refs: int
    _shape: _BodyShape

    def values(self) -> Iterator[tuple[str, msgspec.Raw, bool]]:
        """(place, JSON, free-form) of each value, one at a time. Equal free-form values
        (a group's ground truth, sent with each of its responses) are read once: see
        `request_value`."""
        shape = self._shape
        yield from (("deadline_s", shape.deadline_s, False), ("advantage", shape.advantage, False))
        yield "strict", shape.strict, False
        for i, item in enumerate(shape.items):
            for name in _ITEM_FIELDS:
                yield f"items[{i}].{name}", getattr(item, name), name in _FREE_FORM
            if not isinstance(item.verifier, str):
                for j, ref in enumerate(item.verifier):
                    yield f"items[{i}].verifier[{j}].weight", ref.weight, False
                    yield f"items[{i}].verifier[{j}].params", ref.params, True

    def request_value(self, read: Read, read_free_form: Read) -> dict[str, Any]:
        """The request as JSON values: each read by `read`, the free-form ones by
        `read_free_form` (which may give one object for equal values)."""
        shape = self._shape
        value = {name: read(raw) for name, raw in _envelope(shape) if raw}
        value["items"] = [_item_value(item, read, read_free_form) for item in shape.items]
        return value


Read = Callable[[msgspec.Raw], Any]


def _envelope(shape: _BodyShape) -> tuple[tuple[str, msgspec.Raw], ...]:
    return ("deadline_s", shape.deadline_s), ("advantage", shape.advantage), ("strict", shape.strict)


def _item_value(item: _ItemShape, read: Read, read_free_form: Read) -> dict[str, Any]:
    verifier = item.verifier
    value: dict[str, Any] = {
        "response": read(item.response),
        "verifier": verifier if isinstance(verifier, str) else [_ref_value(r, read, read_free_form) for r in verifier],
    }
    # Field by field, not by name: this runs for every item of every request.
    if item.id:
        value["id"] = read(item.id)
    if item.prompt:
        value["prompt"] = read(item.prompt)
    if item.group:
        value["group"] = read(item.group)
    if item.ground_truth:
        value["ground_truth"] = read_free_form(item.ground_truth)
    if item.params:
        value["params"] = read_free_form(item.params)
    if item.metadata:
        value["metadata"] = read_free_form(item.metadata)
    return value


def _ref_value(ref: _RefShape, read: Read, read_free_form: Read) -> dict[str, Any]:
    value: dict[str, Any] = {"name": ref.name}
    if ref.weight:
        value["weight"] = read(ref.weight)
    if ref.params:
        value["params"] = read_free_form(ref.params)
    return value


def grade_shape(body: bytes) -> GradeShape:
    """The counts and values of the grade request in `body`; ShapeError when it is not
    valid JSON of a grade request's outline. Costs at most a few times the body: one
    small struct per item and reference, one view per value."""
    try:
        shape = _DECODER.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _shape_error(exc) from None
    except RecursionError:
        raise ShapeError("body", "nested too deeply") from None
    refs = sum(1 if isinstance(item.verifier, str) else len(item.verifier) for item in shape.items)
    return GradeShape(len(shape.items), refs, shape)


def _shape_error(exc: Exception) -> ShapeError:
    message = str(exc)
    if not isinstance(exc, msgspec.ValidationError):  # a DecodeError that is not one
        return ShapeError("body", f"not valid JSON ({message})")
    found = _AT.search(message)
    where = found.group(1).lstrip(".") if found else ""
    return ShapeError(where or "body", message[: found.start()] if found else message)
