"""Split mode: the names a test reads come from trusted sources, not the program
(issue 30, class 2).

The class: any global a test read that was neither a builtin nor a module came from
the program, so `assert char_freq('aab') == Counter({'a': 2, 'b': 1})` passed with
`def Counter(*a, **k): return 0` and a `char_freq` returning 0. Now a test's names
come from its own imports, the tests' pre-imports (`names.TESTS_ENVIRONMENT`) and the
task's prompt; only the entry point comes from the program whatever its name, and any
other program name a grade rests on is reported (`untrusted_names`) in every format.

Each case: a right program passes; a program that fakes the pre-import the test reads
and answers wrongly scores 0, whatever form the fake takes.
"""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes.runner import names
from rlvr.verifiers.code import helpers
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.humaneval_data import ground_truth, load_problems

pytestmark = pytest.mark.usefixtures("isolated")

# name -> (test, right program, the entry point's wrong body, which the fake would pass)
CASES: dict[str, tuple[str, str, str]] = {
    "Counter": (
        "assert char_freq('aab') == Counter({'a': 2, 'b': 1})",
        "from collections import Counter\ndef char_freq(s):\n    return Counter(s)\n",
        "def char_freq(s):\n    return 0\n",
    ),
    "isclose": (
        "assert isclose(area(2), 12.566, rel_tol=1e-3)",
        "import math\ndef area(r):\n    return math.pi * r * r\n",
        "def area(r):\n    return 0\n",
    ),
    "pi": (
        "assert abs(area(1) - pi) < 1e-9",
        "from math import pi\ndef area(r):\n    return pi * r * r\n",
        "def area(r):\n    return 0\n",
    ),
    "inf": (
        "assert smallest([]) == inf",
        "def smallest(xs):\n    return min(xs, default=float('inf'))\n",
        "def smallest(xs):\n    return 0\n",
    ),
    "sqrt": (
        "assert root(16) == sqrt(16)",
        "def root(x):\n    return x ** 0.5\n",
        "def root(x):\n    return 0\n",
    ),
    "deque": (
        "assert list(rotate([1, 2, 3])) == list(deque([3, 1, 2]))",
        "def rotate(xs):\n    return xs[-1:] + xs[:-1]\n",
        "def rotate(xs):\n    return []\n",
    ),
    "OrderedDict": (
        "assert firsts('abca') == OrderedDict([('a', 0), ('b', 1), ('c', 2)])",
        "def firsts(s):\n    d = {}\n    for i, c in enumerate(s):\n        d.setdefault(c, i)\n    return d\n",
        "def firsts(s):\n    return 0\n",
    ),
    "defaultdict": (
        "assert group([1, 2, 3]) == defaultdict(list, {1: [1, 3], 0: [2]})",
        "def group(xs):\n    d = {}\n    for x in xs:\n        d.setdefault(x % 2, []).append(x)\n    return d\n",
        "def group(xs):\n    return 0\n",
    ),
    "reduce": (
        "assert product_of([1, 2, 3, 4]) == reduce(lambda a, b: a * b, [1, 2, 3, 4])",
        "def product_of(xs):\n    out = 1\n    for x in xs:\n        out *= x\n    return out\n",
        "def product_of(xs):\n    return 0\n",
    ),
    "ascii_lowercase": (
        "assert alphabet() == ascii_lowercase",
        "def alphabet():\n    return ''.join(chr(c) for c in range(97, 123))\n",
        "def alphabet():\n    return 0\n",
    ),
    "List": (
        "assert isinstance(evens(4), List) and evens(4) == [0, 2]",
        "def evens(n):\n    return list(range(0, n, 2))\n",
        "class Bag:\n    pass\ndef evens(n):\n    return Bag()\n",
    ),
    "heappop": (
        "h = build([3, 1, 2])\nassert heappop(h) == 1",
        "import heapq\ndef build(xs):\n    xs = list(xs)\n    heapq.heapify(xs)\n    return xs\n",
        "def build(xs):\n    return [9]\n",
    ),
    "np": (
        "assert total([1, 2]) == np.sum(np.array([1, 2]))",
        "def total(xs):\n    return sum(xs)\n",
        "def total(xs):\n    return 0\n",
    ),
}
# How a program may bind the name it fakes.
FAKES = {
    "function": "def {n}(*a, **k):\n    return 0\n",
    "lambda_true": "{n} = lambda *a, **k: True\n",
    "value": "{n} = 0\n",
    "always_equal": (
        "class _Any:\n    def __eq__(self, o):\n        return True\n    def __call__(self, *a, **k):\n"
        "        return self\n    def __getattr__(self, a):\n        return self\n"
        "    def __sub__(self, o):\n        return 0\n    __rsub__ = __sub__\n{n} = _Any()\n"
    ),
    "star_then_fake": "from collections import *\nfrom math import *\n{n} = 0\n",
    "global_in_function": "def _set():\n    global {n}\n    {n} = lambda *a, **k: 0\n_set()\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_right_program_passes(name: str) -> None:
    test, right, _ = CASES[name]
    out = grade(right, {"tests": [test]})
    assert out.score == 1.0 and out.details["mode"] == "split", (out.verdict, out.reason)
    assert "untrusted_names" not in out.details, out.details


@pytest.mark.parametrize("fake", sorted(FAKES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_faked_pre_import_never_decides_a_test(name: str, fake: str) -> None:
    test, _, wrong = CASES[name]
    out = grade(FAKES[fake].format(n=name) + wrong, {"tests": [test]})
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


@pytest.mark.parametrize("name", ["Counter", "isclose", "pi"])
def test_a_setup_or_check_reads_the_pre_imports_too(name: str) -> None:
    test, right, wrong = CASES[name]
    with_setup = {"tests": [test], "setup": "x = 1"}
    assert grade(right, with_setup).score == 1.0
    assert grade(FAKES["function"].format(n=name) + wrong, with_setup).score == 0.0
    entry = {"Counter": "char_freq", "isclose": "area", "pi": "area"}[name]
    body = test.replace("assert ", "    assert ").replace(f"{entry}(", "candidate(")
    check = {"test": f"def check(candidate):\n{body}\n", "entry_point": entry}
    assert grade(right, check).score == 1.0
    out = grade(FAKES["function"].format(n=name) + wrong, check)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


def test_the_program_s_own_star_import_of_a_fake_does_not_reach_the_tests() -> None:
    """`from solution import *` takes no pre-import from the program."""
    test, _, wrong = CASES["Counter"]
    out = grade("def Counter(*a, **k):\n    return 0\n" + wrong, {"tests": [test], "setup": "from solution import *"})
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


# The entry point is the program's even when a pre-import has its name.
ENTRY_NAMED_LIKE_A_PRE_IMPORT = {
    "gcd": ("assert gcd(12, 18) in (6,)", "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"),
    "product": ("assert product([2, 3]) in (6,)", "def product(xs):\n    return xs[0] * xs[1]\n"),
    "floor_in_isclose": ("assert isclose(floor(2.5), 2)", "def floor(x):\n    return int(x)\n"),
}


@pytest.mark.parametrize("case", sorted(ENTRY_NAMED_LIKE_A_PRE_IMPORT))
def test_an_entry_point_named_like_a_pre_import_is_the_program_s(case: str) -> None:
    test, right = ENTRY_NAMED_LIKE_A_PRE_IMPORT[case]
    name = right.split("(")[0].removeprefix("def ")
    assert grade(right, {"tests": [test]}).score == 1.0
    wrong = f"def {name}(*a):\n    return -1\n"
    assert grade(wrong, {"tests": [test]}).score == 0.0
    assert grade("x = 1\n", {"tests": [test]}).score == 0.0  # the pre-import never stands in


# Suites whose tests take more than the entry point from the program (MBPP's `Pair`,
# `Node`, a constant): they still pass, and say which names the grade rests on.
MORE_THAN_THE_ENTRY = {
    "pair": (
        ["assert max_chain_length([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)], 4) == 3"],
        "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
        "def max_chain_length(arr, n):\n    arr = sorted(arr, key=lambda p: p.b)\n    count, end = 0, float('-inf')\n"
        "    for p in arr:\n        if p.a > end:\n            count, end = count + 1, p.b\n    return count\n",
        ["Pair"],
    ),
    "constant": (
        ["assert limit() == LIMIT"],
        "LIMIT = 10\ndef limit():\n    return 10\n",
        ["LIMIT"],
    ),
    "tree": (
        [
            "root = Node(1)\nroot.left = Node(2)\nroot.right = Node(3)\nroot.left.left = Node(4)\n"
            "assert max_height(root) == 3",
            "root = Node(1)\nassert max_height(root) == 1 and root.left is None",
        ],
        "class Node:\n    def __init__(self, data):\n        self.data = data\n        self.left = None\n"
        "        self.right = None\ndef max_height(node):\n    if node is None:\n        return 0\n"
        "    return 1 + max(max_height(node.left), max_height(node.right))\n",
        ["Node"],
    ),
    "linked_list": (
        ["head = to_list([1, 2, 3])\nhead = reverse(head)\nassert head.val == 3 and head.next.val == 2"],
        "class ListNode:\n    def __init__(self, val, next=None):\n        self.val, self.next = val, next\n"
        "def to_list(xs):\n    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n"
        "    return head\ndef reverse(head):\n    prev = None\n    while head:\n"
        "        head.next, prev, head = prev, head, head.next\n    return prev\n",
        ["to_list"],
    ),
    "helper_in_values_mode": (
        ["assert f(g(2)) == 4"],
        "def g(x):\n    return x\ndef f(x):\n    return x * 2\n",
        ["g"],
    ),
}


@pytest.mark.parametrize("case", sorted(MORE_THAN_THE_ENTRY))
def test_other_program_names_are_reported_in_every_format(case: str) -> None:
    tests, program, listed = MORE_THAN_THE_ENTRY[case]
    out = grade(program, {"tests": tests})
    assert out.score == 1.0, (out.verdict, out.reason)
    assert out.details.get("untrusted_names") == listed, out.details


@pytest.mark.parametrize(
    ("tests", "entry"),
    [
        (["assert char_freq('aab') == Counter({'a': 2})"], "char_freq"),
        (["assert isclose(area(2), 12.5)"], "area"),
        (["assert max_chain_length([Pair(1, 2)], 1) == 1"], "max_chain_length"),
        (["root = Node(1)\nroot.left = Node(2)\nassert max_height(root) == 2"], "max_height"),
        (["x = solve(3)\nassert x == Counter('abc')"], "solve"),
        (["assert gcd(4, 6) in (2,)"], "gcd"),
        (["assert isclose(floor(2.5), 2)"], "floor"),
        (["assert f(1) == g(1)", "assert f(2) == 2"], "f"),
        (["assert lcm(4, 6) == 4 * 6 // gcd(4, 6)", "assert lcm(3, 5) == 15 // gcd(3, 5)"], "lcm"),
        (["assert prod([1, 2, 3]) == factorial(3)"], "prod"),
        (["assert 2 == gcd(4, 6)"], "gcd"),
        (["assert not isqrt(4) == 3"], "isqrt"),
        (["assert len([1]) == 1"], None),
        (["from solution import f\nassert f(1) == 1"], None),
    ],
)
def test_assert_entry(tests: list[str], entry: str | None) -> None:
    sources = [(t, f"test_{i}") for i, t in enumerate(tests)]
    assert names.assert_entry(sources) == entry


@pytest.mark.parametrize("task", ["HumanEval/32", "HumanEval/38", "HumanEval/50"])
@pytest.mark.parametrize(
    "form",
    [
        "Complete the following function.\n\n{p}\nAnswer with the code only.",
        "Complete this:\n{p}",
        "Finish the code below\r\n\r\n{p}".replace("\n", "\r\n"),
    ],
    ids=["prose_around", "prose_before", "crlf"],
)
def test_a_prompt_quoting_humaneval_without_a_fence_gives_the_helpers(task: str, form: str) -> None:
    problem = next(p for p in load_problems() if p["task_id"] == task)
    helper, wrong = {
        "HumanEval/32": ("poly", "def find_zero(xs):\n    return 0.0\n"),
        "HumanEval/38": ("encode_cyclic", "def decode_cyclic(s):\n    return s\n"),
        "HumanEval/50": ("encode_shift", "def decode_shift(s):\n    return s\n"),
    }[task]
    prompt = form.format(p=problem["prompt"])
    assert helpers.task_prompt(prompt, problem["entry_point"], 100_000) is not None
    attack = f"```python\n{helper} = lambda *a: a[0] if a and isinstance(a[0], str) else 0\n\n{wrong}```"
    out = grade(attack, ground_truth(problem), prompt=prompt, timeout_s=10)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)
    assert "untrusted_names" not in out.details, out.details
    right = grade(problem["canonical_solution"], ground_truth(problem), prompt=prompt, timeout_s=10)
    assert right.score == 1.0, (right.verdict, right.reason)


def test_without_any_trusted_source_the_helper_is_reported() -> None:
    problem = next(p for p in load_problems() if p["task_id"] == "HumanEval/32")
    gt: dict[str, Any] = ground_truth(problem)
    out = grade("```python\npoly = lambda xs, x: 0\n\ndef find_zero(xs):\n    return 0.0\n```", gt, timeout_s=10)
    assert out.details.get("untrusted_names") == ["poly"], out.details


# The red team's: a pre-import that computes the expected value (`gcd`, `factorial`)
# beside the one under test is the tests' own, so faking it changes nothing.
EXPECTED_SIDE_PRE_IMPORT = {
    "lcm_gcd": (
        ["assert lcm(4, 6) == 4 * 6 // gcd(4, 6)", "assert lcm(3, 5) == 15 // gcd(3, 5)"],
        ["def gcd(a, b):\n    return 999\ndef lcm(a, b):\n    return 0\n",
         "def gcd(a, b):\n    return 24\ndef lcm(a, b):\n    return a * b // gcd(a, b)\n",
         "def gcd(a, b):\n    return 999\n"],
        "def lcm(a, b):\n    x, y = a, b\n    while y:\n        x, y = y, x % y\n    return a * b // x\n",
    ),
    "prod_factorial": (
        ["assert prod([1, 2, 3, 4, 5]) == factorial(5)"],
        ["def factorial(n):\n    return -1\n", "def factorial(n):\n    return 7\ndef prod(xs):\n    return 7\n"],
        "def prod(xs):\n    out = 1\n    for x in xs:\n        out *= x\n    return out\n",
    ),
}


@pytest.mark.parametrize("case", sorted(EXPECTED_SIDE_PRE_IMPORT))
def test_a_pre_import_on_the_expected_side_stays_the_tests(case: str) -> None:
    tests, wrongs, right = EXPECTED_SIDE_PRE_IMPORT[case]
    assert grade(right, {"tests": tests}).score == 1.0
    for wrong in wrongs:
        out = grade(wrong, {"tests": tests})
        assert out.score == 0.0 and not out.mask, (wrong, out.verdict, out.reason)
