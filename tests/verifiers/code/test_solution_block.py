"""The solution block, not the example after it.

The class: a correct response that gives its solution in one fenced block and then
shows it in use in another (`print(f(3))`, a doctest-like session, a test harness)
used to score 0, because the last block was taken as the program. Where the tests name
what the program defines, the last block that defines it is the program.
"""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.code.extract import extract_code
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_formats import needs_node

SOLUTION = "def add(a, b):\n    return a + b\n"
TRAILERS = {
    "print_use": "print(add(2, 3))\n",
    "assignment_use": "result = add(2, 3)\nprint(result)\n",
    "asserts": "assert add(1, 1) == 2\nassert add(0, 0) == 0\n",
    "main_guard": "if __name__ == '__main__':\n    print(add(1, 2))\n",
    "input_driven": "a, b = map(int, input().split())\nprint(add(a, b))\n",
    "repl": ">>> add(2, 3)\n5\n",
    "other_function": "def show():\n    print(add(2, 3))\n\nshow()\n",
}
TAGS = ["python", "py", "Python3", ""]


def _response(solution: str, trailer: str, tag: str = "python") -> str:
    return (
        f"Here is the solution:\n\n```{tag}\n{solution}```\n\nExample usage:\n\n```{tag}\n{trailer}```\nThis prints 5."
    )


GROUND_TRUTHS: dict[str, dict[str, Any]] = {
    "values": {"tests": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]},
    "split": {"tests": ["assert abs(add(0.5, 0.25) - 0.75) < 1e-9"]},
    "call": {"fn_name": "add", "inputs": [[1, 2], [5, 5]], "outputs": [3, 10]},
    "check": {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"},
}


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("form", sorted(GROUND_TRUTHS))
@pytest.mark.parametrize("trailer", sorted(TRAILERS))
def test_solution_then_example_passes(trailer: str, form: str) -> None:
    out = grade(_response(SOLUTION, TRAILERS[trailer]), GROUND_TRUTHS[form])
    assert out.score == 1.0, (out.verdict, out.reason)
    wrong = grade(_response("def add(a, b):\n    return a - b\n", TRAILERS[trailer]), GROUND_TRUTHS[form])
    assert wrong.score == 0.0 and not wrong.mask


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("trailer", sorted(TRAILERS))
def test_the_defining_block_is_extracted(trailer: str, tag: str) -> None:
    assert extract_code(_response(SOLUTION, TRAILERS[trailer], tag), "python", ["add"]) == SOLUTION


@pytest.mark.parametrize(
    "definition",
    [
        "def add(a, b):",
        "async def add(a, b):",
        "class add:",
        "class add(object):",
        "add = lambda a, b: a + b",
        "add: Any = 1",
    ],
)
def test_python_definition_forms(definition: str) -> None:
    block = f"{definition}\n    pass\n" if definition.endswith(":") else f"{definition}\n"
    assert extract_code(_response(block, "print(1)\n"), "python", ["add"]) == block


def test_a_later_definition_wins() -> None:
    """A first try, then a fix, then an example: the fix is the program."""
    first, fixed = "def add(a, b):\n    return a - b\n", SOLUTION
    response = f"```python\n{first}```\nOops, fixed:\n```python\n{fixed}```\nUse:\n```python\nprint(add(1, 2))\n```\n"
    assert extract_code(response, "python", ["add"]) == fixed


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ([], "print(add(1, 2))\n"),  # stdio tests name nothing: the last block
        (["mul"], "print(add(1, 2))\n"),  # no block defines it: the last block
        (["addition"], "print(add(1, 2))\n"),  # a prefix of a name is not the name
    ],
)
def test_without_a_defining_block_the_last_one_is_taken(names: list[str], expected: str) -> None:
    response = _response(SOLUTION, "print(add(1, 2))\n")
    assert extract_code(response, "python", names) == expected
    assert extract_code(_response("def addition(a, b):\n    pass\n", expected), "python", ["add"]) == expected


@pytest.mark.usefixtures("isolated")
def test_solution_class_for_call_tests() -> None:
    solution = "class Solution:\n    def add(self, a, b):\n        return a + b\n"
    gt = {"fn_name": "add", "inputs": [[1, 2]], "outputs": [3]}
    assert extract_code(_response(solution, "print(Solution().add(1, 2))\n"), "python", ["add", "Solution"]) == solution
    assert grade(_response(solution, "print(Solution().add(1, 2))\n"), gt).score == 1.0


@needs_node
@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize(
    "solution",
    [
        "function add(a, b) {\n  return a + b;\n}\n",
        "const add = (a, b) => a + b;\n",
        "export function add(a, b) {\n  return a + b;\n}\n",
    ],
)
def test_javascript_solution_then_example(solution: str) -> None:
    response = f"```javascript\n{solution}```\nUsage:\n```js\nconsole.log(add(2, 3));\n```\n"
    assert extract_code(response, "javascript", ["add"]) == solution
    if not solution.startswith("export"):
        gt = {"fn_name": "add", "inputs": [[1, 2]], "outputs": [3], "language": "javascript"}
        assert grade(response, gt).score == 1.0
