"""A HumanEval check made only of `assert candidate(LITERALS) == LITERAL` runs as
values (one process) instead of split (two): the reward must be the one the check
itself gives, for every problem and for answers that differ from the canonical one in
every way Python's `==` forgives or does not (True for 1, 3.0 for 3, a tuple for a
list, a float off by a hair, a subclass, an object whose `__eq__` lies, an exception,
a slow call, a hostile exit)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.code import CodeParams, CodeVerifier, GroundTruth
from rlvr.verifiers.code import asserts as asserts_module
from rlvr.verifiers.code.asserts import check_calls
from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems

pytestmark = pytest.mark.usefixtures("isolated")

PROBLEMS = load_problems()
VERIFIER = CodeVerifier()
PARAMS = CodeParams(timeout_s=3)
_GT: TypeAdapter[Any] = TypeAdapter(GroundTruth)

# How an answer's return value `r` is changed (a wrapper around the canonical solution).
CHANGES = {
    "same": "r",
    "bool_as_int": "int(r) if type(r) is bool else r",
    "int_as_float": "float(r) if type(r) is int else r",
    "float_off_by_a_hair": "r * (1 + 1e-12) if type(r) is float and r else r",
    "list_as_tuple": "tuple(r) if type(r) is list else r",
    "tuple_as_list": "list(r) if type(r) is tuple else r",
    "str_subclass": "type('S', (str,), {})(r) if type(r) is str else r",
    "int_subclass": "type('I', (int,), {})(r) if type(r) is int else r",
    "always_equal": "type('E', (), {'__eq__': lambda s, o: True, '__hash__': lambda s: 0})()",
    "none": "None",
    "wrapped_in_list": "[r]",
    "raises": "(_ for _ in ()).throw(ValueError('no'))",
    "exits": "__import__('os')._exit(0)",
    "iterator_for_sequence": "iter(r) if type(r) in (list, tuple) else r",
    "generator_for_sequence": "(x for x in r) if type(r) in (list, tuple) else r",
    "negated_bool": "(not r) if type(r) is bool else r",
    "float_for_bool": "float(r) if type(r) is bool else r",
    "sorted_sequence": "sorted(r) if type(r) is list else r",
    "reversed_string": "r[::-1] if type(r) is str else r",
}
WRAPPER = """

__rlvr_original = {name}

def {name}(*args, **kwargs):
    r = __rlvr_original(*args, **kwargs)
    return {change}
"""


def converted(problem: dict[str, Any]) -> bool:
    return check_calls(problem["test"], problem["entry_point"]) is not None


def prepared(problem: dict[str, Any], *, as_values: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    gt = _GT.validate_python(ground_truth(problem))
    if as_values:
        return VERIFIER.prepare(PARAMS, gt)
    with monkeypatch.context() as m:
        m.setattr(asserts_module, "check_calls", lambda test, entry_point: None)
        return VERIFIER.prepare(PARAMS, gt)


def test_most_of_humaneval_runs_as_values() -> None:
    assert sum(converted(p) for p in PROBLEMS) >= 155


@pytest.mark.parametrize("change", list(CHANGES))
def test_values_give_the_checks_own_reward(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    problems = [p for p in PROBLEMS if converted(p)]
    responses = [canonical(p) + WRAPPER.format(name=p["entry_point"], change=CHANGES[change]) for p in problems]
    values = [prepared(p, as_values=True, monkeypatch=monkeypatch) for p in problems]
    split = [prepared(p, as_values=False, monkeypatch=monkeypatch) for p in problems]
    assert {v.mode for v in values} == {"values"} and {s.mode for s in split} == {"split"}
    disagree = []
    for problem, response, as_values, as_split in zip(problems, responses, values, split, strict=True):
        item = GradeInput("", response)
        a, b = VERIFIER.verify(item, PARAMS, as_values), VERIFIER.verify(item, PARAMS, as_split)
        if (a.score, a.mask) != (b.score, b.mask):
            disagree.append((problem["task_id"], a.score, a.reason, b.score, b.reason))
        assert a.details["tests"] == 1
    assert not disagree, disagree
