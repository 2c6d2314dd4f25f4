"""Each ground-truth format and language, right and wrong answers, params."""

from __future__ import annotations

import shutil

import pytest
from pydantic import TypeAdapter, ValidationError

from rlvr.verifiers.code import GroundTruth
from rlvr.verifiers.code.extract import extract_code
from tests.services import in_ci
from tests.verifiers.code.conftest import grade

ADD = "def add(a, b):\n    return a + b\n"
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None and not in_ci(), reason="g++ not installed")
needs_node = pytest.mark.skipif(shutil.which("node") is None and not in_ci(), reason="node not installed")


def test_assert_values_mode_right_and_wrong() -> None:
    gt = {"tests": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]}
    assert grade(ADD, gt).score == 1.0
    out = grade("def add(a, b):\n    return 3\n", gt)
    assert out.score == 0.0 and out.verdict == "incorrect" and not out.mask


def test_assert_split_mode_for_complex_asserts() -> None:
    gt = {"tests": ["assert abs(add(0.1, 0.2) - 0.3) < 1e-9", "assert add(*[1, 2]) in (3,)"], "setup": "import math"}
    assert grade(ADD, gt).score == 1.0
    assert grade("def add(a, b):\n    return a - b\n", gt).score == 0.0


def test_fraction_and_partial() -> None:
    gt = {"tests": ["assert add(1, 1) == 2", "assert add(1, 2) == 4"]}
    out = grade(ADD, gt, reward="fraction")
    assert out.score == 0.5 and out.verdict == "partial"
    assert grade(ADD, gt).score == 0.0


def test_humaneval_style() -> None:
    gt = {"test": "def check(candidate):\n    assert candidate([1, 2]) == (1, 2)\n", "entry_point": "f"}
    assert grade("def f(x):\n    return tuple(x)\n", gt).score == 1.0
    assert grade("def f(x):\n    return list(x)\n", gt).score == 0.0


def test_call_based_exact_types_and_float_tolerance() -> None:
    gt = {"fn_name": "f", "inputs": [[1], [2]], "outputs": [0.3333333333, True]}
    assert grade("def f(x):\n    return 1/3 if x == 1 else True\n", gt).score == 1.0
    assert grade("def f(x):\n    return 1/3 if x == 1 else 1\n", gt).score == 0.0


def test_call_based_solution_class() -> None:
    gt = {"fn_name": "twice", "inputs": [[[1, 2]]], "outputs": [[2, 4]]}
    code = "class Solution:\n    def twice(self, xs):\n        return [2 * x for x in xs]\n"
    assert grade(code, gt).score == 1.0


def test_stdio_whitespace_and_line_count() -> None:
    gt = {"inputs": ["1 2\n"], "outputs": ["3\n4\n"]}
    assert grade("a, b = map(int, input().split())\nprint(a + b, ' ')\nprint(a + 3)\n", gt).score == 1.0
    assert grade("a, b = map(int, input().split())\nprint(a + b)\n", gt).score == 0.0
    assert grade("print(3)\nprint(4)\nprint(5)\n", gt).score == 0.0


def test_no_code_and_syntax_error() -> None:
    gt = {"tests": ["assert add(1, 2) == 3"]}
    assert grade("   ", gt).verdict == "no_answer"
    out = grade("```python\ndef add(a, b) return\n```", gt)
    assert out.verdict == "incorrect" and "SyntaxError" in out.reason


def test_timeout_is_the_programs_fault() -> None:
    out = grade("def add(a, b):\n    while True:\n        pass\n", {"tests": ["assert add(1, 2) == 3"]}, timeout_s=0.5)
    assert out.score == 0.0 and out.verdict == "timeout" and not out.mask


def test_stop_on_failure() -> None:
    gt = {"tests": ["assert add(1, 2) == 4", "assert add(1, 1) == 2"], "setup": "pass"}
    out = grade(ADD, gt, stop_on_failure=True, reward="fraction")
    assert out.score == 0.0


@needs_gxx
def test_cpp_stdio_and_compile_error() -> None:
    gt = {"inputs": ["2 3\n", "10 20\n"], "outputs": ["5\n", "30\n"], "language": "cpp"}
    code = '```cpp\n#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b);}\n```'
    assert grade(code, gt).score == 1.0
    out = grade("```cpp\nint main() { return x; }\n```", gt)
    assert out.verdict == "incorrect" and "error" in out.reason and not out.mask


@needs_node
def test_javascript_stdio_and_call() -> None:
    stdio = {"inputs": ["2 3\n"], "outputs": ["5\n"], "language": "javascript"}
    code = "const [a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);console.log(a+b);"
    assert grade(f"```js\n{code}\n```", stdio).score == 1.0
    call = {"fn_name": "add", "inputs": [[1, 2], [0.5, 0.25]], "outputs": [3, 0.75], "language": "js"}
    assert grade("```javascript\nfunction add(a, b) { return a + b; }\n```", call).score == 1.0
    assert grade("```javascript\nconst add = (a, b) => a - b;\n```", call).score == 0.0
    assert grade("```javascript\nfunction add(a, b) { return a + ; }\n```", call).verdict == "incorrect"


def test_extract_last_matching_block() -> None:
    text = "x\n```python\nA\n```\n```js\nB\n```\n```py\nC\n```\ntail"
    assert extract_code(text, "python") == "C\n"
    assert extract_code(text, "javascript") == "B\n"
    assert extract_code("plain code", "python") == "plain code"
    assert extract_code("```python\nunterminated", "python") == "unterminated"


@pytest.mark.parametrize(
    "bad",
    [
        {"tests": []},
        {"tests": ["assert 1"], "language": "cpp"},
        {"tests": ["x" * 70_000]},
        {"fn_name": "1bad", "inputs": [[1]], "outputs": [1]},
        {"fn_name": "f", "inputs": [[1]], "outputs": [1, 2]},
        {"inputs": ["1"], "outputs": ["1"], "language": "cobol"},
        {"test": "def check(c): pass", "entry_point": "f", "extra": 1},
        {"tests": ["assert True"] * 501},
    ],
)
def test_ground_truth_validation(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(GroundTruth).validate_python(bad)
