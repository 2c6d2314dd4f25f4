"""The code verifier's ground truth: each form is told by the key only it has, and a
ground truth is checked against that form alone."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from rlvr.service.planning import format_loc
from rlvr.verifiers.code.models import AssertTests, CallTests, GroundTruth, HumanEvalTests, StdioTests

ADAPTER: TypeAdapter[Any] = TypeAdapter(GroundTruth)


def _errors(value: Any) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        ADAPTER.validate_python(value)
    return [f"{format_loc('ground_truth', e['loc'])}: {e['msg']}" for e in caught.value.errors()]


@pytest.mark.parametrize(
    ("value", "form"),
    [
        ({"tests": ["assert f() == 1"]}, AssertTests),
        ({"test": "def check(c): pass", "entry_point": "f"}, HumanEvalTests),
        ({"fn_name": "f", "inputs": [[1]], "outputs": [1]}, CallTests),
        ({"inputs": ["1\n"], "outputs": ["1\n"]}, StdioTests),
        (StdioTests(inputs=["1"], outputs=["2"]), StdioTests),
    ],
)
def test_each_form_is_read_as_itself(value: Any, form: type) -> None:
    assert type(ADAPTER.validate_python(value)) is form


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"tests": 5}, ["ground_truth(AssertTests).tests: Input should be a valid list"]),
        ({"fn_name": "f", "inputs": [[1]], "outputs": [1], "zz": 1}, ["ground_truth(CallTests).zz: Extra inputs"]),
        ({"inputs": ["1"], "outputs": [2]}, ["ground_truth(StdioTests).outputs[0]: Input should be a valid string"]),
        ({"entry_point": "f"}, ["ground_truth(HumanEvalTests).test: Field required"]),
    ],
)
def test_a_wrong_ground_truth_is_told_its_own_forms_errors_only(value: Any, expected: list[str]) -> None:
    errors = _errors(value)
    assert len(errors) == len(expected), errors
    assert all(error.startswith(prefix) for error, prefix in zip(errors, expected, strict=True)), errors


@pytest.mark.parametrize("value", [{"zz": 1}, {}, [], "assert f() == 1", 5, None])
def test_a_ground_truth_in_no_form_is_told_the_forms(value: Any) -> None:
    [error] = _errors(value)
    assert "a code ground truth has `tests` (asserts)" in error


def test_unknown_keys_cost_one_error_each_not_one_per_form() -> None:
    value = {"tests": ["assert True"], **{f"k{i}": 0 for i in range(500)}}
    assert len(_errors(value)) == 500
