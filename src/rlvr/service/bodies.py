"""Request bodies parsed by the service itself rather than by FastAPI, so that every
failure names the item and field (`BadRequest`, a 422) and a duplicated key is refused."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rlvr.service.errors import BadRequest
from rlvr.service.planning import MAX_ERRORS_LISTED, format_loc

Model = TypeVar("Model", bound=BaseModel)
Parsed = TypeVar("Parsed")
# Smaller bodies (a single item, as verl, OpenRLHF and slime send) are parsed on the
# event loop: a thread hop costs more than parsing them.
INLINE_PARSE_BYTES = 16 * 1024


def parse_body(model: type[Model], body: bytes) -> Model:
    """`body` as `model`; BadRequest naming the item and field, or the duplicated key."""
    try:
        parsed = model.model_validate_json(body)
    except ValidationError as exc:
        message, details = body_errors(exc)
        raise BadRequest(message, details=details) from None
    # JSON leaves duplicate keys undefined and the parser keeps the last: refuse instead of guessing.
    # (The body is valid JSON by now; should Python's parser disagree on a corner case,
    # pydantic's reading stands.)
    with contextlib.suppress(ValueError, RecursionError):
        json.loads(body, object_pairs_hook=_refuse_duplicate_keys)
    return parsed


async def parse_off_loop(parse: Callable[[bytes], Parsed], body: bytes) -> Parsed:
    """`parse(body)`, in a thread when the body is large enough to hold up the event loop."""
    if len(body) <= INLINE_PARSE_BYTES:
        return parse(body)
    return await asyncio.get_running_loop().run_in_executor(None, parse, body)


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise BadRequest(f"body: the key {key[:100]!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def body_errors(exc: ValidationError) -> tuple[str, dict[str, Any]]:
    messages = []
    for err in exc.errors(include_url=False):
        if err["type"] == "json_invalid":
            messages.append(f"body: not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})")
            continue
        where = format_loc("", err["loc"]).lstrip(".") or "body"
        messages.append(f"{where}: {err['msg']}")
    shown = messages[:MAX_ERRORS_LISTED]
    return "; ".join(shown), {"errors": shown}
