"""`decode_json`: what the service reads a body as, whatever its size."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.service.bodies import MAX_JSON_DEPTH, BodyLimits, BodyParser, decode_json
from rlvr.service.errors import BadRequest
from rlvr.service.settings import DEFAULT_MAX_OBJECT_KEYS


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
    assert decode_json(body, DEFAULT_MAX_OBJECT_KEYS) == value


def test_values_nested_to_the_limit_are_read() -> None:
    value = decode_json(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH, DEFAULT_MAX_OBJECT_KEYS)
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
        decode_json(body, DEFAULT_MAX_OBJECT_KEYS)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"a": {' + b",".join(b'"k%d": 0' % i for i in range(17)) + b"}}", "of 17 keys, over the limit of 16"),
        (b"[" + b",".join([b'{"k": 0}'] * 100) + b"]", None),
        (b'{"a": {' + b",".join(b'"k%d": 0' % i for i in range(16)) + b"}}", None),
    ],
    ids=["one object too wide", "many narrow objects", "at the limit"],
)
def test_keys_are_counted_per_object(body: bytes, message: str | None) -> None:
    if message is None:
        decode_json(body, 16)
    else:
        with pytest.raises(BadRequest, match=message):
            decode_json(body, 16)


def _grade_body(second_ground_truth: str) -> bytes:
    items = [
        f'{{"response": "x", "verifier": "format", "ground_truth": {gt}}}' for gt in ('{"a": 1}', second_ground_truth)
    ]
    return ('{"items": [' + ", ".join(items) + "]}").encode()


@pytest.mark.parametrize(
    ("ground_truth", "message"),
    [
        ('{"a": 1, "b": {"c": 1, "c": 2}}', "items[1].ground_truth: the key 'c' appears twice in one object"),
        ("{" + ",".join(f'"k{i}": 0' for i in range(17)) + "}", "items[1].ground_truth: an object of 17 keys"),
    ],
)
def test_a_grade_request_names_the_value_whose_keys_are_at_fault(ground_truth: str, message: str) -> None:
    parser = BodyParser(BodyLimits(10, 10, 6.0, 1 << 20, max_object_keys=16), concurrency=1)
    with pytest.raises(BadRequest) as caught:
        parser.parse_grade(_grade_body(ground_truth))
    assert caught.value.message.startswith(message), caught.value.message


def test_a_key_repeated_outside_the_free_form_values_is_named_in_the_body() -> None:
    parser = BodyParser(BodyLimits(10, 10, 6.0, 1 << 20, max_object_keys=16), concurrency=1)
    with pytest.raises(BadRequest, match="body: the key 'response' appears twice"):
        parser.parse_grade(b'{"items": [{"response": "x", "response": "y", "verifier": "format"}]}')


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (b'{"\xc3\xa9": 1, "\\u00e9": 2}', "é"),
        (b'{"\xe2\x82\xac": 1, "\\u20ac": 2}', "€"),
        (b'{"\xf0\x9f\x98\x80": 1, "\\ud83d\\ude00": 2}', "\U0001f600"),
        (b'{"a": "\xf0\x9f\x98\x80", "b": {"\xc3\xa9x": 1, "\xc3\xa9x": 2}}', "éx"),
    ],
    ids=["raw and escaped Latin-1", "raw and escaped BMP", "raw and escaped astral", "beside a wide string"],
)
def test_a_key_written_two_ways_is_the_same_key(body: bytes, key: str) -> None:
    with pytest.raises(BadRequest, match=f"the key {key!r} appears twice"):
        decode_json(body, DEFAULT_MAX_OBJECT_KEYS)


def test_keys_differing_past_ascii_are_different_keys() -> None:
    assert decode_json('{"é": 1, "è": 2, "e": 3}'.encode(), DEFAULT_MAX_OBJECT_KEYS) == {"é": 1, "è": 2, "e": 3}
