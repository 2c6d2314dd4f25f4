"""Call-based outputs wrapped in a list of one, as APPS and TACO store them.

The class: APPS and TACO keep each call-based expected output as `[value]`, and their
harness passes a program whose result equals `outputs[i]` or `outputs[i][0]`. Graded
against such a ground truth as it is, every correct program that returned the value
itself scored 0. A ground truth that says so (`outputs_wrapped`) now passes the value
inside too. It is not inferred from the outputs' shape: a LeetCode task whose answers
are lists of one would then pass their element, a wrong answer.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from tests.verifiers.code.conftest import _GT, grade
from tests.verifiers.code.test_formats import needs_node

pytestmark = pytest.mark.usefixtures("isolated")

# (inputs, the values a correct f returns, a Python f that returns them)
TASKS: dict[str, tuple[list[list[Any]], list[Any], str]] = {
    "int": ([[1], [2], [5]], [2, 4, 10], "def f(x):\n    return 2 * x\n"),
    "str": ([["ab"], ["x"]], ["ba", "x"], "def f(s):\n    return s[::-1]\n"),
    "list": ([[3], [1]], [[0, 1, 2], [0]], "def f(n):\n    return list(range(n))\n"),
    "bool": ([[2], [3]], [True, False], "def f(n):\n    return n % 2 == 0\n"),
    "two_args": ([[1, 2], [3, 4]], [3, 7], "def f(a, b):\n    return a + b\n"),
    "float": ([[1], [3]], [0.5, 1.5], "def f(x):\n    return x / 2\n"),
    "nested": ([[2]], [[[0, 0], [0, 0]]], "def f(n):\n    return [[0] * n for _ in range(n)]\n"),
}


def _wrapped(values: list[Any]) -> list[Any]:
    return [[value] for value in values]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_the_value_inside_passes(task: str) -> None:
    inputs, values, program = TASKS[task]
    out = grade(program, {"fn_name": "f", "inputs": inputs, "outputs": _wrapped(values), "outputs_wrapped": True})
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_without_the_flag_the_value_inside_fails(task: str) -> None:
    inputs, values, program = TASKS[task]
    out = grade(program, {"fn_name": "f", "inputs": inputs, "outputs": _wrapped(values)})
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_the_wrapped_value_passes_as_well(task: str) -> None:
    inputs, values, program = TASKS[task]
    wrapping = program.replace("    return ", "    return [").rstrip("\n") + "]\n"
    out = grade(wrapping, {"fn_name": "f", "inputs": inputs, "outputs": _wrapped(values), "outputs_wrapped": True})
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_a_wrong_value_fails_wrapped_or_not(task: str) -> None:
    inputs, values, program = TASKS[task]
    body = program.split("    return ")[1].strip()
    wrongs = ["def f(*args):\n    return None\n", program.replace(body, f"[[{body}]]")]
    if task != "bool":
        wrongs.append(program.replace(body, f"({body}) * 2"))
    for wrong in wrongs:
        for gt in (
            {"outputs": values},
            {"outputs": _wrapped(values), "outputs_wrapped": True},
            {"outputs": _wrapped(values)},
        ):
            out = grade(wrong, {"fn_name": "f", "inputs": inputs, **gt})
            assert out.score == 0.0 and not out.mask, (wrong, out.reason)


@pytest.mark.parametrize(
    "outputs",
    [[[2], 4, [10]], [[2], [4, 4], [10]], [[2], [], [10]], [2, 4, 10]],
    ids=["one_unwrapped", "one_of_two", "one_empty", "none_wrapped"],
)
def test_the_flag_wants_every_output_a_list_of_one(outputs: list[Any], http: httpx.Client) -> None:
    gt = {"fn_name": "f", "inputs": [[1], [2], [5]], "outputs": outputs, "outputs_wrapped": True}
    with pytest.raises(ValidationError, match="outputs_wrapped"):
        _GT.validate_python(gt)
    item = {"prompt": "", "response": "x", "verifier": "code", "ground_truth": gt}
    r = http.post("/v1/grade", json={"items": [item], "strict": True})
    assert r.status_code == 422 and "items[0].ground_truth" in r.text and "outputs_wrapped" in r.text, r.text
    result = http.post("/v1/grade", json={"items": [item]}).json()["results"][0]
    assert result["mask"] is True and "outputs_wrapped" in result["reason"]


def test_a_leetcode_answer_that_is_a_list_of_one_keeps_its_shape() -> None:
    """Without the flag, an answer that is a list of one is that list: its element is
    wrong (a task returning the indices of duplicates, each test with one)."""
    gt = {"fn_name": "f", "inputs": [[[1, 1, 2]], [[3, 4, 3]]], "outputs": [[1], [3]]}
    assert grade("def f(xs):\n    return sorted({x for x in xs if xs.count(x) > 1})\n", gt).score == 1.0
    assert grade("def f(xs):\n    return max(xs, key=xs.count)\n", gt).score == 0.0


@needs_node
@pytest.mark.parametrize("returned", ["2 * x", "[2 * x]"])
def test_javascript(returned: str) -> None:
    gt = {
        "fn_name": "f",
        "inputs": [[1], [2]],
        "outputs": [[2], [4]],
        "language": "javascript",
        "outputs_wrapped": True,
    }
    out = grade(f"```javascript\nfunction f(x) {{ return {returned}; }}\n```", gt, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)
