"""Nothing a program does masks its own item.

Hostile programs, composed from actions a policy can take (exit codes, signals,
`os._exit`, closing fds, garbage and forged records on fd 3 and stdout, huge output,
killing its parent, fork bombs, sleeping, every exception type, sabotaging the
runner's own modules), run through the real verifier and sandbox in every mode:
each must come back scored (reward 0, since no test's expected value can be reached),
never masked and never as an exception (which the service turns into a mask).

Only a failure of the sandbox itself, which no program can cause, may mask an item.
"""

from __future__ import annotations

import builtins
import json
import signal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_grader_records import records

pytestmark = pytest.mark.usefixtures("isolated")

# No program can produce this value without forging it, and none of them does.
SENTINEL = "expected-5be1d0-unreachable"
GROUND_TRUTHS: dict[str, dict[str, Any]] = {
    "values": {"tests": [f"assert f(2) == {SENTINEL!r}", f"assert f(3) == {SENTINEL!r}"]},
    "call": {"fn_name": "f", "inputs": [[2], [3]], "outputs": [SENTINEL, SENTINEL]},
    "stdio": {"inputs": ["2\n", "3\n"], "outputs": [SENTINEL + "\n"] * 2},
    "split": {"tests": [f"assert f(2) == {SENTINEL!r} and True", f"assert [f(3)] == [{SENTINEL!r}]"]},
    "humaneval": {"test": f"def check(candidate):\n    assert candidate(2) == {SENTINEL!r}\n", "entry_point": "f"},
}
PARAMS: dict[str, Any] = {"timeout_s": 1.0}

_DEEP_JSON = "b'[' * 200000 + b']' * 200000 + b'\\n'"
_RECORDS = [
    'b\'{"load":"ok"}\\n\'',
    # What the trusted test half writes when a test passes: worth nothing from the program.
    'b\'{"i":0,"s":"pass"}\\n{"i":1,"s":"pass"}\\n\'',
    'b\'{"i":0,"s":"ok","v":{"$c":[\' + b\'1\' * 400 + b\',0]}}\\n\'',
    'b\'{"i":1,"s":"ok","v":{"$s":[[1]]}}\\n{"i":0,"s":"ok","v":{"$t":5}}\\n\'',
    'b\'{"i":0,"s":"error","e":"\\\\ud800"}\\n{"i":1,"s":"timeout"}\\n\'',
    'b\'{"load":"error","e":[[[[1]]]]}\\n\'',
    'b\'{"i":0,"s":"ok","v":\' + b\'9\' * 5000 + b\'}\\n\'',
    'b\'{"i":true,"s":"ok"}\\n{"i":1e400}\\n{"i":NaN}\\n\'',
    "bytes(range(256)) * 100",
    "b'{' * 100000",
    'b\'{"load":"ok"}\' * 100000',
    "b'\\n' * 1000000",
]
_LOAD_OK = 'b\'{"load":"ok"}\\n\''
_SIGNALS = ["SIGKILL", "SIGSEGV", "SIGTERM", "SIGABRT", "SIGXCPU", "SIGXFSZ", "SIGBUS", "SIGFPE", "SIGILL", "SIGALRM"]
_SIGNALS += ["SIGINT", "SIGHUP", "SIGPIPE", "SIGUSR1", "SIGSYS", "SIGTRAP", "SIGQUIT", "SIGSTOP"]
_EXCEPTIONS = sorted(
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
)

