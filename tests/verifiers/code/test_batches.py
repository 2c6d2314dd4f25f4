"""`verify_many`: the code verifier runs a batch's jobs in the sandbox together, and
each item comes out as it would alone. What contention may have decided (a timeout, a
kill nobody asked for) is left to `verify`, alone; nothing a program in the batch does
masks it or any other item, or changes another item's reward."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes import RunResult, Status
from rlvr.verifiers.code.grading import judged_by_company
from tests.verifiers.code.conftest import grade, grade_many
from tests.verifiers.code.test_masking_property import GROUND_TRUTHS, QUICK_ACTIONS, _program

pytestmark = pytest.mark.usefixtures("isolated")

GOOD = "def f(x):\n    return x * 2\n"
# Correct answers for GOOD in every test format.
GOOD_TRUTHS: dict[str, dict[str, Any]] = {
    "values": {"tests": ["assert f(2) == 4", "assert f(3) == 6"]},
    "call": {"fn_name": "f", "inputs": [[2], [3]], "outputs": [4, 6]},
    "stdio": {"inputs": ["2\n", "3\n"], "outputs": ["4\n", "6\n"]},
    "split": {"tests": ["assert f(2) == 4 and True", "assert [f(3)] == [6]"]},
    "humaneval": {"test": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "f"},
}
STDIO_MAIN = "import sys\nprint(f(int(sys.stdin.read() or 0)))\n"


def good(mode: str) -> tuple[str, dict[str, Any]]:
    return GOOD + (STDIO_MAIN if mode == "stdio" else ""), GOOD_TRUTHS[mode]


def _hostile_batches() -> list[Any]:
    """Every quick hostile action in every format, in batches of 16 with a correct
    program of a format after each: neighbours of every kind."""
    cases = [(name, mode) for name in QUICK_ACTIONS for mode in GROUND_TRUTHS]
    return [pytest.param(cases[i : i + 8], id=f"batch{i // 8}") for i in range(0, len(cases), 8)]


@pytest.mark.parametrize("cases", _hostile_batches())
def test_hostile_neighbours_change_nothing(cases: list[tuple[str, str]]) -> None:
    entries = []
    for name, mode in cases:
        from tests.verifiers.code.test_masking_property import ACTIONS

        entries.append((_program(ACTIONS[name], "call", mode), GROUND_TRUTHS[mode]))
        entries.append(good(mode))
    said, final = grade_many(entries, timeout_s=1.0)
    for index, out in enumerate(final):
        where = f"{cases[index // 2]} {'hostile' if index % 2 == 0 else 'its correct neighbour'}: {out.reason}"
        assert not out.mask, where
        assert out.score == (0.0 if index % 2 == 0 else 1.0), where
    # The batch itself judged most items: it is no slower way of calling `verify`.
    assert sum(out is not None for out in said) >= len(said) // 2


@pytest.mark.parametrize("mode", list(GOOD_TRUTHS))
def test_the_batch_says_what_alone_says(mode: str) -> None:
    program, gt = good(mode)
    wrong = program.replace("x * 2", "x * 3")
    half = program.replace("x * 2", "4 if x == 2 else 0")
    raises = program.replace("return x * 2", "raise ValueError('no')")
    memory = program.replace("return x * 2", "return len(bytearray(1 << 34))")
    responses = [
        f"```python\n{program}```",
        program,
        f"```python\n{wrong}```",
        half,
        raises,
        memory,
        "no code here at all",
        "```python\n```",
        "def f(x) return",
    ]
    for reward in ("all", "fraction"):
        said, final = grade_many([(r, gt) for r in responses], reward=reward)
        alone = [grade(r, gt, reward=reward) for r in responses]
        for response, batch_out, alone_out in zip(responses, said, alone, strict=True):
            assert batch_out is not None, response
            got = (batch_out.score, batch_out.verdict, batch_out.mask, batch_out.reason)
            assert got == (alone_out.score, alone_out.verdict, alone_out.mask, alone_out.reason), response
        assert [o.score for o in final] == [o.score for o in alone]


@pytest.mark.parametrize(
    "stuck",
    [
        "import time\n    time.sleep(60)",
        "while True:\n        pass",
        "import signal\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass",
    ],
    ids=["sleep", "spin", "spin_ignoring_alarm"],
)
@pytest.mark.parametrize("mode", ["values", "call", "split", "humaneval", "stdio"])
def test_what_contention_may_decide_is_left_to_verify_alone(stuck: str, mode: str) -> None:
    program, gt = good(mode)
    stuck_program = program.replace("return x * 2", f"{stuck}\n    return x * 2")
    entries = [good(mode), (stuck_program, gt), good(mode)]
    said, final = grade_many(entries, timeout_s=1.0, deadline_s=3.0)
    assert said[1] is None
    assert final[1].score == 0.0 and not final[1].mask, final[1].reason
    assert [final[0].score, final[2].score] == [1.0, 1.0]


def test_a_job_in_a_batch_stops_at_its_items_deadline() -> None:
    """The per-test limit allows 20 s, the item's deadline 1 s: the batch holds the
    job to the deadline (its CPU is what the worker's backstop counts), and leaves the
    verdict to `verify` alone."""
    program, gt = good("call")
    spin = program.replace("return x * 2", "while True:\n        pass")
    said, _ = grade_many([(spin, gt), good("call")], timeout_s=20.0, deadline_s=1.0)
    assert said[0] is None and said[1] is not None and said[1].score == 1.0


@pytest.mark.parametrize(
    ("result", "left_to_verify"),
    [
        (RunResult(Status.OK, exit_code=0, records=[{"load": "ok"}, {"i": 0, "s": "ok", "v": 1}]), False),
        (RunResult(Status.TIMEOUT, signal=9), True),
        (RunResult(Status.CRASHED, signal=9), True),  # the host's OOM killer may have picked it
        (RunResult(Status.CRASHED, signal=11), False),
        (RunResult(Status.CRASHED, exit_code=1), False),
        (RunResult(Status.MEMORY, signal=9), False),  # its own cgroup's limit: its own doing
        (RunResult(Status.OUTPUT_LIMIT), False),
        (RunResult(Status.CRASHED, infra_error="sandbox zygote died"), True),
        (RunResult(Status.OK, exit_code=0, records=[{"load": "timeout"}]), True),
        (RunResult(Status.OK, exit_code=0, records=[{"load": "ok"}, {"i": 3, "s": "timeout"}]), True),
        (RunResult(Status.OK, exit_code=0, records=[{"load": "ok"}, {"i": 0, "s": "error", "e": "timeout"}]), False),
    ],
)
def test_which_runs_contention_may_have_decided(result: RunResult, left_to_verify: bool) -> None:
    assert judged_by_company(result) is left_to_verify
