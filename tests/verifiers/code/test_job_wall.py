"""A job's wall time follows its item's deadline.

The class: a job was stopped after a fixed 24 s whatever deadline the request asked
for, so a correct program over a suite of many tests (each well inside its own limit)
timed out and scored 0 even where the request had allowed a minute. Now a job alone
gets 24 s or 0.8 of its item's deadline, whichever is longer: the worker tells the
verifier the deadline (`DeadlineVerifying.verify_within`). In a batch a job still gets
no more than its deadline, and one cut there is judged alone after.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from rlvr.sandboxes.config import DEFAULT_JOB_WALL_S, SandboxConfig
from rlvr.verifiers.base import BatchEntry, DeadlineVerifying, GradeInput, Verdict
from rlvr.verifiers.code import CodeParams, CodeVerifier
from rlvr.verifiers.code.verifier import DEADLINE_S, JOB_WALL_SHARE, job_wall_s
from rlvr.verifiers.programs import ProgramRunner
from rlvr.verifiers.registry import Registry
from tests.verifiers.code.conftest import _GT

pytestmark = pytest.mark.usefixtures("isolated")


def _suite(tests: int, step_s: float) -> tuple[str, dict[str, Any]]:
    """A program whose every test sleeps `step_s` (far inside its 5 s limit, and no
    CPU: the dispatcher's deadline counts CPU), and its stdin/stdout tests."""
    response = f"```python\nimport time\ntime.sleep({step_s})\nprint(2 * int(input()))\n```"
    gt = {"inputs": [f"{n}\n" for n in range(tests)], "outputs": [f"{2 * n}\n" for n in range(tests)]}
    return response, gt


SLOW, STDIO = _suite(16, 0.25)  # 4 s in all
SHORT_S = 3.0  # 2.4 s of job wall, once the floor is out of the way: the suite does not fit
LONG_S = 10.0  # 8 s: it does
NO_FLOOR_S = 1.0


def _entry(
    response: str, deadline_s: float, floor_s: float = DEFAULT_JOB_WALL_S, **params: Any
) -> tuple[CodeVerifier, BatchEntry]:
    """`floor_s`: the job wall's floor (the config's `job_wall_s`); 1 s lets a few seconds
    of tests show the share of the deadline."""
    code = CodeVerifier(ProgramRunner(SandboxConfig(job_wall_s=floor_s)))
    p = CodeParams(**params)
    prepared = code.prepare(p, _GT.validate_python(STDIO))
    return code, BatchEntry(GradeInput("", response), p, prepared, deadline_s)


@pytest.mark.parametrize(
    ("deadline", "wall"), [(DEADLINE_S, 24.0), (0.1, 24.0), (5.0, 24.0), (60.0, 48.0), (120.0, 96.0)]
)
def test_the_job_wall(deadline: float, wall: float) -> None:
    config = SandboxConfig()
    assert job_wall_s(config, deadline) == pytest.approx(wall)
    assert job_wall_s(config, deadline) == max(config.job_wall_s, JOB_WALL_SHARE * deadline)
    assert job_wall_s(SandboxConfig(job_wall_s=100.0), deadline) == max(100.0, JOB_WALL_SHARE * deadline)


def test_a_long_suite_passes_alone_under_a_long_deadline() -> None:
    code, entry = _entry(SLOW, LONG_S, NO_FLOOR_S)
    out = code.verify_within(entry)
    assert out.score == 1.0, (out.verdict, out.reason)


def test_a_long_suite_times_out_under_a_short_deadline() -> None:
    code, entry = _entry(SLOW, SHORT_S, NO_FLOOR_S)
    out = code.verify_within(entry)
    assert out.score == 0.0 and not out.mask and "wall time" in out.reason, out.reason


def test_a_fraction_cut_by_the_job_wall_is_a_timeout() -> None:
    """What passed before the wall is the deadline's measure, not the program's: the
    verdict is a timeout (which the verdict cache never keeps), so a later request with
    a longer deadline grades the program in full."""
    code, entry = _entry(SLOW, SHORT_S, NO_FLOOR_S, reward="fraction")
    out = code.verify_within(entry)
    assert 0.0 < out.score < 1.0 and out.verdict == Verdict.TIMEOUT and not out.mask, (out.score, out.verdict)


@pytest.mark.parametrize("reward", ["all", "fraction"])
def test_a_wrong_long_suite_fails_under_a_long_deadline(reward: str) -> None:
    code, entry = _entry(SLOW.replace("2 * int", "3 * int"), LONG_S, NO_FLOOR_S, reward=reward)
    out = code.verify_within(entry)
    assert out.score == (1 / 16 if reward == "fraction" else 0.0) and not out.mask, out.reason  # input 0 passes


def test_in_a_batch_a_job_cut_at_its_deadline_is_judged_alone() -> None:
    code, entry = _entry(SLOW, 2.0)
    assert code.verify_many([entry]) == [None]  # cut at 2 s of wall: not the batch's to judge
    assert code.verify_within(entry).score == 1.0  # alone: 24 s


def test_the_registry_knows_the_hook() -> None:
    registry = Registry(use_entry_points=False)
    assert isinstance(CodeVerifier(), DeadlineVerifying)
    assert registry.get("code").verify_within is not None
    assert registry.get("format").verify_within is None


def test_over_http_a_suite_past_24_s_passes_with_a_longer_deadline(http: httpx.Client) -> None:
    """26 tests of 1 s each: cut at 24 s before, whatever the request asked."""
    response, gt = _suite(26, 1.0)
    item = {"prompt": "", "response": response, "verifier": "code", "ground_truth": gt}
    r = http.post("/v1/grade", json={"items": [item], "deadline_s": 60})
    assert r.status_code == 200, r.text
    result = r.json()["results"][0]
    assert result["reward"] == 1.0, result
