"""Programs get the libraries their datasets assume, on both sandbox backends.

The class: real code datasets (KodCode, BigCodeBench, LiveCodeBench, APPS solutions)
import numpy, pandas, scipy and sortedcontainers, and node programs require lodash;
jobs had only what the service's own environment happened to hold (nothing in the
Docker image). Now jobs have a job environment of their own (`rlvr.sandboxes.jobenv`):
pinned, read-only to them, with one BLAS thread. A module it lacks is still the
program's failure: score 0, never a mask.
"""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes.jobenv import pinned
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_formats import needs_node

pytestmark = pytest.mark.usefixtures("code_backend")

PYTHON_CALL = """```python
import numpy as np
import pandas as pd
from scipy import optimize, special
from sortedcontainers import SortedList

def f(xs):
    frame = pd.DataFrame({"x": xs})
    root = optimize.brentq(lambda t: t * t - 2, 0, 2)
    ranks = SortedList(xs)
    return [int(np.sum(frame["x"])), round(root, 6), int(special.comb(len(xs), 2)), ranks[0]]
```"""
CALLS: dict[str, Any] = {
    "fn_name": "f",
    "inputs": [[[3, 1, 2]], [[5, 4]]],
    "outputs": [[6, 1.414214, 3, 1], [9, 1.414214, 1, 4]],
}

PYTHON_STDIO = """```python
import sys
import numpy as np
import pandas as pd
from sortedcontainers import SortedDict

nums = list(map(int, sys.stdin.read().split()))
counts = SortedDict(pd.Series(nums).value_counts().to_dict())
print(int(np.prod(nums)), " ".join(f"{k}:{v}" for k, v in counts.items()))
```"""
STDIO: dict[str, Any] = {"inputs": ["2 3 2\n", "5\n"], "outputs": ["12 2:2 3:1\n", "5 5:1\n"]}

NODE_CALL = """```javascript
const _ = require('lodash');
function f(xs) { return _.sum(_.uniq(xs)); }
```"""
NODE_STDIO = """```javascript
import _ from 'lodash';
const nums = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);
console.log(_.chunk(nums, 2).map((c) => _.sum(c)).join(' '));
```"""
JS_CALLS: dict[str, Any] = {"fn_name": "f", "inputs": [[[1, 1, 2]], [[4]]], "outputs": [3, 4], "language": "javascript"}
JS_STDIO: dict[str, Any] = {"inputs": ["1 2 3\n"], "outputs": ["3 3\n"], "language": "javascript"}


def test_the_pins_hold_the_datasets_libraries() -> None:
    assert {"numpy", "pandas", "scipy", "sortedcontainers"} <= set(pinned())


def test_a_python_program_uses_numpy_pandas_scipy_and_sortedcontainers() -> None:
    out = grade(PYTHON_CALL, CALLS, timeout_s=20)
    assert out.score == 1.0, (out.verdict, out.reason)
    wrong = grade(PYTHON_CALL.replace("ranks[0]", "ranks[-1]"), CALLS, timeout_s=20)
    assert wrong.score == 0.0 and not wrong.mask, wrong.reason


def test_a_python_stdio_program_uses_them() -> None:
    out = grade(PYTHON_STDIO, STDIO, timeout_s=20)
    assert out.score == 1.0, (out.verdict, out.reason)


@needs_node
def test_a_node_program_requires_lodash() -> None:
    out = grade(NODE_CALL, JS_CALLS, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)
    wrong = grade(NODE_CALL.replace("_.uniq(xs)", "xs"), JS_CALLS, timeout_s=10)
    assert wrong.score == 0.0 and not wrong.mask, wrong.reason


@needs_node
def test_a_node_es_module_imports_lodash() -> None:
    out = grade(NODE_STDIO, JS_STDIO, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize(
    ("program", "said"),
    [
        ("```python\nimport sklearn\ndef f(xs):\n    return 0\n```", "sklearn"),
        ("```python\ndef f(xs):\n    import torch\n    return 0\n```", "torch"),
        ("```python\nimport fastapi\ndef f(xs):\n    return 0\n```", "fastapi"),
    ],
    ids=["at_load", "in_the_call", "a_service_package"],
)
def test_a_module_not_in_the_environment_scores_zero_unmasked(program: str, said: str) -> None:
    out = grade(program, CALLS, timeout_s=10)
    assert out.score == 0.0 and not out.mask and said in out.reason, (out.verdict, out.reason)


@needs_node
def test_a_node_module_not_in_the_environment_scores_zero_unmasked() -> None:
    program = "```javascript\nconst express = require('express');\nfunction f(xs) { return 3; }\n```"
    out = grade(program, JS_CALLS, timeout_s=10)
    assert out.score == 0.0 and not out.mask and "express" in out.reason, (out.verdict, out.reason)


def test_the_environment_is_read_only_to_programs() -> None:
    program = """```python
import os, numpy
target = os.path.join(os.path.dirname(numpy.__file__), "version.py")
try:
    with open(target, "a") as f:
        f.write("x = 1\\n")
    print("changed")
except OSError:
    print("refused")
```"""
    out = grade(program, {"inputs": [""], "outputs": ["refused\n"]}, timeout_s=20)
    assert out.score == 1.0, (out.verdict, out.reason)


def test_numpy_starts_no_threads() -> None:
    """One BLAS thread (`jobenv.THREAD_CAPS`): a thread per host core would run into
    the job's process limit on a large host."""
    program = "```python\nimport os, numpy\nprint(len(os.listdir('/proc/self/task')))\n```"
    out = grade(program, {"inputs": [""], "outputs": ["1\n"]}, timeout_s=20)
    assert out.score == 1.0, (out.verdict, out.reason)
