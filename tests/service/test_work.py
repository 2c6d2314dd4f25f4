"""Cache keys and unit execution (the part every worker runs)."""

from __future__ import annotations

import hashlib
import json
import math

import msgspec
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rlvr.service.work import (
    CANONICAL_PIECE_ENTRIES,
    MAX_DETAILS_CHARS,
    Canonical,
    Unit,
    UnitRunner,
    _BoundedDetails,
    bounded_details,
    canonical,
    prepared_key,
    unit_key,
)
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


def test_details_are_kept_whole_when_small() -> None:
    details = {"gold": "x^2", "passed": 3, "ratio": 0.5, "tests": [{"ok": True}, None], "inf": math.inf}
    assert bounded_details(details) == {**details, "inf": "inf"}


@pytest.mark.parametrize(
    "details",
    [
        {"gold": "x" * (1 << 20), "gold_normalized": "y" * (1 << 20)},
        {"untrusted_names": [f"name{i}" for i in range(100_000)]},
        {"nested": [[["z" * 1000] * 100] * 100]},
        {f"k{i}": i for i in range(100_000)},
    ],
    ids=["echoed gold", "long list", "nested", "many keys"],
)
def test_details_are_bounded_whatever_a_verifier_puts_in_them(details: dict[str, object]) -> None:
    kept = bounded_details(details)
    assert len(json.dumps(kept, allow_nan=False)) < 4 * MAX_DETAILS_CHARS
    assert kept["details_truncated"] is True
    assert set(kept) <= {*details, "details_truncated"}


def test_odd_values_in_details_become_text() -> None:
    kept = bounded_details({"big": 10**5000, "obj": object(), "nan": math.nan})
    assert kept["big"] == "<an integer of 16610 bits>"
    assert kept["obj"].startswith("<object object at")
    assert kept["nan"] == "nan"


def test_details_that_are_not_a_dict_are_kept_as_a_value() -> None:
    assert bounded_details([1, 2]) == {"value": [1, 2]}


def _walked(details: dict[str, object]) -> dict[str, object]:
    """`bounded_details` by the full walk alone, as it was before its shortcut."""
    bounded = _BoundedDetails()
    kept: dict[str, object] = bounded.value(details)
    if bounded.cut:
        kept["details_truncated"] = True
    return kept


_PLAIN = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=700),
    st.builds(lambda n: "x" * n, st.integers(min_value=0, max_value=2 * MAX_DETAILS_CHARS)),
)
_DETAILS = st.dictionaries(
    st.text(max_size=30),
    st.one_of(_PLAIN, st.lists(_PLAIN, max_size=6), st.dictionaries(st.text(max_size=5), _PLAIN, max_size=3)),
    max_size=8,
)


@given(_DETAILS)
@example({"a": "x" * (MAX_DETAILS_CHARS - 2)})  # one under the bound with its key
@example({"a": "x" * (MAX_DETAILS_CHARS - 1)})  # at the bound: the walk cuts nothing either
@example({"a": "x" * MAX_DETAILS_CHARS})
@example({"a": ["y" * 1000, "z" * 1000], "b": 1.5})
def test_the_shortcut_for_plain_details_keeps_what_the_walk_does(details: dict[str, object]) -> None:
    kept = bounded_details(details)
    assert json.dumps(kept, sort_keys=True) == json.dumps(_walked(details), sort_keys=True)
    assert kept is not details
