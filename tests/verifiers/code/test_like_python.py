"""Correct programs get 1 when they rely on what `python solution.py` gives them and a
bare forked interpreter does not: the `exit`/`quit` builtins, a `sys.argv` of the script
alone, streams with a `mode`, and the end of the interpreter (threads joined, `atexit`
run, whatever `sys.stdout` the program installed flushed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

STDIO = {"inputs": ["2\n", "3\n"], "outputs": ["4\n", "6\n"]}
CALL = {"fn_name": "f", "inputs": [[2], [3]], "outputs": [4, 6]}
VALUES = {"tests": ["assert f(2) == 4", "assert f(3) == 6"]}
PYRIVAL = (Path(__file__).parent / "programs" / "pyrival_fastio.py.txt").read_text()

STDIO_PROGRAMS = {
    "exit()": "x = int(input())\nprint(2 * x)\nexit()\n",
    "quit()": "x = int(input())\nprint(2 * x)\nquit()\n",
    "exit(0)": "x = int(input())\nprint(2 * x)\nexit(0)\n",
    "exit() mid-loop": "import sys\nfor line in sys.stdin:\n    print(2 * int(line))\n    exit()\n",
    "thread, no join": (
        "import sys, threading\ndef main():\n    print(2 * int(sys.stdin.readline()))\n"
        "sys.setrecursionlimit(1 << 20)\nthreading.stack_size(1 << 26)\nthreading.Thread(target=main).start()\n"
    ),
    "two threads in turn": (
        "import threading\nvalue = []\ndef read():\n    value.append(int(input()))\n"
        "def write():\n    t.join()\n    print(2 * value[0])\nt = threading.Thread(target=read)\nt.start()\n"
        "threading.Thread(target=write).start()\n"
    ),
    "atexit output": (
        "import atexit, sys\nout = []\natexit.register(lambda: sys.stdout.write(''.join(out)))\n"
        "out.append(str(2 * int(input())) + '\\n')\n"
    ),
    "own sys.stdout": (
        "import sys, io\nsys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, 'w', closefd=False)))\n"
        "print(2 * int(input()))\n"
    ),
    "sys.__stdout__": "import sys\nsys.__stdout__.write(str(2 * int(input())) + '\\n')\n",
    "sys.argv check": (
        "import sys\ndata = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()\nprint(2 * int(data))\n"
    ),
    "fileinput": "import fileinput\nfor line in fileinput.input():\n    print(2 * int(line))\n",
    "stream modes": "import sys\nassert sys.stdin.mode == 'r' and sys.stdout.mode == 'w'\nprint(2 * int(input()))\n",
    "PyRival FastIO": PYRIVAL,
}


@pytest.mark.parametrize("name", sorted(STDIO_PROGRAMS))
def test_a_correct_stdio_program_passes(name: str) -> None:
    outcome = grade(f"```python\n{STDIO_PROGRAMS[name]}```", STDIO)
    assert (outcome.score, outcome.mask) == (1.0, False), outcome


@pytest.mark.parametrize(
    "name",
    ["thread, no join", "atexit output", "own sys.stdout", "sys.__stdout__", "PyRival FastIO"],
)
def test_the_same_program_printing_a_wrong_answer_fails(name: str) -> None:
    wrong = STDIO_PROGRAMS[name].replace("2 * ", "3 * ")
    outcome = grade(f"```python\n{wrong}```", STDIO)
    assert (outcome.score, outcome.mask) == (0.0, False), outcome


def test_an_atexit_error_is_printed_not_fatal() -> None:
    code = "import atexit\natexit.register(lambda: 1 / 0)\nprint(2 * int(input()))\n"
    outcome = grade(f"```python\n{code}```", STDIO)
    assert outcome.score == 1.0, outcome


@pytest.mark.parametrize("exit_call", ["exit()", "quit()", "exit(0)"])
@pytest.mark.parametrize("ground_truth", [CALL, VALUES], ids=["call", "values"])
def test_exit_under_main_guard_leaves_the_function(exit_call: str, ground_truth: dict[str, Any]) -> None:
    code = f"def f(x):\n    return 2 * x\nif __name__ == '__main__':\n    {exit_call}\n"
    outcome = grade(f"```python\n{code}```", ground_truth)
    assert outcome.score == 1.0, outcome


@pytest.mark.parametrize("ground_truth", [CALL, VALUES], ids=["call", "values"])
def test_argv_is_the_script_alone(ground_truth: dict[str, Any]) -> None:
    code = "import sys\ndef f(x):\n    return 2 * x if sys.argv == ['solution.py'] else sys.argv\n"
    outcome = grade(f"```python\n{code}```", ground_truth)
    assert outcome.score == 1.0, outcome


@pytest.mark.parametrize(
    "tag", ["python3.11", "python:solution.py", "python,linenos", "ipython", "{.python}", "Python3", "python3.12"]
)
def test_fence_tags_that_name_python(tag: str) -> None:
    outcome = grade(f"Here it is.\n\n```{tag}\nprint(2 * int(input()))\n```\n", STDIO)
    assert outcome.score == 1.0, outcome


@pytest.mark.parametrize(
    "snippet",
    [
        "std::map<int, int> m{{1, 2}};\n    if (!m.contains(1)) return 1;",
        "std::vector<int> v{3, 1, 2};\n    std::ranges::sort(v);\n    if (v[0] != 1) return 1;",
        "auto cmp = 1 <=> 2;\n    if (cmp >= 0) return 1;",
    ],
    ids=["map::contains", "ranges::sort", "spaceship"],
)
def test_cpp20_compiles(snippet: str) -> None:
    code = (
        "#include <bits/stdc++.h>\nint main() {\n    " + snippet + "\n    long long x;\n    std::cin >> x;\n"
        "    std::cout << 2 * x << std::endl;\n}\n"
    )
    outcome = grade(f"```cpp\n{code}```", {**STDIO, "language": "cpp"})
    assert outcome.score == 1.0, outcome
