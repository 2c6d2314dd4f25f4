"""`decode_json`: what the service reads a body as, whatever its size."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.service.bodies import MAX_JSON_DEPTH, decode_json
from rlvr.service.errors import BadRequest


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (b"1234567890123456789012345", 1234567890123456789012345),
        (b"-99999999999999999999", -99999999999999999999),
        (b'{"a": [1.5, -0.0, 1e300], "b": null}', {"a": [1.5, -0.0, 1e300], "b": None}),
        (b'"a\\u0000b\\ud83d\\ude00"', "a\x00b\U0001f600"),
        (b'{"a:": "x\\":[{", "b": {"a": 1}}', {"a:": 'x":[{', "b": {"a": 1}}),
    ],
)
def test_values_are_read_exactly(body: bytes, value: Any) -> None:
    assert decode_json(body) == value


def test_values_nested_to_the_limit_are_read() -> None:
    value = decode_json(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH)
    for _ in range(MAX_JSON_DEPTH - 1):
        [value] = value
    assert value == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"a": 1, "a": 2}', "the key 'a' appears twice"),
        (b'[{"x": {"b": 1, "c": {"b": 1, "b": 2}}}]', "the key 'b' appears twice"),
        (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), f"nested deeper than {MAX_JSON_DEPTH}"),
        (b"[" * 5000 + b"]" * 5000, f"nested deeper than {MAX_JSON_DEPTH}"),
        (b"[NaN]", "not valid JSON"),
        (b"[1e400]", "not valid JSON"),
        (b'"\\ud800"', "not valid JSON"),
        (b"\xef\xbb\xbf{}", "not valid JSON"),
        (b'{"a": "x\ny"}', "not valid JSON"),
        (b"{} x", "not valid JSON"),
        (b"", "not valid JSON"),
    ],
)
def test_bodies_json_leaves_undefined_or_forbids_are_refused(body: bytes, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        decode_json(body)
