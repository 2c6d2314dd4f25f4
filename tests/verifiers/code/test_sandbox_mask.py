"""Nothing a program does masks its own item (issue 10, class 4): a property test over
generated hostile programs, in every test format, through the verifier and the real
sandbox. A program is a few hostile actions (exit codes, signals to itself, pid 1
and its group, writes and forged records on its fds, exceptions, floods), at load
time or inside the function the tests call."""

from __future__ import annotations

import json
import signal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

FORMATS: dict[str, dict[str, Any]] = {
    "values": {"tests": ["assert f(2) == 4", "assert f(3) == 6"]},
    "split": {"tests": ["assert f(2) == 4", "assert [f(3)] == [6]"]},
    "humaneval": {"test": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "f"},
    "call": {"fn_name": "f", "inputs": [[2], [3]], "outputs": [4, 6]},
}

# The runner's own exit codes (memory, rejected job, internal error) among them.
EXIT_CODES = [0, 1, 70, 86, 87, 126, 137]
SIGNALS = [
    int(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL, signal.SIGSEGV, signal.SIGALRM, signal.SIGUSR1)
]
EXCEPTIONS = ["StopIteration", "SystemExit", "KeyboardInterrupt", "GeneratorExit", "AssertionError", "MemoryError"]
# JSON a forged record may hold: never the expected values (4, 6), so a forgery
# that the grader took at its word would still earn nothing.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers().filter(lambda n: n not in (4, 6)) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["i", "s", "v", "$c", "$h", "load", "e"]), inner, max_size=3)
    ),
    max_leaves=8,
)
RECORDS = st.dictionaries(st.sampled_from(["i", "s", "v", "j", "load", "e", "code", "out"]), JSON_VALUES, max_size=4)


def _forge(record: dict[str, Any]) -> str:
    line = json.dumps(record).encode() + b"\n"
    return f"os.write(3, {line!r})"


ACTIONS = st.one_of(
    (st.sampled_from(EXIT_CODES) | st.integers(0, 255)).map(lambda c: f"os._exit({c})"),
    st.tuples(st.sampled_from(["os.getpid()", "1", "0", "-1"]), st.sampled_from(SIGNALS)).map(
        lambda t: f"os.kill({t[0]}, {t[1]})"
    ),
    st.binary(max_size=40).map(lambda b: f"os.write(3, {b!r})"),
    RECORDS.map(_forge),
    st.sampled_from(EXCEPTIONS).map(lambda e: f"raise {e}('x')"),
    st.sampled_from(["os.close(3)", "os.close(1)", "print('{}\\n' * 50000)", "os.write(3, b'{}\\n' * 20000)"]),
    st.sampled_from(["os.write(3, b'[' * 100000 + b'\\n')", 'os.write(3, b\'{"v": {"$c": ["1e400", 0]}}\\n\')']),
)


def program(actions: list[str], at_load: bool) -> str:
    guarded = "".join(f"    try:\n        {a}\n    except OSError:\n        pass\n" for a in actions)
    if at_load:
        return f"import os\ndef _attack():\n{guarded}_attack()\ndef f(x):\n    return 0\n"
    return f"import os\ndef f(x):\n{guarded}    return 0\n"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=st.lists(ACTIONS, min_size=1, max_size=4), at_load=st.booleans())
def test_no_program_masks_its_own_item(fmt: str, actions: list[str], at_load: bool) -> None:
    outcome = grade(program(actions, at_load), FORMATS[fmt], timeout_s=1.0)
    assert outcome.mask is False, (outcome.reason, outcome.details)
    if fmt in ("split", "humaneval"):  # the program has no way to the records there
        assert outcome.score == 0.0, outcome
