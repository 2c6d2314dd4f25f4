"""The program runs as a module registered in `sys.modules`, as a file's module is.

The class: the program's globals were a bare dict whose `__name__` named no module in
`sys.modules`. What looks its module up there failed: `@dataclass` under `from
__future__ import annotations` (or with quoted annotations) raised AttributeError at
load, `pickle` could not find the program's classes, `typing.get_type_hints` could not
resolve a name, and `sys.modules[__name__]` raised KeyError. Correct programs scored 0
in every format.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

# Each defines f(x) == 2 * x by way of what needs the program's module.
PROGRAMS = {
    "dataclass_future": (
        "from __future__ import annotations\nfrom dataclasses import dataclass\n\n@dataclass\n"
        "class Item:\n    w: int\n    v: int\n\ndef f(x: int) -> int:\n    return Item(x, 2 * x).v\n"
    ),
    "dataclass_quoted": (
        "from dataclasses import dataclass\n\n@dataclass\nclass Item:\n    v: 'int'\n\n"
        "def f(x):\n    return Item(2 * x).v\n"
    ),
    "dataclass_classvar_string": (
        "from __future__ import annotations\nfrom dataclasses import dataclass, field, fields\n"
        "from typing import ClassVar\n\n"
        "@dataclass\nclass Acc:\n    k: ClassVar[int] = 2\n    xs: list[int] = field(default_factory=list)\n\n"
        "def f(x):\n    a = Acc()\n    a.xs.append(x)\n    return Acc.k * sum(a.xs) + len(fields(Acc)) - 1\n"
    ),
    "dataclass_order_frozen": (
        "from __future__ import annotations\nfrom dataclasses import dataclass\n\n@dataclass(order=True, frozen=True)\n"
        "class P:\n    a: int\n\ndef f(x):\n    return max(P(x), P(2 * x)).a\n"
    ),
    "pickle_round_trip": (
        "import pickle\n\nclass Box:\n    def __init__(self, v):\n        self.v = v\n\n"
        "def f(x):\n    return pickle.loads(pickle.dumps(Box(2 * x))).v\n"
    ),
    "copy_deepcopy_dataclass": (
        "from __future__ import annotations\nimport copy\nfrom dataclasses import dataclass\n\n@dataclass\n"
        "class N:\n    v: int\n\ndef f(x):\n    return copy.deepcopy(N(2 * x)).v\n"
    ),
    "get_type_hints": (
        "from __future__ import annotations\nimport typing\n\nclass Two:\n    n = 2\n\n"
        "def g(t: Two) -> int:\n    return t.n\n\n"
        "def f(x):\n    return typing.get_type_hints(g)['t'].n * x\n"
    ),
    "dunder_file": ("import os\n\ndef f(x):\n    return 2 * x if os.path.basename(__file__) == 'solution.py' else 0\n"),
    "own_module": "import sys\n\ndef f(x):\n    return sys.modules[__name__].TWO * x\n\nTWO = 2\n",
    "named_tuple_future": (
        "from __future__ import annotations\nfrom typing import NamedTuple\n\nclass P(NamedTuple):\n    v: int\n\n"
        "def f(x):\n    return P(2 * x).v\n"
    ),
}
# The same f in every format the verifier runs Python in.
FORMATS: dict[str, tuple[dict[str, Any], str]] = {
    "asserts_values": ({"tests": ["assert f(2) == 4", "assert f(5) == 10"]}, ""),
    "asserts_split": ({"tests": ["assert f(2) == 4", "for x in (1, 5):\n    assert f(x) == 2 * x"]}, ""),
    "humaneval": ({"test": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "f"}, ""),
    "humaneval_split": (
        {
            "test": "def check(candidate):\n    for x in range(4):\n        assert candidate(x) == 2 * x\n",
            "entry_point": "f",
        },
        "",
    ),
    "call": ({"fn_name": "f", "inputs": [[2], [5]], "outputs": [4, 10]}, ""),
    "stdio": ({"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}, "print(f(int(input())))\n"),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_program_that_needs_its_module_passes(program: str, fmt: str) -> None:
    gt, tail = FORMATS[fmt]
    out = grade(f"```python\n{PROGRAMS[program]}\n{tail}```", gt)
    assert (out.score, out.mask) == (1.0, False), (out.verdict, out.reason)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_wrong_dataclass_program_still_fails(fmt: str) -> None:
    gt, tail = FORMATS[fmt]
    wrong = PROGRAMS["dataclass_future"].replace("Item(x, 2 * x).v", "Item(x, 3 * x).v")
    out = grade(f"```python\n{wrong}\n{tail}```", gt)
    assert out.score == 0.0 and not out.mask, out.reason


def test_the_module_name_is_the_script_s_in_stdio() -> None:
    program = "import sys\nprint(__name__, sys.modules['__main__'].__dict__ is globals())\n"
    out = grade(f"```python\n{program}```", {"inputs": [""], "outputs": ["__main__ True\n"]})
    assert out.score == 1.0, out.reason