# name -> a statement (possibly several lines), run at top level or inside `f`.
ACTIONS: dict[str, str] = {
    **{f"exit_{k}": f"import sys; sys.exit({k})" for k in (0, 1, 2, 86, 87, 126, 127, 137, 255, -1, "'x'", None)},
    **{f"os_exit_{k}": f"import os; os._exit({k})" for k in (0, 1, 2, 3, 86, 87, 88, 125, 126, 127, 137, 255)},
    **{f"signal_{s}": f"import os, signal; os.kill(os.getpid(), signal.{s})" for s in _SIGNALS},
    # Made without __init__, so that each is raised as its own type.
    **{f"raise_{e}": f"raise {e}.__new__({e})" for e in _EXCEPTIONS},
    **{f"close_fd_{fd}": f"import os; os.close({fd})" for fd in range(6)},
    **{f"fd3_record_{n}": f"import os; os.write(3, {data})" for n, data in enumerate(_RECORDS)},
    # Forged records with no real ones after them: the runner never writes its own.
    **{
        f"fd3_forge_{n}": f"import os; os.write(3, {_LOAD_OK} + {data}); os._exit(0)" for n, data in enumerate(_RECORDS)
    },
    **{f"stdout_record_{n}": f"import os; os.write(1, {data})" for n, data in enumerate(_RECORDS)},
    "fd3_deep_json": f"import os; os.write(3, {_DEEP_JSON})",
    "fd3_flood": "import os\nwhile True:\n    os.write(3, b'{\"i\":0}\\n' * 4096)",
    "stdout_flood": "import os\nwhile True:\n    os.write(1, b'x' * 65536)",
    "stderr_flood": "import os\nwhile True:\n    os.write(2, b'Traceback \\xff\\xfe' * 4096)",
    "fd3_replaced": "import os; os.dup2(os.open('/dev/null', os.O_WRONLY), 3)",
    "fd3_nonblocking": "import os; os.set_blocking(3, False)",
    "close_all_fds": "import os; os.closerange(0, 4096)",
    "kill_parent": "import os, signal; os.kill(os.getppid() or 1, signal.SIGKILL)",
    "kill_all": "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass",
    "kill_group": "import os, signal; os.killpg(0, signal.SIGKILL)",
    "kill_pid_1": "import os, signal; os.kill(1, signal.SIGKILL)",
    "fork_bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    "fork_and_exit_87": "import os\nif os.fork() == 0:\n    os._exit(87)\nos.wait()\nos._exit(87)",
    "sleep": "import time; time.sleep(60)",
    "ignore_alarm_and_spin": "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass",
    "spin": "while True:\n    pass",
    "memory": "x = bytearray(1 << 40)",
    "memory_list": "x = [0] * (1 << 34)",
    "memory_grow": "x = []\nwhile True:\n    x.append(bytearray(1 << 24))",
    "recursion": "def r():\n    return r()\nr()",
    "c_stack_overflow": "import sys\nsys.setrecursionlimit(10 ** 7)\ndef r():\n    return r()\nr()",
    "segfault": "import ctypes; ctypes.string_at(0)",
    "nofile_0": "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (0, 0))",
    "cpu_limit_0": "import resource; resource.setrlimit(resource.RLIMIT_CPU, (0, 0))",
    "fsize_0": "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))",
    "break_json": "import sys, json\njson.dumps = None\nsys.modules['json'] = None\nsys.modules['_json'] = None",
    "break_builtins": "import builtins\nbuiltins.str = None\nbuiltins.isinstance = None\nbuiltins.len = None",
    "break_os_write": "import os\nos.write = lambda *a: 0",
    "break_stdout": "import sys\nsys.stdout = None\nsys.stderr = None",
    "atexit_garbage": f"import atexit, os\natexit.register(lambda: os.write(3, {_LOAD_OK} * 10))\nraise SystemExit",
    "thread_exit": "import os, threading, time\nthreading.Thread(target=lambda: os._exit(87)).start()\ntime.sleep(5)",
    "setsid": "import os; os.setsid()",
    "surrogate_error": "raise ValueError('\\ud800' * 100)",
    "huge_error": "raise ValueError('x' * 10_000_000)",
    "exception_bad_str": "class E(Exception):\n    def __str__(self):\n        raise E()\nraise E()",
    "return_weird": "return {1: [(), frozenset(), 1j, b'x', float('nan')]}",
}


def _program(action: str, where: str, mode: str) -> str:
    body = "\n".join("    " + line for line in action.splitlines())
    if where == "top":
        program = f"{action}\ndef f(x):\n    return 0\n"
    else:
        program = f"def f(x):\n{body}\n    return 0\n"
    if mode == "stdio":
        program += "import sys\nprint(f(int(sys.stdin.read() or 0)))\n"
    return program


