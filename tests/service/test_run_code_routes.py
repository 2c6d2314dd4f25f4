"""`/run_code`'s two routes for a Python program (`program.runs_as_job`): as the job's
own process, which the sandbox's view of the job reports, or under the runner, which
reports it in records. A program gets the same answer either way; the runner's route
is taken by asking for a file back (`fetch_files`), which needs it."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from rlvr.sandboxes.runner.program import runs_as_job
from rlvr.service.run_code import MAX_STDIN_CHARS
from tests.service.test_run_code import b64, run

# (program, stdin): each ends in its own way.
PROGRAMS = {
    "print": ("print('hello')", ""),
    "sum_stdin": ("import sys\nprint(sum(map(int, sys.stdin.read().split())))", "1 2 3\n"),
    "fast_io": ("import os\ndata = os.read(0, os.fstat(0).st_size)\nprint(len(data))", "x" * 100_000),
    "buffer_lines": ("import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line[::-1])", "ab\ncd\n"),
    "input_eof": ("print(input())\nprint(input())", "one\n"),
    "exit_code": ("import sys\nprint('partial')\nsys.exit(7)", ""),
    "exit_message": ("import sys\nsys.exit('bye')", ""),
    "exception": ("def f():\n    raise KeyError('k')\nf()", ""),
    "syntax_error": ("print(1\n", ""),
    "stderr_and_stdout": ("import sys\nprint('o')\nprint('e', file=sys.stderr)\nprint('o2')", ""),
    "unicode": ("print('h\u00e9llo \u2713 \U0001d518')\nimport sys\nsys.stdout.buffer.write(b'\\xff\\xfe')", ""),
    "no_newline_flush": ("import sys\nsys.stdout.write('x' * 100_000)", ""),
    "thread_main": (
        "import threading, sys\nthreading.stack_size(1 << 26)\nsys.setrecursionlimit(10 ** 6)\n"
        "def main():\n    print(int(input()) * 2)\nthreading.Thread(target=main).start()",
        "21\n",
    ),
    "atexit": ("import atexit\natexit.register(print, 'last')\nprint('first')", ""),
    "recursion": ("def f(n):\n    return f(n + 1)\nf(0)", ""),
    "memory_error": ("x = bytearray(2 * 1024 ** 3)", ""),
    "imports_a_file": ("import helper\nprint(helper.VALUE)", ""),
    "writes_scratch": ("open('/mnt/a.txt', 'w').write('hi')\nprint(open('/tmp/a.txt').read())", ""),
    "closed_stdout": ("import os\nprint('gone', flush=True)\nos.close(1)", ""),
    "main_guard": ("def main():\n    print(__name__)\nif __name__ == '__main__':\n    main()", ""),
    "argv_and_file": ("import sys\nprint(sys.argv, __file__)", ""),
    "restores_stdout": (
        "import sys, io\nsys.stdout = io.StringIO()\nprint('hidden')\nsys.__stdout__.write('ans\\n')",
        "",
    ),
    "closes_stdout": ("import sys\nprint('x')\nsys.stdout.close()", ""),
    "flush_fails": (
        "import sys\nclass W:\n    closed = False\n    def write(self, s): pass\n"
        "    def flush(self): raise OSError('full')\nsys.stdout = W()",
        "",
    ),
}
FILES = {"helper.py": b64(b"VALUE = 42\n")}
SAME = ("status", "return_code", "stdout", "stderr")
# The runner's route calls the program one frame deeper.
REPEATS = re.compile(r"\[Previous line repeated \d+ more times\]")


def _answer(http: httpx.Client, code: str, stdin: str, fetch: list[str]) -> dict[str, Any]:
    body = run(http, code=code, language="python", stdin=stdin, files=FILES, fetch_files=fetch, memory_limit_MB=256)
    answer = {"answer": body["status"], **{key: body["run_result"][key] for key in SAME}}
    answer["stderr"] = REPEATS.sub("[repeated]", answer["stderr"])
    return answer


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_routes_answer_alike(http: httpx.Client, name: str) -> None:
    code, stdin = PROGRAMS[name]
    assert runs_as_job("python", [], code) and not runs_as_job("python", ["x"], code)
    as_job = _answer(http, code, stdin, [])
    under_runner = _answer(http, code, stdin, ["no-such-file"])
    assert as_job == under_runner


@pytest.mark.parametrize(
    ("code", "return_code"),
    [
        ("import os, signal\nprint('a', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\nprint('b')", -9),
        ("import os\nprint('a', flush=True)\nos.killpg(0, 15)\nprint('b')", -15),
        ("import signal\nprint('a', flush=True)\nsignal.raise_signal(signal.SIGTERM)\nprint('b')", -15),
        ("import os\nprint('a', flush=True)\nos.abort()\nprint('b')", -6),
    ],
    ids=["kill", "killpg", "raise_signal", "abort"],
)
def test_a_program_that_signals_itself_dies_of_it(http: httpx.Client, code: str, return_code: int) -> None:
    """The init of a PID namespace ignores signals it sends itself: such a program
    runs under the runner, and dies as it would anywhere."""
    assert not runs_as_job("python", [], code)
    body = run(http, code=code, language="python")
    assert (body["status"], body["run_result"]["return_code"], body["run_result"]["stdout"]) == (
        "Failed",
        return_code,
        "a\n",
    )


@pytest.mark.parametrize(
    ("code", "stdout"),
    [
        (
            "import os, time\nif os.fork() == 0:\n    time.sleep(0.2)\n    print('child')\nelse:\n    print('parent')",
            "parent\nchild\n",
        ),
        ("import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 0.2; echo 42'])\nprint('parent')", "parent\n42\n"),
        (
            "import subprocess as sp\nsp.Popen(['sleep', '30'], stdout=sp.DEVNULL, stderr=sp.DEVNULL)\nprint('parent')",
            "parent\n",
        ),
        (
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n    os.close(1)\n    os.close(2)\n"
            "    time.sleep(30)\nprint('parent')",
            "parent\n",
        ),
    ],
    ids=["fork_writes_after", "child_writes_after", "child_holds_no_output", "detached_daemon"],
)
def test_a_program_that_starts_processes_ends_when_its_output_does(http: httpx.Client, code: str, stdout: str) -> None:
    """As `python main.py | ...`: what a process it left writes after it ends is part of
    its output, and a process it left that holds none of it is ended with it."""
    assert not runs_as_job("python", [], code)
    body = run(http, code=code, language="python", run_timeout=20)
    assert (body["status"], body["run_result"]["stdout"]) == ("Success", stdout)
    assert body["run_result"]["execution_time"] < 10


def test_the_time_limit_counts_from_the_jobs_start(http: httpx.Client) -> None:
    body = run(http, code="import time\ntime.sleep(0.2)\nprint('done')", language="python", run_timeout=1)
    assert (body["status"], body["run_result"]["stdout"]) == ("Success", "done\n")
    assert 0.2 <= body["run_result"]["execution_time"] < 1
    body = run(http, code="import time\ntime.sleep(3)", language="python", run_timeout=0.5)
    assert (body["status"], body["run_result"]["status"]) == ("Failed", "TimeLimitExceeded")
    assert 0.5 <= body["run_result"]["execution_time"] < 2


@pytest.mark.parametrize("fetch", [[], ["no-such-file"]], ids=["as_job", "under_runner"])
def test_threads_and_exit_handlers_end_before_the_answer(http: httpx.Client, fetch: list[str]) -> None:
    """As `python main.py` ends: after the program's threads (the large-stack idiom of
    competitive programming never joins its thread) and its `atexit` functions."""
    for name, stdout in (("thread_main", "42\n"), ("atexit", "first\nlast\n")):
        code, stdin = PROGRAMS[name]
        assert _answer(http, code, stdin, fetch) == {
            "answer": "Success",
            "status": "Finished",
            "return_code": 0,
            "stdout": stdout,
            "stderr": "",
        }


@pytest.mark.parametrize("char", ["x", "\u00e9"], ids=["ascii", "two_bytes"])
def test_the_largest_stdin_reaches_the_program_whole(http: httpx.Client, char: str) -> None:
    """Two-byte characters make it larger than the job's file size limit, which its
    memfd is under: the runner then pipes it in."""
    stdin = char * (MAX_STDIN_CHARS - 1) + "\n"
    body = run(http, code="import sys\nprint(len(sys.stdin.buffer.read()))", language="python", stdin=stdin)
    assert (body["status"], body["run_result"]["stdout"]) == ("Success", f"{len(stdin.encode())}\n")


@pytest.mark.parametrize("fetch", [[], ["no-such-file"]], ids=["as_job", "under_runner"])
@pytest.mark.parametrize(
    ("name", "stdout", "return_code"),
    [("restores_stdout", "ans\n", 0), ("closes_stdout", "x\n", 0), ("flush_fails", "", 120)],
)
def test_its_streams_end_as_pythons_do(
    http: httpx.Client, fetch: list[str], name: str, stdout: str, return_code: int
) -> None:
    """`sys.__stdout__` is the stream Python started with, and is flushed; a stream the
    program closed is not flushed again; a failed flush at exit is exit code 120."""
    code, stdin = PROGRAMS[name]
    answer = _answer(http, code, stdin, fetch)
    assert (answer["stdout"], answer["return_code"]) == (stdout, return_code), answer
