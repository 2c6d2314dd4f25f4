"""A solution finds what its judge pre-imports; the tests see only the program's names.

The class: correct function-style solutions that leave out imports their judge gives
them (`def f(nums: List[int])`, `Counter(s)` on LeetCode, the helpers of a HumanEval
prompt) scored 0 with a NameError. And the other side of it: a binding of the
environment never stands in for a function the tests call (`gcd`, `merge`, `reduce`).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.verifiers.code.conftest import grade
from tests.verifiers.code.humaneval_data import canonical, load_problems

pytestmark = pytest.mark.usefixtures("isolated")

PROBLEMS = {p["task_id"]: p for p in load_problems()}

# Call-based (LeetCode-style) solutions without their imports: (body, args, expected).
CALL_SOLUTIONS = {
    "typing_list": ("def f(nums: List[int]) -> int:\n    return sum(nums)", [[1, 2, 3]], 6),
    "typing_optional": (
        "def f(x: Optional[int] = None) -> Dict[str, Tuple[int, int]]:\n    return {'a': (x, x)}",
        [2],
        {"a": [2, 2]},
    ),
    "counter": ("def f(s):\n    return Counter(s).most_common(1)[0][0]", ["abbb"], "b"),
    "defaultdict": (
        "def f(words):\n    d = defaultdict(list)\n    for w in words:\n        d[len(w)].append(w)\n    return len(d)",
        [["a", "bb", "c"]],
        2,
    ),
    "deque": ("def f(n):\n    q = deque(range(n))\n    q.rotate(1)\n    return list(q)", [3], [2, 0, 1]),
    "heapq_names": (
        "def f(xs):\n    h = []\n    for x in xs:\n        heappush(h, x)\n    return heappop(h)",
        [[5, 1, 3]],
        1,
    ),
    "heapq_module": ("def f(xs):\n    heapq.heapify(xs)\n    return xs[0]", [[5, 1, 3]], 1),
    "bisect": ("def f(xs, x):\n    return bisect_left(xs, x)", [[1, 3, 5], 4], 2),
    "lru_cache": (
        "@lru_cache(None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
        "def f(n):\n    return fib(n)",
        [30],
        832040,
    ),
    "cache": ("@cache\ndef f(n):\n    return 1 if n < 1 else n * f(n - 1)", [5], 120),
    "accumulate": ("def f(xs):\n    return list(accumulate(xs))", [[1, 2, 3]], [1, 3, 6]),
    "permutations": ("def f(s):\n    return len(set(permutations(s)))", ["aab"], 3),
    "reduce": ("def f(xs):\n    return reduce(lambda a, b: a * b, xs)", [[2, 3, 4]], 24),
    "math_names": ("def f(x):\n    return int(sqrt(x)) + gcd(12, 18) + (1 if inf > x else 0)", [16], 11),
    "math_module": ("def f(n, k):\n    return math.comb(n, k)", [5, 2], 10),
    "string_names": ("def f():\n    return ascii_lowercase[:3]", [], "abc"),
    "re_module": ("def f(s):\n    return re.findall(r'\\d+', s)", ["a1b22"], ["1", "22"]),
    "solution_class": (
        "class Solution:\n    def f(self, nums: List[int]) -> int:\n        return max(nums)",
        [[4, 9, 2]],
        9,
    ),
}


@pytest.mark.parametrize("case", sorted(CALL_SOLUTIONS))
def test_call_solutions_find_what_leetcode_imports(case: str) -> None:
    body, args, expected = CALL_SOLUTIONS[case]
    out = grade(body + "\n", {"fn_name": "f", "inputs": [args], "outputs": [expected]})
    assert out.score == 1.0, (out.verdict, out.reason)


# Names the environment binds, each a plausible name for the function under test.
ENVIRONMENT_NAMES = ["gcd", "factorial", "comb", "reduce", "merge", "accumulate", "bisect", "count", "product", "floor"]
PROGRAMS_WITHOUT_IT = ["", "x = 1\n", "def helper():\n    return 1\n", "from math import sqrt\n"]


def _ground_truth(mode: str, name: str) -> dict[str, Any]:
    if mode == "call":
        return {"fn_name": name, "inputs": [[4, 6]], "outputs": [2]}
    if mode == "values":
        return {"tests": [f"assert {name}(4, 6) == 2"]}
    if mode == "split":
        return {"tests": [f"assert {name}(4, 6) in (2,)"], "setup": "import math"}
    return {"test": "def check(candidate):\n    assert candidate(4, 6) == 2\n", "entry_point": name}


@pytest.mark.parametrize("program", PROGRAMS_WITHOUT_IT, ids=["empty", "assignment", "helper", "own_import"])
@pytest.mark.parametrize("mode", ["call", "values", "split", "check"])
@pytest.mark.parametrize("name", ENVIRONMENT_NAMES)
def test_tests_never_call_a_binding_of_the_environment(name: str, mode: str, program: str) -> None:
    response = program or "# nothing here\n"
    out = grade(response, _ground_truth(mode, name))
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


@pytest.mark.parametrize("mode", ["call", "values", "split", "check"])
@pytest.mark.parametrize("name", ["gcd", "merge", "reduce"])
def test_the_program_s_own_definition_is_the_one_tested(name: str, mode: str) -> None:
    right = f"def {name}(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
    wrong = f"def {name}(a, b):\n    return a * b\n"
    assert grade(right, _ground_truth(mode, name)).score == 1.0
    assert grade(wrong, _ground_truth(mode, name)).score == 0.0


def test_a_solution_class_method_named_like_a_binding() -> None:
    """LeetCode's `class Solution: def merge(...)`: the method, not heapq's merge."""
    program = (
        "class Solution:\n    def merge(self, a: List[int], b: List[int]) -> List[int]:\n        return sorted(a + b)\n"
    )
    gt = {"fn_name": "merge", "inputs": [[[3], [1, 2]]], "outputs": [[1, 2, 3]]}
    assert grade(program, gt).score == 1.0
    assert grade(program.replace("sorted(a + b)", "a + b"), gt).score == 0.0


@pytest.mark.parametrize(
    ("mode", "gt"),
    [
        ("values", {"tests": ["assert f([1, 2]) == 3"]}),
        ("split", {"tests": ["assert f([1, 2]) in (3,)"]}),
        ("check", {"test": "def check(candidate):\n    assert candidate([1, 2]) == 3\n", "entry_point": "f"}),
        (
            "check_split",
            {"test": "def check(candidate):\n    x = candidate([1, 2])\n    assert x == 3\n", "entry_point": "f"},
        ),
    ],
)
@pytest.mark.parametrize(
    "annotation", ["List[int]", "Optional[List[int]]", "Sequence[int]", "Union[List[int], Tuple[int, ...]]"]
)
def test_function_tests_find_the_typing_names(mode: str, gt: dict[str, Any], annotation: str) -> None:
    out = grade(f"def f(xs: {annotation}) -> int:\n    return sum(xs)\n", gt)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize(
    ("gt", "program"),
    [
        ({"tests": ["assert f([3, 1]) == 1"]}, "def f(xs):\n    heapify(xs)\n    return xs[0]\n"),
        ({"tests": ["assert f(3) == [0, 1, 2]"]}, "def f(n):\n    return list(deque(range(n)))\n"),
        ({"inputs": ["abb\n"], "outputs": ["b\n"]}, "print(Counter(input()).most_common(1)[0][0])\n"),
        ({"inputs": ["3\n"], "outputs": ["3\n"]}, "x: List[int] = [int(input())]\nprint(x[0])\n"),
    ],
    ids=["asserts_heapify", "asserts_deque", "stdio_counter", "stdio_typing"],
)
def test_scripts_and_assert_tests_get_no_leetcode_imports(gt: dict[str, Any], program: str) -> None:
    """Only call-based tests come from judges that pre-import modules; a script is run as
    `python solution.py` runs it, and MBPP's harness runs program + asserts."""
    out = grade(program, gt)
    assert out.score == 0.0 and not out.mask
    assert "NameError" in out.reason + out.details.get("stderr_tail", ""), out


