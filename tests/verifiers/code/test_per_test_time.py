"""A test's time limit holds even for a program that disarms the runner's alarm.

The class: in call and values modes the program shares its process with the runner,
whose per-test limit is a SIGALRM. A program that ignored, blocked, swallowed or
cancelled it, or caught the timeout and carried on, ran one test for five times its
limit and got reward 1, as long as the job's wall limit (the sum of all tests' limits)
was not reached: a brute force a judge would stop passed. The trusted client now times
each test's record (`sandboxes/local/pacing.py`).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

TIMEOUT_S = 0.5
SLOW_S = 2.5  # the slow test's time: 5 times its limit, within the job's (10 tests)
N = 10
SLOW = 3  # the input the program is slow on

# How the program keeps the runner's alarm from stopping it: (at load, in the loop).
DISARMS = {
    "ignore": ("signal.signal(signal.SIGALRM, signal.SIG_IGN)", "pass"),
    "block": ("signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})", "pass"),
    "swallow": ("signal.signal(signal.SIGALRM, lambda *a: None)", "pass"),
    "default_then_ignore": ("signal.signal(signal.SIGALRM, signal.SIG_DFL)\nsignal.signal(14, 1)", "pass"),
    "cancel_timer": ("", "signal.setitimer(signal.ITIMER_REAL, 0)"),
    "push_timer_back": ("", "signal.setitimer(signal.ITIMER_REAL, 10)"),
    "catch_and_go_on": (
        "",
        "try:\n                sum(range(1000))\n            except BaseException:\n                pass",
    ),
}
PROGRAM = """import signal, time
{setup}

def f(x):
    if x == {slow}:
        end = time.monotonic() + {slow_s}
        while time.monotonic() < end:
            {inner}
    return x + 1
"""
HONEST = """import time

def f(x):
    end = time.monotonic() + {busy}
    while time.monotonic() < end:
        pass
    return x + 1
"""


def _ground_truth(mode: str) -> dict[str, Any]:
    if mode == "call":
        return {"fn_name": "f", "inputs": [[i] for i in range(N)], "outputs": [i + 1 for i in range(N)]}
    return {"tests": [f"assert f({i}) == {i + 1}" for i in range(N)]}


@pytest.mark.parametrize("mode", ["call", "values"])
@pytest.mark.parametrize("disarm", sorted(DISARMS))
def test_a_disarmed_alarm_does_not_buy_time(disarm: str, mode: str) -> None:
    setup, inner = DISARMS[disarm]
    program = PROGRAM.format(setup=setup, inner=inner, slow=SLOW, slow_s=SLOW_S)
    out = grade(program, _ground_truth(mode), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)
    assert out.verdict.value == "timeout" and f"test {SLOW}" in out.reason, out.reason


@pytest.mark.parametrize("mode", ["call", "values"])
def test_the_other_tests_still_count_with_fraction(mode: str) -> None:
    setup, inner = DISARMS["ignore"]
    program = PROGRAM.format(setup=setup, inner=inner, slow=SLOW, slow_s=SLOW_S)
    out = grade(program, _ground_truth(mode), timeout_s=TIMEOUT_S, reward="fraction")
    assert out.score == pytest.approx((N - 1) / N) and not out.mask, (out.verdict, out.reason)


@pytest.mark.parametrize("mode", ["call", "values"])
def test_a_slow_load_with_the_alarm_off_is_a_timeout(mode: str) -> None:
    program = (
        "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        f"end = time.monotonic() + {SLOW_S}\nwhile time.monotonic() < end:\n    pass\n\n"
        "def f(x):\n    return x + 1\n"
    )
    out = grade(program, _ground_truth(mode), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and not out.mask and out.verdict.value == "timeout", (out.verdict, out.reason)


@pytest.mark.parametrize("mode", ["call", "values"])
@pytest.mark.parametrize("busy", [0.0, 0.1, 0.3])
def test_honest_programs_within_their_limit_pass(busy: float, mode: str) -> None:
    out = grade(HONEST.format(busy=busy), _ground_truth(mode), timeout_s=TIMEOUT_S)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.usefixtures("code_backend")
@pytest.mark.parametrize("disarm", ["ignore", "cancel_timer"])
def test_on_each_backend(disarm: str) -> None:
    setup, inner = DISARMS[disarm]
    program = PROGRAM.format(setup=setup, inner=inner, slow=SLOW, slow_s=SLOW_S)
    out = grade(program, _ground_truth("call"), timeout_s=TIMEOUT_S)
    assert out.score == 0.0 and not out.mask and out.verdict.value == "timeout", (out.verdict, out.reason)
