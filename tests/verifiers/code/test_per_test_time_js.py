"""A JavaScript test's time limit holds for each test, though one node process runs them
all (`native_call`).

The class: the job's node process had one limit for all its tests together (the
per-test limit times the tests), and its records were relayed after it exited. A
program slow on one test (five times its limit) and quick on the others got reward 1: a
brute force a judge would stop passed. The runner now relays each record as it comes
and stops node when the record that is due is later than the limit after the one
before (`sandboxes/runner/native.py`, `_Relay`).
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.services import require
from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

TIMEOUT_S = 0.5
SLOW_MS = 2500  # five times the limit, within the old budget for all 10 tests
N = 10

SLOW = """function f(x) {{
  if (x === {slow}) {{
    const end = Date.now() + {slow_ms};
    while (Date.now() < end) {{ {inner} }}
  }}
  return x + 1;
}}
"""
# What the program writes on fd 3 (the harness's record channel) while it is slow.
FD3 = "process.mainModule.require('fs').writeSync(3, {line});"
FORGERIES = {
    "nothing": "",
    "load_mark": FD3.format(line="'L\\n'"),
    "junk_lines": FD3.format(line="'x\\n'"),
    "empty_lines": FD3.format(line="'\\n'"),
    "forged_due_record": FD3.format(line="JSON.stringify({i: x, s: 'ok', v: x + 1}) + '\\n'"),
    "forged_next_record": FD3.format(line="JSON.stringify({i: x + 1, s: 'ok', v: x + 2}) + '\\n'"),
    "forged_bool_index": FD3.format(line='\'{"i": true, "s": "ok", "v": 2}\\n\''),
}
HONEST = """function f(x) {{
  const end = Date.now() + {busy_ms};
  while (Date.now() < end) {{}}
  return x + 1;
}}
"""


@pytest.fixture(scope="module", autouse=True)
def _node() -> None:
    require(shutil.which("node") is not None, "node")


def _ground_truth(n: int = N) -> dict[str, Any]:
    return {
        "language": "javascript",
        "fn_name": "f",
        "inputs": [[i] for i in range(n)],
        "outputs": [i + 1 for i in range(n)],
    }


def _fenced(program: str) -> str:
    return f"```javascript\n{program}```"


@pytest.mark.parametrize("slow", [0, 3, N - 1])
def test_one_slow_test_is_a_timeout(slow: int) -> None:
    program = SLOW.format(slow=slow, slow_ms=SLOW_MS, inner="")
    out = grade(_fenced(program), _ground_truth(), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)
    assert out.verdict.value == "timeout" and f"test {slow}" in out.reason, out.reason


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_lines_the_program_writes_buy_no_time(forgery: str) -> None:
    program = SLOW.format(slow=3, slow_ms=SLOW_MS, inner=FORGERIES[forgery])
    out = grade(_fenced(program), _ground_truth(), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and not out.mask, (forgery, out.verdict, out.reason)


def test_the_other_tests_still_count_with_fraction() -> None:
    program = SLOW.format(slow=N - 1, slow_ms=SLOW_MS, inner="")
    out = grade(_fenced(program), _ground_truth(), timeout_s=TIMEOUT_S, reward="fraction")
    assert out.score == pytest.approx((N - 1) / N) and not out.mask, (out.verdict, out.reason)


def test_a_slow_load_is_a_timeout() -> None:
    program = f"const end = Date.now() + {SLOW_MS};\nwhile (Date.now() < end) {{}}\n" + HONEST.format(busy_ms=0)
    out = grade(_fenced(program), _ground_truth(), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and not out.mask and out.verdict.value == "timeout", (out.verdict, out.reason)


@pytest.mark.parametrize("busy_ms", [0, 100, 300])
def test_honest_programs_within_their_limit_pass(busy_ms: int) -> None:
    """Ten tests at 60% of the limit take more than the limit together, as before."""
    out = grade(_fenced(HONEST.format(busy_ms=busy_ms)), _ground_truth(), timeout_s=TIMEOUT_S)
    assert out.score == 1.0, (out.verdict, out.reason)


def test_a_program_that_keeps_node_alive_still_passes() -> None:
    """A timer left running keeps node from exiting after the last test: stopped a limit
    later, with every record in."""
    program = "setInterval(() => {}, 1000);\n" + HONEST.format(busy_ms=0)
    out = grade(_fenced(program), _ground_truth(3), timeout_s=TIMEOUT_S)
    assert out.score == 1.0, (out.verdict, out.reason)


def test_wrong_values_still_fail_on_time() -> None:
    program = "function f(x) { return x; }\n"
    out = grade(_fenced(program), _ground_truth(), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and out.verdict.value == "incorrect", (out.verdict, out.reason)


@pytest.mark.usefixtures("code_backend")
def test_on_each_backend() -> None:
    program = SLOW.format(slow=3, slow_ms=SLOW_MS, inner="")
    out = grade(_fenced(program), _ground_truth(), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and not out.mask and out.verdict.value == "timeout", (out.verdict, out.reason)
