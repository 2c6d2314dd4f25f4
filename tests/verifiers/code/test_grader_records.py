"""The grader's half of "the program cannot choose to be masked": the record decoder,
the comparator and the record handling are total over whatever records arrive.

In call and values mode the program runs in the runner's own process and can write
anything to the record channel; whatever arrives (any JSON `json.loads` can return,
any wire tag with any body, any nesting) must come out as a score, never as an
exception (which masks the item) and never as a mask.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr.sandboxes import RunResult, Status
from rlvr.sandboxes.jobs import (
    CallJob,
    NativeCallJob,
    NativeStdioJob,
    SplitJob,
    StdioJob,
    TestedJob,
    ValuesJob,
)
from rlvr.sandboxes.runner import wire
from rlvr.verifiers.code import CodeParams, compare
from rlvr.verifiers.code.grading import Prepared, grade

TAGS = ["$t", "$s", "$fs", "$d", "$c", "$f", "$b", "$h", "$type", "$", "$x", "$T"]
# An expected value no generated record holds by chance: every test must fail.
SENTINEL = "expected-7f3a9c-unreachable"
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

huge_ints = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from([10**308, -(10**308), 2**1024, 10**4000, -(10**4299)]),
)
floats = st.floats(allow_nan=True, allow_infinity=True)
scalars = st.one_of(st.none(), st.booleans(), huge_ints, floats, st.text(max_size=20))


def _tagged(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Dicts shaped like wire tags, with bodies of any shape."""
    body = st.one_of(children, st.lists(children, max_size=4), st.lists(st.lists(children, max_size=3), max_size=3))
    single = st.builds(lambda tag, b: {tag: b}, st.sampled_from(TAGS), body)
    handle = st.builds(lambda h, t: {"$h": h, "$type": t}, children, children)
    return st.one_of(single, handle)


json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.one_of(st.text(max_size=5), st.sampled_from(TAGS)), children, max_size=4),
        _tagged(children),
    ),
    max_leaves=30,
)


def _nested(kind: str, depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"list": [value], "dict": {"k": value}, "$t": {"$t": [value]}, "$d": {"$d": [[1, value]]}}[kind]
    return value


# ---------------------------------------------------------------- wire


@FUZZ
@given(json_values)
def test_decode_raises_only_wire_errors(data: Any) -> None:
    try:
        value = wire.decode(data)
    except wire.WireError:
        return
    try:
        wire.to_json(value)
    except wire.Unsupported:
        pass


@pytest.mark.parametrize("kind", ["list", "dict", "$t", "$d"])
@pytest.mark.parametrize("depth", [wire.MAX_DEPTH - 1, wire.MAX_DEPTH + 1, 500, 900])
def test_deep_nesting_is_refused_not_crashed(kind: str, depth: int) -> None:
    data = _nested(kind, depth)
    if depth <= wire.MAX_DEPTH:
        assert wire.decode(data) == wire.decode(wire.encode(wire.decode(data)))
    else:
        with pytest.raises(wire.WireError):
            wire.decode(data)


HOSTILE_PARTS = [10**400, -(10**400), 10**4000, "1" * 400, "nan", None, True, [], {}, [1.0], {"$f": "x"}, 1]


@pytest.mark.parametrize("real", HOSTILE_PARTS)
@pytest.mark.parametrize("position", [0, 1])
def test_forged_complex_parts(real: Any, position: int) -> None:
    body = [real, 0.0] if position == 0 else [0.0, real]
    with pytest.raises(wire.WireError):
        wire.decode({"$c": body})


@pytest.mark.parametrize("tag", ["$t", "$s", "$fs", "$d", "$c", "$f", "$b", "$h", "$nope"])
@pytest.mark.parametrize(
    "body", [None, 1, 10**400, 1.5, math.nan, "abc", "=", "é", [[1]], [[1, 2, 3]], [[[1], 2]], [{"a": 1}], {"a": 1}]
)
def test_every_tag_with_hostile_bodies(tag: str, body: Any) -> None:
    try:
        value = wire.decode({tag: body})
    except wire.WireError:
        return
    # The few that decode are well-formed after all, e.g. a one-member tuple.
    assert type(value) in (tuple, set, frozenset, dict, bytes, float)