@pytest.mark.parametrize("task", ["HumanEval/10", "HumanEval/32", "HumanEval/38", "HumanEval/50"])
def test_a_humaneval_completion_finds_its_prompt(task: str) -> None:
    """The response holds only the entry point (no imports, no helpers): right with the
    prompt in the ground truth, as HumanEval's harness runs prompt + completion."""
    problem = PROBLEMS[task]
    entry = problem["entry_point"]
    only_entry = f"def {entry}" + canonical(problem).split(f"def {entry}", 1)[1]
    gt = {"test": problem["test"], "entry_point": entry, "prompt": problem["prompt"]}
    out = grade(f"```python\n{only_entry}\n```", gt, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)
    alone = grade(f"```python\n{only_entry}\n```", {**gt, "prompt": None}, timeout_s=10)
    assert alone.score == 0.0 and not alone.mask


@pytest.mark.usefixtures("code_backend")
@pytest.mark.parametrize(
    ("program", "right"),
    [
        ("def f(s: List[str]) -> int:\n    return Counter(s)['a']\n", True),
        ("# gcd is math's, not mine\n", False),
    ],
)
def test_environment_on_each_backend(program: str, right: bool) -> None:
    out = grade(program, {"fn_name": "gcd" if not right else "f", "inputs": [[["a", "a"]]], "outputs": [2]})
    assert out.score == (1.0 if right else 0.0) and not out.mask, out.reason


@pytest.mark.parametrize("mode", ["call", "values", "split", "check"])
@pytest.mark.parametrize(
    "program",
    [
        "from math import gcd\n",
        "import math\ngcd = math.gcd\n",
        "from math import *\n",
        "def _g():\n    global gcd\n    from math import gcd\n_g()\n",
    ],
    ids=["from_import", "assignment", "star", "global_in_function"],
)
def test_a_name_the_program_binds_itself_is_its_own(mode: str, program: str) -> None:
    """Even bound to the very object the environment has, a name the program binds is
    the program's: reusing the library is a solution."""
    out = grade(program, _ground_truth(mode, "gcd"))
    assert out.score == 1.0, (out.verdict, out.reason)


def test_tests_see_the_program_s_globals_as_they_are_when_they_run() -> None:
    program = "calls = 0\ndef f(x):\n    global calls\n    calls += 1\n    return x\n"
    out = grade(program, {"tests": ["assert f(1) == 1", "assert f(2) == 2", "assert calls == 2"]})
    assert out.score == 1.0 and out.details["mode"] == "values", (out.verdict, out.reason)
