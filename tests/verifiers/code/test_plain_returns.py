"""Correct values in a library's types pass; lying ones still fail.

The class: a correct program that returns a `Counter` where a dict is expected, a
namedtuple, an `IntEnum` or a numpy number used to score 0 in call and values modes
(and in split mode, where it reached the tests as an opaque handle), because only exact
built-in types crossed the wire. Python's `==` (and so every judge
that uses it) takes them. Now a subclass of a built-in type is read as what its base
stores, with the base's own methods, and numpy values as numpy gives them; an override
that lies about the stored value changes nothing.
"""

from __future__ import annotations

import os
from typing import Any

import numpy
import pytest
from pydantic import TypeAdapter

from rlvr.sandboxes.local.sandbox import get_local_sandbox
from rlvr.verifiers.code import CodeParams, CodeVerifier, GroundTruth
from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")
_GT: TypeAdapter[Any] = TypeAdapter(GroundTruth)

# (setup, returned expression, the expected value as a Python literal, as JSON)
RIGHT = {
    "counter": (
        "from collections import Counter",
        "Counter('abca')",
        "{'a': 2, 'b': 1, 'c': 1}",
        {"a": 2, "b": 1, "c": 1},
    ),
    "defaultdict": (
        "from collections import defaultdict\nd = defaultdict(int)\nd['x'] += 3",
        "d",
        "{'x': 3}",
        {"x": 3},
    ),
    "ordereddict": (
        "from collections import OrderedDict",
        "OrderedDict(b=1, a=2)",
        "{'a': 2, 'b': 1}",
        {"a": 2, "b": 1},
    ),
    "namedtuple": ("from collections import namedtuple\nP = namedtuple('P', 'x y')", "P(1, 2)", "(1, 2)", [1, 2]),
    "intenum": ("import enum\nclass C(enum.IntEnum):\n    RED = 4", "C.RED", "4", 4),
    "str_subclass": ("class S(str):\n    pass", "S('ok')", "'ok'", "ok"),
    "float_subclass": ("class F(float):\n    pass", "F(0.25)", "0.25", 0.25),
    "list_subclass_nested": ("class L(list):\n    pass", "L([L([1]), 2])", "[[1], 2]", [[1], 2]),
    "np_int64": ("import numpy as np", "np.int64(7)", "7", 7),
    "np_float64": ("import numpy as np", "np.float64(1.5)", "1.5", 1.5),
    "np_bool": ("import numpy as np", "np.bool_(True)", "True", True),
    "np_array": ("import numpy as np", "np.arange(4).reshape(2, 2)", "[[0, 1], [2, 3]]", [[0, 1], [2, 3]]),
    "np_in_list": ("import numpy as np", "[np.int32(1), np.float32(0.5)]", "[1, 0.5]", [1, 0.5]),
    "set_subclass": ("class FS(set):\n    pass", "FS({1, 2})", "{1, 2}", None),
}

# Objects whose overrides claim the expected value while storing another.
LYING = {
    "int_eq": ("class X(int):\n    def __eq__(self, o):\n        return True\n    __hash__ = int.__hash__", "X(0)"),
    "int_index": (
        "class X(int):\n    def __index__(self):\n        return 7\n    def __int__(self):\n        return 7",
        "X(0)",
    ),
    "float_float": ("class X(float):\n    def __float__(self):\n        return 0.25", "X(9.0)"),
    "str_str": (
        "class X(str):\n    def __str__(self):\n        return 'ok'\n    def __eq__(self, o):\n        return True",
        "X('no')",
    ),
    "list_iter": (
        "class X(list):\n    def __iter__(self):\n        return iter([[1], 2])\n"
        "    def __len__(self):\n        return 2",
        "X()",
    ),
    "dict_items": (
        "class X(dict):\n    def items(self):\n        return {'x': 3}.items()\n"
        "    def keys(self):\n        return ['x']",
        "X()",
    ),
    "tuple_iter": ("class X(tuple):\n    def __iter__(self):\n        return iter((1, 2))", "X((5,))"),
}
# What each lie claims to be.
EXPECTED_FOR_LIE = {
    "int_eq": ("7", 7),
    "int_index": ("7", 7),
    "float_float": ("0.25", 0.25),
    "str_str": ("'ok'", "ok"),
    "list_iter": ("[[1], 2]", [[1], 2]),
    "dict_items": ("{'x': 3}", {"x": 3}),
    "tuple_iter": ("(1, 2)", [1, 2]),
}


