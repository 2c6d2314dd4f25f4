"""A grade request is validated a chunk at a time: errors name the right item and
reference wherever the chunk starts, and at most `MAX_ERRORS_LISTED` are built."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.service.errors import BadRequest
from rlvr.service.grade_body import VALIDATION_CHUNK, validate_grade
from rlvr.service.models import VerifierRef
from rlvr.service.planning import MAX_ERRORS_LISTED

OK = {"response": "x", "verifier": "format"}


def errors_of(value: Any) -> list[str]:
    with pytest.raises(BadRequest) as caught:
        validate_grade(value)
    errors: list[str] = caught.value.details["errors"]
    return errors


def test_a_valid_request_is_all_there_in_order() -> None:
    refs = [{"name": "format", "weight": i} for i in range(3 * VALIDATION_CHUNK + 5)]
    items = [{**OK, "id": str(i)} for i in range(5 * VALIDATION_CHUNK)] + [{**OK, "verifier": refs}]
    request = validate_grade({"items": items, "strict": True})
    assert [item.id for item in request.items[:-1]] == [str(i) for i in range(5 * VALIDATION_CHUNK)]
    last = request.items[-1].verifier
    assert isinstance(last, list) and [r.weight for r in last] == list(range(3 * VALIDATION_CHUNK + 5))
    assert all(isinstance(r, VerifierRef) for r in last)
    assert request.strict is True


def test_errors_name_items_past_the_first_chunk() -> None:
    n = 3 * VALIDATION_CHUNK + 7
    items = [OK] * n + [{"response": 1, "verifier": "format"}]
    assert errors_of({"items": items}) == [f"items[{n}].response: Input should be a valid string"]


def test_errors_name_references_of_a_long_list() -> None:
    refs = [{"name": "format"}] * (2 * VALIDATION_CHUNK + 3) + [{"name": "format", "weight": "x"}]
    errors = errors_of({"items": [OK, {**OK, "verifier": refs}]})
    assert errors == [
        f"items[1].verifier[{2 * VALIDATION_CHUNK + 3}].weight: Input should be a valid number, "
        "unable to parse string as a number"
    ]


def test_at_most_the_listed_errors_are_reported_of_very_many() -> None:
    items = [{"response": 1, "prompt": 1, "verifier": [{"name": "", "weight": "x"}] * 5}] * 10_000
    errors = errors_of({"items": items})
    assert len(errors) == MAX_ERRORS_LISTED
    assert errors[0].startswith("items[0].")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"items": [OK], "zzz": 1}, "zzz: Extra inputs are not permitted"),
        ({"items": [{**OK, "bogus": 1}]}, "items[0].bogus: Extra inputs are not permitted"),
        (
            {"items": [{**OK, "verifier": [{"name": "a", "x": 1}]}]},
            "items[0].verifier[0].x: Extra inputs are not permitted",
        ),
    ],
)
def test_unknown_keys_are_named(value: dict[str, Any], expected: str) -> None:
    assert errors_of(value) == [expected]


def test_a_million_unknown_keys_name_only_the_first_few() -> None:
    item = {**OK, **{f"k{i}": 0 for i in range(100_000)}}
    errors = errors_of({"items": [item]})
    assert len(errors) == MAX_ERRORS_LISTED and errors[0] == "items[0].k0: Extra inputs are not permitted"
