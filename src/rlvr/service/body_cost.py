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
from dataclasses import dataclass

import msgspec

__all__ = ["GradeShape", "Outline", "ShapeError", "cost_within", "grade_shape", "outline", "upper_cost"]

# Bytes per decoded object, with the pointer that holds it: CPython's list or dict
# (with its first slots), str header, int or float, and a dict entry.
CONTAINER_BYTES = 72
STRING_BYTES = 56
NUMBER_BYTES = 32
DICT_ENTRY_BYTES = 48
POINTER_BYTES = 8

# Strings: the two branches never start on the same byte, so matching is linear.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')
# A run of text outside strings, then up to STRINGS_PER_SPAN strings each with the text
# after it: spans tile a JSON text, each ending outside any string, so that a text of
# millions of strings is counted a span at a time rather than all in one list.
STRINGS_PER_SPAN = 4096
_SPAN = re.compile(rb'[^"]*+(?:"(?:[^"\\]++|\\.)*+"[^"]*+){0,%d}+' % STRINGS_PER_SPAN)
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

    def cost(self) -> int:
        # Numbers of one digit are shared objects; a new one has two characters or more.
        values = self.separators + self.containers
        return (
            CONTAINER_BYTES * self.containers
            + (STRING_BYTES + 2) * self.strings
            + self.string_chars
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


def upper_cost(raw: bytes) -> int:
    """The bytes of Python objects `raw` decodes to, at most: punctuation inside strings
    counts as structure, and every value as a number of its own."""
    containers = raw.count(b"[") + raw.count(b"{")
    values = raw.count(b",") + containers
    return (
        CONTAINER_BYTES * containers
        + STRING_BYTES * (raw.count(b'"') // 2)
        + DICT_ENTRY_BYTES * raw.count(b":")
        + (POINTER_BYTES + NUMBER_BYTES) * values
        + len(raw)
    )


def cost_within(raw: bytes, budget: int) -> int | None:
    """What `raw` decodes to, in bytes, when it is within `budget`, else None."""
    bound = upper_cost(raw)
    if bound <= budget:
        return bound
    exact = outline(raw).cost()
    return exact if exact <= budget else None


class ShapeError(ValueError):
    """The body is not a grade request's shape; `where` names the place (`items[3]`)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


_ABSENT = msgspec.Raw()


class _RefShape(msgspec.Struct, gc=False):
    # Required, so that a list of `{}` fails at its first entry rather than being built.
    name: str
    params: msgspec.Raw = _ABSENT


class _ItemShape(msgspec.Struct, gc=False):
    verifier: str | list[_RefShape]
    ground_truth: msgspec.Raw = _ABSENT
    params: msgspec.Raw = _ABSENT
    metadata: msgspec.Raw = _ABSENT


class _BodyShape(msgspec.Struct, gc=False):
    items: list[_ItemShape] = []


_DECODER = msgspec.json.Decoder(_BodyShape)
_AT = re.compile(r" - at `\$(.*)`$")


@dataclass(frozen=True)
class GradeShape:
    """A grade request's counts, and its free-form fields as (place, JSON bytes)."""

    items: int
    verifier_refs: int
    free_form: list[tuple[str, msgspec.Raw]]


def grade_shape(body: bytes) -> GradeShape:
    """The counts and free-form fields of the grade request in `body`; ShapeError when
    it is not valid JSON of a grade request's outline. Costs at most a few times the
    body: one small struct per item and reference, one view per free-form field."""
    try:
        shape = _DECODER.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _shape_error(exc) from None
    except RecursionError:
        raise ShapeError("body", "nested too deeply") from None
    refs = 0
    free_form: list[tuple[str, msgspec.Raw]] = []
    for i, item in enumerate(shape.items):
        fields = {"ground_truth": item.ground_truth, "params": item.params, "metadata": item.metadata}
        free_form.extend((f"items[{i}].{name}", raw) for name, raw in fields.items() if raw)
        if isinstance(item.verifier, str):
            refs += 1
            continue
        refs += len(item.verifier)
        free_form.extend(
            (f"items[{i}].verifier[{j}].params", r.params) for j, r in enumerate(item.verifier) if r.params
        )
    return GradeShape(len(shape.items), refs, free_form)


def _shape_error(exc: Exception) -> ShapeError:
    message = str(exc)
    if not isinstance(exc, msgspec.ValidationError):  # a DecodeError that is not one
        return ShapeError("body", f"not valid JSON ({message})")
    found = _AT.search(message)
    where = found.group(1).lstrip(".") if found else ""
    return ShapeError(where or "body", message[: found.start()] if found else message)