def _program(setup: str, returned: str) -> str:
    return f"{setup}\n\ndef f():\n    return {returned}\n"


def _ground_truth(mode: str, literal: str, as_json: Any) -> dict[str, Any]:
    if mode == "call":
        return {"fn_name": "f", "inputs": [[]], "outputs": [as_json]}
    if mode == "values":
        return {"tests": [f"assert f() == {literal}"]}
    if mode == "check":
        return {"test": f"def check(candidate):\n    assert candidate() == {literal}\n", "entry_point": "f"}
    # A check that is more than `assert candidate(...) == ...` runs as split: the value
    # crosses from the program's process to the tests'.
    return {"test": f"def check(candidate):\n    r = candidate()\n    assert r == {literal}\n", "entry_point": "f"}


@pytest.mark.parametrize(
    ("case", "mode"),
    # JSON has no set: a call-based ground truth cannot expect one.
    [
        (case, mode)
        for case in sorted(RIGHT)
        for mode in ("call", "values", "check", "split")
        if RIGHT[case][3] is not None or mode != "call"
    ],
)
def test_library_types_holding_the_right_value_pass(case: str, mode: str) -> None:
    setup, returned, literal, as_json = RIGHT[case]
    out = grade(_program(setup, returned), _ground_truth(mode, literal, as_json))
    if case.startswith("np_") and _numpy_hidden_from_jobs():
        # Installed under /tmp, the service gives jobs none of its packages (README).
        assert out.score == 0.0 and "No module named 'numpy'" in out.reason, (out.verdict, out.reason)
        return
    if case == "np_array" and mode == "split":
        # Split mode rebuilds the array as an array (tests read `.shape`), so `r == [[...]]`
        # is ambiguous, as in the dataset's own harness; values mode compares plain values.
        assert out.score == 0.0 and not out.mask and "truth value of an array" in out.reason, out.reason
        return
    assert out.score == 1.0, (out.verdict, out.reason)


def _numpy_hidden_from_jobs() -> bool:
    """Whether numpy lies in an import path the sandbox reports jobs do not get."""
    hidden = get_local_sandbox().isolation()["hidden_import_paths"]
    where = os.path.realpath(numpy.__file__)
    return any(where.startswith(os.path.realpath(path) + os.sep) for path in hidden)


@pytest.mark.parametrize("mode", ["call", "values", "check", "split"])
@pytest.mark.parametrize("case", sorted(LYING))
def test_overrides_that_lie_fail(case: str, mode: str) -> None:
    cls, returned = LYING[case]
    literal, as_json = EXPECTED_FOR_LIE[case]
    out = grade(_program(cls, returned), _ground_truth(mode, literal, as_json))
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


@pytest.mark.parametrize("mode", ["call", "values"])
@pytest.mark.parametrize(
    "tolist",
    ["while True:\n            pass", "return object()", "raise SystemExit(0)", "return [self] * 3"],
    ids=["hangs", "not_plain", "exits", "self_nested"],
)
def test_a_fake_numpy_cannot_pass_hang_or_mask(mode: str, tolist: str) -> None:
    """A program may plant its own `numpy` whose values' `tolist` is its code: that
    code runs inside the test's time limit, and what it returns is checked like any value."""
    setup = (
        "import sys, types\nnp = types.ModuleType('numpy')\n"
        f"class generic:\n    __module__ = 'numpy'\n    def tolist(self):\n        {tolist}\n"
        "np.generic = generic\nnp.ndarray = generic\nsys.modules['numpy'] = np"
    )
    out = grade(_program(setup, "generic()"), _ground_truth(mode, "3", 3), timeout_s=1)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


@pytest.mark.parametrize("mode", ["call", "values", "check", "split"])
def test_each_mode_runs_as_named(mode: str) -> None:
    prepared = CodeVerifier().prepare(CodeParams(), _GT.validate_python(_ground_truth(mode, "1", 1)))
    assert prepared.mode == {"check": "values"}.get(mode, mode)