def _assert_scored(program: str, mode: str) -> None:
    out = grade(program, GROUND_TRUTHS[mode], **PARAMS)
    assert not out.mask, out.reason
    assert out.score == 0.0, out.reason
    # What the service sends back: UTF-8 JSON (a lone surrogate in a reason breaks it).
    json.dumps([out.reason, out.details], ensure_ascii=False, allow_nan=False).encode()


# Actions also tried at top level, where the program is loaded (the rest run in `f`).
AT_TOP_TOO = ("exit_", "os_exit_", "signal_", "close_fd_", "fd3_", "stdout_record_", "break_", "kill_", "fork_")


def _cases() -> list[Any]:
    cases = []
    for name in ACTIONS:
        places = ("call", "top") if name.startswith(AT_TOP_TOO) else ("call",)
        for where in places:
            for mode in GROUND_TRUTHS:
                cases.append(pytest.param(name, where, mode, id=f"{name}-{where}-{mode}"))
    return cases


@pytest.mark.parametrize(("name", "where", "mode"), _cases())
def test_hostile_action_is_scored_not_masked(name: str, where: str, mode: str) -> None:
    _assert_scored(_program(ACTIONS[name], where, mode), mode)


# Composed programs leave out the actions that only wait for a deadline (they are
# covered one by one above), so that each example takes a fraction of a second.
QUICK_ACTIONS = sorted(set(ACTIONS) - {"sleep", "spin", "ignore_alarm_and_spin", "fork_bomb", "break_os_write"})


def _channel_bytes(forged: list[dict[str, Any]], garbage: bytes) -> bytes:
    lines = []
    for record in forged:
        try:
            lines.append(json.dumps(record).encode("utf-8", "surrogatepass"))
        except ValueError:  # an int too long for str(): no program could write it either
            lines.append(b"{}")
    return b"\n".join([garbage, *lines, b""])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(list(GROUND_TRUTHS)),
    steps=st.lists(st.tuples(st.sampled_from(QUICK_ACTIONS), st.booleans()), min_size=1, max_size=3),
    garbage=st.binary(max_size=200),
    forged=records,
    forge_at_top=st.booleans(),
    exit_after=st.booleans(),
)
def test_composed_hostile_programs(
    mode: str,
    steps: list[tuple[str, bool]],
    garbage: bytes,
    forged: list[dict[str, Any]],
    forge_at_top: bool,
    exit_after: bool,
) -> None:
    """Actions chained (each may be caught, so the next one runs), at top level or in
    `f`, after generated garbage and generated records written to fd 3 (then, maybe,
    an exit, so that no real record follows the forged ones)."""
    channel = _channel_bytes(forged, garbage)
    exit_line = "\n    os._exit(0)" if exit_after else ""
    forge = f"import os\ntry:\n    os.write(3, {channel!r}){exit_line}\nexcept OSError:\n    pass"
    top: list[str] = []
    inner: list[str] = []
    (top if forge_at_top else inner).append(forge)
    for name, at_top in steps:
        guarded = (
            "try:\n" + "\n".join("    " + line for line in ACTIONS[name].splitlines()) + "\nexcept Exception:\n    pass"
        )
        if ACTIONS[name].startswith("return"):
            guarded = ACTIONS[name]
            at_top = False
        (top if at_top else inner).append(guarded)
    body = "\n".join("    " + line for step in inner for line in step.splitlines())
    program = "\n".join(top) + f"\ndef f(x):\n{body or '    pass'}\n    return 0\n"
    if mode == "stdio":
        program += "import sys\nprint(f(int(sys.stdin.read() or 0)))\n"
    _assert_scored(program, mode)


def test_signal_names_exist() -> None:
    """The catalogue names real signals and exceptions (a typo would make an action
    a NameError, which tests nothing)."""
    assert all(hasattr(signal, s) for s in _SIGNALS)
    assert len(_EXCEPTIONS) > 60 and "BaseExceptionGroup" in _EXCEPTIONS
