"""A grade request's JSON value made into its models a chunk at a time: pydantic builds
every error of what it validates, and one request can hold hundreds of thousands of bad
fields, so an invalid request costs at most a chunk's errors, and the first
`MAX_ERRORS_LISTED` found are reported."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, NoReturn

from pydantic import TypeAdapter, ValidationError

from rlvr.service.errors import BadRequest
from rlvr.service.models import GradeItem, GradeRequest, VerifierRef
from rlvr.service.planning import MAX_ERRORS_LISTED, format_loc

__all__ = ["VALIDATION_CHUNK", "error_messages", "validate_grade"]

# Items, or verifier references, validated at once: each brings at most a few errors.
VALIDATION_CHUNK = 64
_ITEMS = TypeAdapter(list[GradeItem])
_REFS = TypeAdapter(list[VerifierRef])
_REQUEST_KEYS = frozenset(GradeRequest.model_fields)
_ITEM_KEYS = frozenset(f.name for f in dataclasses.fields(GradeItem))
_REF_KEYS = frozenset(f.name for f in dataclasses.fields(VerifierRef))
# Items are validated dataclasses (see `models`): their errors read as a model's would.
_DATACLASS_MESSAGES = {
    "unexpected_keyword_argument": "Extra inputs are not permitted",
    "missing_argument": "Field required",
}


def validate_grade(value: Any, keys_checked: bool = False) -> GradeRequest:
    """The grade request `value` holds; BadRequest naming the first errors found.
    `keys_checked`: no object in it has a key its model lacks (a request's outline)."""
    if isinstance(value, dict) and not keys_checked:
        _refuse_unknown_keys("", value, _REQUEST_KEYS)
    if not isinstance(value, dict) or not isinstance(value.get("items"), list):
        return _validated(value)
    request = _validated({**value, "items": []})
    request.items = _validated_items(value["items"], keys_checked)
    return request


def error_messages(exc: ValidationError, prefix: str = "", offset: int = 0) -> list[str]:
    """`where: what` for each error; a leading index is shifted by `offset` (a chunk's start)."""
    messages = []
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        if offset and loc and isinstance(loc[0], int):
            loc[0] += offset
        where = format_loc(prefix, loc).lstrip(".") or "body"
        messages.append(f"{where}: {_DATACLASS_MESSAGES.get(err['type'], err['msg'])}")
    return messages


def _validated(value: Any) -> GradeRequest:
    try:
        return GradeRequest.model_validate(value)
    except ValidationError as exc:
        _refuse(error_messages(exc))


def _validated_items(items: list[Any], keys_checked: bool) -> list[GradeItem]:
    validated: list[GradeItem] = []
    errors: list[str] = []
    for start, chunk in _chunks(items, errors, keys_checked):
        try:
            validated += _ITEMS.validate_python(chunk)
        except ValidationError as exc:
            errors += error_messages(exc, "items", start)
        if len(errors) >= MAX_ERRORS_LISTED:
            break
    if errors:
        _refuse(errors)
    return validated


def _chunks(items: list[Any], errors: list[str], keys_checked: bool) -> Iterator[tuple[int, list[Any]]]:
    """(start, items) of about `VALIDATION_CHUNK` items and references each; the references
    of a longer list are validated ahead, a chunk at a time, their errors into `errors`."""
    start, chunk, weight = 0, [], 0
    for index, item in enumerate(items):
        refs = item.get("verifier") if isinstance(item, dict) else None
        if isinstance(item, dict) and not keys_checked:
            _refuse_unknown_keys(f"items[{index}]", item, _ITEM_KEYS)
        if isinstance(refs, list):
            for j, ref in enumerate([] if keys_checked else refs):
                if isinstance(ref, dict):
                    _refuse_unknown_keys(f"items[{index}].verifier[{j}]", ref, _REF_KEYS)
            if len(refs) > VALIDATION_CHUNK:
                item = {**item, "verifier": _validated_refs(index, refs, errors)}
                refs = None
        chunk.append(item)
        weight += 1 + (len(refs) if isinstance(refs, list) else 0)
        if weight >= VALIDATION_CHUNK:
            yield start, chunk
            start, chunk, weight = index + 1, [], 0
    if chunk:
        yield start, chunk


def _validated_refs(index: int, refs: list[Any], errors: list[str]) -> list[VerifierRef]:
    validated: list[VerifierRef] = []
    for start in range(0, len(refs), VALIDATION_CHUNK):
        try:
            validated += _REFS.validate_python(refs[start : start + VALIDATION_CHUNK])
        except ValidationError as exc:
            errors += error_messages(exc, f"items[{index}].verifier", start)
            if len(errors) >= MAX_ERRORS_LISTED:
                _refuse(errors)
    return validated


def _refuse_unknown_keys(where: str, value: dict[str, Any], known: frozenset[str]) -> None:
    # Refused here, a few named, rather than by pydantic, which would build an error for each.
    if value.keys() <= known:
        return
    unknown = [key for key in value if key not in known][:MAX_ERRORS_LISTED]
    _refuse([f"{where}.{key[:100]}".lstrip(".") + ": Extra inputs are not permitted" for key in unknown])


def _refuse(errors: list[str]) -> NoReturn:
    shown = errors[:MAX_ERRORS_LISTED]
    raise BadRequest("; ".join(shown), details={"errors": shown})
