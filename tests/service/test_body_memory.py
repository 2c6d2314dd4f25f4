"""No body grows the API process's peak memory by more than 10x its size, whether it is
refused or graded: hostile shapes (millions of items or references, free-form fields of
empty containers, short strings, unique keys, deep nesting) and legitimate ones, through
a real `rlvr serve`, each on a fresh server so that no earlier request's memory hides
its cost."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from bench.body_memory import SHAPES, measure
from tests.services import Server

BODY_BYTES = 8 * 1024 * 1024
MAX_GROWTH = 10.0
# What any request costs besides its body's objects (its unit, its answer, the allocator).
REQUEST_FLOOR_MB = 4
EXPECTED_STATUS = {
    "refs_bomb": 422,
    "items_bomb": 422,
    "deep": 422,
    "unknown_field": 422,
    "items_three_fields": 422,
    "refs_with_params": 422,
    "openrlhf_many_queries": 422,
    "emoji_ground_truth": 200,
    "many_errors": 422,
    "call_based_groups": 200,
    "refs_distinct_params": 200,
    "slime_call_based_label": 200,
    "code_tests": 200,
    "max_refs_accepted": 200,
    "long_responses": 200,
    "exponent_floats": 200,
    "code_unknown_keys": 200,
    "math_gold_echo": 200,
    "dense_ints_wide_response": 200,
    "call_based_long_argument": 200,
    "refused_items": 200,
    "refused_references": 200,
    "references_to_one_unit": 200,
}
# Requests within the count limits (10,000 items, 50,000 verifier references) but small,
# dense in references: each item and reference costs its objects, and each item its
# answer, whatever the bytes that asked for them (about 20 MiB to parse the largest, 70
# with its answer). Their bound is that absolute cost.
WITHIN_THE_COUNT_LIMITS = {
    "many_errors": 96,
    "max_refs_accepted": 96,
    "refs_distinct_params": 96,
    "math_gold_echo": 96,
    "refused_references": 96,
    "references_to_one_unit": 96,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_peak_memory_stays_within_a_multiple_of_the_body(plugin_dir: Path, shape: str) -> None:
    path, build = SHAPES[shape]
    body = build(BODY_BYTES)
    with Server(plugin_dir, "--workers", "1", cache_entries="0") as server:
        row = measure(server, path, body)
    assert row["status"] == EXPECTED_STATUS.get(shape, 413), row
    floor_mb = WITHIN_THE_COUNT_LIMITS.get(shape, REQUEST_FLOOR_MB)
    assert row["growth_mb"] * 1024 * 1024 <= MAX_GROWTH * len(body) + floor_mb * 1024 * 1024, row


def _ifeval_text(i: int) -> str:
    """IFEval's ground truth as open-instruct stores it, as text, with as many kwargs as
    fit the verifier's cap on text, none of which its instruction takes."""
    kwargs = ",".join(f'"k{i}_{j:05d}": 1' for j in range(4_000))
    return json.dumps(f'[{{"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{{{kwargs}}}]}}]')


def test_a_verifier_reading_text_as_json_is_bounded_too(plugin_dir: Path) -> None:
    """The service cannot count what a verifier reads out of a string; IFEval caps the
    text and reports unknown kwargs once per instruction rather than once per key."""
    items = ",".join(f'{{"response": "x", "verifier": "ifeval", "ground_truth": {_ifeval_text(i)}}}' for i in range(96))
    body = f'{{"items": [{items}]}}'.encode()
    with Server(plugin_dir, "--workers", "1", cache_entries="0") as server:
        # The verifier's own modules (and their data) load on first use: not the body's cost.
        warm = {"items": [{"response": "x", "verifier": "ifeval", "ground_truth": json.loads(_ifeval_text(0))}]}
        assert httpx.post(f"{server.url}/v1/grade", json=warm, timeout=60).status_code == 200
        row = measure(server, "/v1/grade", body)
        answer = httpx.post(f"{server.url}/v1/grade", content=body, timeout=60).json()
    assert row["status"] == 200, row
    assert row["growth_mb"] * 1024 * 1024 <= MAX_GROWTH * len(body) + REQUEST_FLOOR_MB * 1024 * 1024, row
    reasons = {r["reason"] for r in answer["results"]}
    assert all("4000 kwargs that punctuation:no_comma does not take" in reason for reason in reasons), reasons
