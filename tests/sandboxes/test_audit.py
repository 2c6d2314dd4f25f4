"""`runner.audit` in a process of its own (its hook stays for the life of the process
that installs it): what it notes of a program's events, and what it leaves alone."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = """
import builtins, json, sys
from rlvr.sandboxes.runner import audit
exits = []
with audit.paused():
    audit.watch()
assert not audit._state["on"], "watch ran while paused"
audit.watch(exits.append, builtins)
ns = {{"__name__": "solution"}}
try:
    exec(compile({program!r}, "solution.py", "exec"), ns)
except BaseException:
    pass
print(json.dumps({{"drained": audit.drain(final=True), "exits": exits}}))
"""


def _noted(program: str) -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(program=textwrap.dedent(program))],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize(
    ("program", "signal"),
    [
        ("open('/etc/hostname')", "sandbox_denied"),
        ("import os; os.listdir('/')", "sandbox_denied"),
        ("import os; os.scandir('/proc/1')", "sandbox_denied"),
        ("import socket; socket.socket()", "sandbox_denied"),
        ("import sys; sys._current_frames()", "harness_tampering"),
        ("import textwrap; textwrap.indent.__code__", "harness_tampering"),
        ("import gc; gc.get_objects()", "harness_tampering"),
        ("import builtins; builtins.len = lambda s: 3", "harness_tampering"),
        ("import builtins; builtins.sorted = lambda *a, **k: []", "harness_tampering"),
        (
            "def g(): pass\ng.__code__ = (lambda: 1).__code__\nimport textwrap\ntextwrap.indent.__code__ = g.__code__",
            "harness_tampering",
        ),
    ],
)
def test_an_event_the_program_causes_is_noted(program: str, signal: str) -> None:
    assert signal in _noted(program)["drained"]


def test_a_signal_the_program_sends_itself_is_reported_at_once() -> None:
    noted = _noted("import os; os.kill(os.getpid(), 0); os.kill(os.getpid(), 28)")
    assert noted["exits"] == [["exit_before_tests"]]


@pytest.mark.parametrize(
    "program",
    [
        "import collections; collections.namedtuple('P', 'a')",
        "import enum\nclass C(enum.Enum):\n    A = 1",
        "import traceback, io\ntry:\n    1/0\nexcept ZeroDivisionError:\n    traceback.print_exc(file=io.StringIO())",
        "import tempfile, os\nd = tempfile.mkdtemp()\nopen(os.path.join(d, 'a'), 'w').write('x')\nos.listdir(d)",
        "open('/dev/null').read()",
        "import fractions, decimal, heapq",
        "class A:\n    pass\nA.x = 1\ndef g(): pass\ng.__code__ = (lambda: 1).__code__",
        "import inspect\ndef g(a): pass\ninspect.signature(g)",
    ],
)
def test_an_honest_program_s_events_are_not_noted(program: str) -> None:
    assert _noted(program) == {"drained": [], "exits": []}


def test_evidence_from_a_pipe_keeps_known_names_only() -> None:
    from rlvr.sandboxes.runner import audit

    assert audit.parse("sandbox_denied\nmade_up\nexit_before_tests\n") == ["exit_before_tests", "sandbox_denied"]
    assert audit.parse("") == []


def test_a_builtin_no_test_uses_may_be_rebound() -> None:
    # `input = sys.stdin.readline` in builtins is how fast-I/O templates start.
    assert _noted("import builtins, sys\nbuiltins.input = sys.stdin.readline") == {"drained": [], "exits": []}
