"""Cache keys and unit execution (the part every worker runs)."""

from __future__ import annotations

import hashlib
import math

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.service.work import CANONICAL_PIECE_ENTRIES, Canonical, Unit, UnitRunner, canonical, prepared_key, unit_key
from rlvr.verifiers.registry import Registry


def key(name: str = "math", version: str = "1", params: object = None, gt: object = "1", resp: str = "r") -> str:
    return unit_key(prepared_key(name, version, canonical(params or {}), canonical(gt)), "", resp)


def test_cache_key_covers_every_component() -> None:
    base = key()
    assert key() == base
    assert key(name="code") != base
    assert key(version="2") != base
    assert key(params={"a": 1}) != base
    assert key(gt="2") != base
    assert key(resp="r ") != base


def test_cache_key_ignores_dict_order_but_not_list_order() -> None:
    assert key(params={"a": 1, "b": 2}) == key(params={"b": 2, "a": 1})
    assert key(gt=[1, 2]) != key(gt=[2, 1])


def test_cache_key_fields_cannot_collide_by_concatenation() -> None:
    assert key(name="ab", version="c") != key(name="a", version="bc")


def test_runner_executes_and_caches_prepared_ground_truth() -> None:
    runner = UnitRunner(Registry())
    params = {"preset": "think_answer"}
    prep = prepared_key("format", "1.0.0", canonical(params), canonical(None))
    unit = Unit(unit_key(prep, "", "x"), prep, "format", params, None, "", "<think>a</think><answer>b</answer>", 5)
    result = runner.run(unit)
    assert (result.score, result.verdict, result.mask) == (1.0, "correct", False)
    assert result.elapsed_ms >= 0 and math.isfinite(result.elapsed_ms)
    assert prep in runner._prepared


def test_runner_turns_verifier_bugs_into_masked_errors() -> None:
    runner = UnitRunner(Registry())
    unit = Unit("k", "p", "format", {"preset": "nope"}, None, "", "x", 5)
    result = runner.run(unit)
    assert result.mask is True and result.verdict == "error"
    assert "ValidationError" in result.reason
    assert result.to_dict()["mask"] is True


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner, max_size=6),
    max_leaves=40,
)


@given(_JSON)
def test_a_value_is_keyed_by_its_whole_canonical_json(value: object) -> None:
    text = msgspec.json.encode(value, order="sorted")
    assert canonical(value) == Canonical(hashlib.blake2b(text, digest_size=16).digest(), len(text))


@pytest.mark.parametrize(
    "value",
    [
        [1.5e15] * (3 * CANONICAL_PIECE_ENTRIES + 7),
        {"b": [[j, "é"] for j in range(CANONICAL_PIECE_ENTRIES + 1)], "a": {"z": [None] * 5000, "y": []}},
        [[[[list(range(9000))]]]],
        [{"k": [0.5] * (CANONICAL_PIECE_ENTRIES + 1)}],
    ],
    ids=["long list", "nested long lists", "deeper than the pieces", "one-entry pieces"],
)
def test_a_large_value_hashed_in_pieces_is_keyed_as_if_whole(value: object) -> None:
    text = msgspec.json.encode(value, order="sorted")
    assert canonical(value) == Canonical(hashlib.blake2b(text, digest_size=16).digest(), len(text))


@pytest.mark.parametrize("value", [object(), [1, {"a": object()}], "\ud800"])
def test_a_value_that_is_not_json_data_is_refused(value: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        canonical(value)
