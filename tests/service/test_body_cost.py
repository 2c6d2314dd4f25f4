"""A body's cost in objects is known before it is decoded: the counts outside strings are
exact, the first bound is never below them, and the estimate is never below what msgspec
really allocates."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.service.body_cost import STRINGS_PER_SPAN, ShapeError, grade_shape, outline, upper_cost, value_cost

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=40,
)


def census(value: Any) -> dict[str, int]:
    counts = {"containers": 0, "strings": 0, "keys": 0}
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            counts["strings"] += 1
        elif isinstance(node, dict):
            counts["containers"] += 1
            counts["keys"] += len(node)
            counts["strings"] += len(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            counts["containers"] += 1
            stack.extend(node)
    return counts


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 1]))
def test_counts_outside_strings_are_exact_and_the_bound_is_above_them(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent).encode()
    counts = outline(text)
    assert census(value) == {"containers": counts.containers, "strings": counts.strings, "keys": counts.keys}
    assert upper_cost(text) >= counts.cost()


def test_strings_full_of_punctuation_and_escapes_count_as_strings() -> None:
    value = {'a\\"': ['x,":[{', "\\", '\\\\"]}'], "b": "::,,[[{{"}
    counts = outline(json.dumps(value).encode())
    assert (counts.containers, counts.keys, counts.strings, counts.separators) == (2, 2, 6, 3)


def test_millions_of_strings_are_counted_a_span_at_a_time() -> None:
    n = 5 * STRINGS_PER_SPAN + 7
    counts = outline(json.dumps({"k": ["a,b"] * n}).encode())
    assert (counts.strings, counts.separators, counts.containers) == (n + 1, n - 1, 2)


DENSE = {
    "empty lists": "[" + ",".join(["[]"] * 20_000) + "]",
    "empty objects": "[" + ",".join(["{}"] * 20_000) + "]",
    "short strings": "[" + ",".join(['"ab"'] * 20_000) + "]",
    "unique keys": "{" + ",".join(f'"k{i}":0' for i in range(20_000)) + "}",
    "floats": "[" + ",".join(["0.5"] * 20_000) + "]",
    "large ints": "[" + ",".join(["123456"] * 20_000) + "]",
    "nested": "[" + ",".join(['{"a":[1,{"b":"xy"}]}'] * 5_000) + "]",
}


@pytest.mark.parametrize("text", DENSE.values(), ids=DENSE.keys())
def test_the_estimate_is_not_below_what_decoding_allocates(text: str) -> None:
    raw = text.encode()
    tracemalloc.start()
    try:
        value = msgspec.json.decode(raw)
        allocated, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert value
    assert outline(raw).cost() >= allocated, (outline(raw).cost(), allocated)


def test_a_grade_shape_counts_items_and_references_and_places_every_value() -> None:
    body = {
        "items": [
            {"response": "x", "verifier": "math", "ground_truth": "4", "metadata": {"k": [1]}},
            {
                "response": "y",
                "verifier": [{"name": "a", "params": {"p": 1}}, {"name": "b", "weight": 2}],
                "params": {},
                "id": 7,
            },
        ],
        "strict": True,
    }
    shape = grade_shape(json.dumps(body).encode())
    assert (shape.items, shape.verifier_refs) == (2, 3)
    places = {where: bytes(raw) for where, raw, _ in shape.values() if raw}
    assert places == {
        "strict": b"true",
        "items[0].response": b'"x"',
        "items[0].ground_truth": b'"4"',
        "items[0].metadata": b'{"k": [1]}',
        "items[1].response": b'"y"',
        "items[1].id": b"7",
        "items[1].params": b"{}",
        "items[1].verifier[0].params": b'{"p": 1}',
        "items[1].verifier[1].weight": b"2",
    }


def test_a_string_costs_its_length_at_the_width_of_its_widest_character() -> None:
    ascii_text, latin, astral = (
        b'"' + b"a" * 1000 + b'"',
        '"é'.encode() + b"a" * 1000 + b'"',
        '"😀'.encode() + b"a" * 1000 + b'"',
    )
    costs = [value_cost(raw, exact=True, ascii_body=False) for raw in (ascii_text, latin, astral)]
    assert costs[0] >= 1000 and costs[1] >= 2000 and costs[2] >= 4000
    assert value_cost(astral, exact=True, ascii_body=False) >= len(msgspec.json.decode(astral)) * 4


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'{"items": "x"}', "items"),
        (b'{"items": [{"response": "x"}]}', "items[0]"),
        (b'{"items": [{"response": "x", "verifier": [{}]}]}', "items[0].verifier[0]"),
        (b'{"items": [{"response": "x", "verifier": "a", "zzz": 1}]}', "items[0]"),
        (b'{"items": [], "zzz": 1}', "body"),
        (b'{"items": [', "body"),
        (b'{"items": [{"response": "", "verifier": "a", "metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}]}", "body"),
    ],
)
def test_a_body_not_of_a_grade_requests_outline_names_the_place(body: bytes, where: str) -> None:
    with pytest.raises(ShapeError) as caught:
        grade_shape(body)
    assert caught.value.where == where