plain = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10), st.binary(max_size=10)),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=4), children, max_size=3),
        st.dictionaries(st.integers(), children, max_size=3),
        st.frozensets(st.integers(), max_size=4),
        st.sets(st.text(max_size=3), max_size=4),
        st.complex_numbers(),
    ),
    max_leaves=20,
)


def _same(a: Any, b: Any) -> bool:
    """Equality with nan equal to itself, types exact."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is complex:
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@FUZZ
@given(plain)
def test_every_encoded_value_decodes_to_itself(value: Any) -> None:
    """Totality must not cost correctness: the strict decoder still reads all the
    encoder writes (through JSON, as the channel carries it)."""
    assert _same(wire.decode(json.loads(json.dumps(wire.encode(value)))), value)


# ---------------------------------------------------------------- compare


@FUZZ
@given(json_values, plain)
def test_python_equal_is_total(data: Any, expected: Any) -> None:
    try:
        value = wire.decode(data)
    except wire.WireError:
        value = data
    assert compare.python_equal(value, expected) in (True, False)
    assert compare.python_equal(expected, value) in (True, False)


@FUZZ
@given(json_values, json_values)
def test_json_equal_is_total(actual: Any, expected: Any) -> None:
    assert compare.json_equal(actual, expected) in (True, False)


tokens = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"\A[+-]?[0-9]{0,30}(\.[0-9]{0,30})?([eE][+-]?[0-9]{0,6})?\Z"),
    st.sampled_from(["nan", "inf", "-inf", "1e999999", "1_000", "0x1f", "١٢", "\u00b2", ".", "e", "+", "-"]),
)
outputs = st.lists(st.lists(tokens, max_size=4).map(" ".join), max_size=4).map("\n".join)


@FUZZ
@given(outputs, outputs)
def test_stdout_equal_is_total(actual: str, expected: str) -> None:
    ok, why = compare.stdout_equal(actual, expected)
    assert ok in (True, False) and type(why) is str
    assert compare.stdout_equal(expected, expected) == (True, "")


# ---------------------------------------------------------------- grade


def _prepared(mode: str) -> Prepared:
    expected: list[Any] = [SENTINEL, SENTINEL]
    if mode in ("stdio", "native_stdio"):
        expected = [SENTINEL + "\n", SENTINEL + "\n"]
    language = "javascript" if mode.startswith("native") else "python"
    native = {"timeout_s": 1, "max_output": 1, "memory_mb": 1, "compile_timeout_s": 1}
    job: TestedJob = {
        "values": ValuesJob("", [], timeout_s=1),
        "call": CallJob("", "f", [], timeout_s=1),
        "stdio": StdioJob("", [], timeout_s=1),
        "split": SplitJob("", timeout_s=1),
        "native_call": NativeCallJob(language=language, code="", fn_name="f", inputs=[], **native),
        "native_stdio": NativeStdioJob(language=language, code="", inputs=[], **native),
    }[mode]
    return Prepared(language, 2, job, None, [] if mode == "split" else expected)


MODES = ["values", "call", "stdio", "split", "native_call", "native_stdio"]
record_fields = st.fixed_dictionaries(
    {},
    optional={
        "i": st.one_of(st.integers(-2, 3), st.booleans(), json_values),
        "s": st.one_of(st.sampled_from(["ok", "pass", "fail", "error", "timeout", "memory"]), json_values),
        "v": json_values,
        "j": json_values,
        "e": st.one_of(st.text(), st.just("\ud800"), json_values),
        "load": st.one_of(st.sampled_from(["ok", "error", "timeout", "memory"]), json_values),
        "code": st.one_of(st.integers(-9, 300), json_values),
        "out": st.one_of(st.text(), json_values),
    },
)
records = st.lists(st.one_of(record_fields, st.dictionaries(st.text(max_size=4), json_values, max_size=4)), max_size=8)


def _assert_scored(prep: Prepared, result: RunResult, params: CodeParams) -> None:
    outcome = grade(prep, params, result)
    assert not outcome.mask
    if prep.mode != "split":  # split records come from the trusted test half, and may say "pass"
        assert outcome.score == 0.0
    # The reason and details reach the trainer as UTF-8 JSON.
    json.dumps([outcome.reason, outcome.details], ensure_ascii=False, allow_nan=False).encode()


@FUZZ
@pytest.mark.parametrize("mode", MODES)
@given(recs=records, status=st.sampled_from(list(Status)), fraction=st.booleans())
def test_grade_scores_any_records_without_masking(
    mode: str, recs: list[dict[str, Any]], status: Status, fraction: bool
) -> None:
    params = CodeParams(reward="fraction" if fraction else "all")
    result = RunResult(status, exit_code=0, records=recs, stdout="x", stderr="Traceback \ud800")
    _assert_scored(_prepared(mode), result, params)


FORGED_VALUES = [
    {"$c": [10**400, 0]},
    {"$c": ["1" * 400, 0]},
    {"$c": [1e308, {"$f": "inf"}]},
    {"$s": [[1], [2]]},
    {"$d": [[[1], 2]]},
    {"$d": [[1]]},
    {"$b": "not base64!"},
    {"$f": "NaN"},
    {"$f": ["nan"]},
    {"$t": "abc"},
    {"$h": 1, "$type": "int"},
    {"$zz": []},
    _nested("list", 900),
    _nested("$d", 300),
    [10**4000] * 3,
    "\ud800\udfff\ud83d",
]


@pytest.mark.parametrize("mode", ["values", "call", "native_call"])
@pytest.mark.parametrize("value", FORGED_VALUES, ids=range(len(FORGED_VALUES)))
@pytest.mark.parametrize("key", ["v", "j", "e"])
def test_forged_value_records(mode: str, value: Any, key: str) -> None:
    recs = [{"load": "ok"}, {"i": 0, "s": "ok", key: value}, {"i": 1, "s": "error", key: value}]
    _assert_scored(_prepared(mode), RunResult(Status.OK, exit_code=0, records=recs), CodeParams())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("field", ["e", "s", "load", "out", "code"])
@pytest.mark.parametrize(
    "value", [None, 10**4000, [[[]]], {"a": {"b": []}}, "\ud800", math.inf, True, _nested("dict", 800)]
)
def test_hostile_field_types(mode: str, field: str, value: Any) -> None:
    recs = [
        {"load": value} if field == "load" else {"load": "ok"},
        {"i": 0, "s": "ok", field: value},
        {"i": 1, field: value},
    ]
    _assert_scored(_prepared(mode), RunResult(Status.OK, exit_code=0, records=recs), CodeParams())


def test_a_right_value_still_scores() -> None:
    """The same path with a record that holds the expected value: 1.0, so the tests
    above fail for the right reason."""
    prep = _prepared("call")
    recs: list[dict[str, Any]] = [{"load": "ok"}, *({"i": i, "s": "ok", "v": SENTINEL} for i in (0, 1))]
    assert grade(prep, CodeParams(), RunResult(Status.OK, exit_code=0, records=recs)).score == 1.0


M61 = 2**61 - 1  # ints that differ by a multiple of it share a hash
COLLIDING: dict[str, Callable[[int], list[Any]]] = {
    "ints": lambda n: [M61 * k for k in range(1, n + 1)],
    "negative_ints": lambda n: [-M61 * k for k in range(1, n + 1)],
    "tuples": lambda n: [{"$t": [M61 * k]} for k in range(1, n + 1)],
    "repeats": lambda n: [7] * n,
}


def _collection(tag: str, members: list[Any]) -> Any:
    return {tag: [[m, 0] for m in members]} if tag == "$d" else {tag: members}


@pytest.mark.parametrize("family", COLLIDING)
@pytest.mark.parametrize("tag", ["$s", "$fs", "$d"])
def test_members_sharing_a_hash_are_refused(tag: str, family: str) -> None:
    """A set of n ints with one hash costs the decoder n**2 probes: 20,000 of them
    (400 KB of record) took 4 s of grader CPU. Past a handful, the value is refused."""
    with pytest.raises(wire.WireError, match="share a hash"):
        wire.decode(_collection(tag, COLLIDING[family](200_000)))
    small = wire.decode(_collection(tag, COLLIDING[family](wire.MAX_SHARED_HASH)))
    assert len(small) == (1 if family == "repeats" else wire.MAX_SHARED_HASH)


@pytest.mark.parametrize("tag", ["$s", "$fs", "$d"])
def test_large_ordinary_sets_still_decode(tag: str) -> None:
    members = list(range(-50_000, 50_000))
    assert len(wire.decode(_collection(tag, members))) == len(members)
