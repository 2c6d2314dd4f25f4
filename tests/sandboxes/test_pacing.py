"""`pacing`: the trusted client's clock of each test of a call or values job. A record
that comes later than its limit (and the slack) after the one before is a timeout,
whatever it says; the load has a clock of its own; nothing but the record that is due
moves the clock; and the deadline of the test that is due is what the client kills the
job at."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes.jobs import CallJob, Job, NativeCallJob, NativeStdioJob, SplitJob, StdioJob, ValuesJob, WireFrame
from rlvr.sandboxes.local import pacing
from rlvr.sandboxes.runner.core import ACCEPTED

N = 5
CALL = CallJob(code="", fn_name="f", inputs=[[i] for i in range(N)], timeout_s=1.0)
NATIVE: dict[str, Any] = {"timeout_s": 1.0, "max_output": 1, "memory_mb": 1, "compile_timeout_s": 1}
UNPACED: dict[str, Job] = {
    "stdio": StdioJob(code="", inputs=["1"], timeout_s=1.0),
    "split": SplitJob(code="", timeout_s=1.0),
    "native_call": NativeCallJob(language="cpp", code="", fn_name="f", inputs=[[1]], **NATIVE),
    "native_stdio": NativeStdioJob(language="cpp", code="", inputs=["1"], **NATIVE),
    "a frame of no job": WireFrame({"timeout_s": 1.0}),
}
ALLOWANCE = 1.0 + pacing.TEST_SLACK_S
LOAD = {"load": "ok"}


def _run(job: Job, timed: list[tuple[dict[str, Any], float]], accepted_at: float = 0.0) -> list[dict[str, Any]]:
    """Records that each came alone, at the given second after the job started, the
    runner having taken the job at `accepted_at`."""
    records, arrivals, end = [], [(len(ACCEPTED), accepted_at)], len(ACCEPTED)
    for record, at in timed:
        end += 10
        records.append((record, end))
        arrivals.append((end, at))
    pacing.mark_late_tests(job, records, arrivals)
    return [record for record, _ in records]


def ok(i: int) -> dict[str, Any]:
    return {"i": i, "s": "ok", "v": i}


def test_records_in_time_are_left_alone() -> None:
    timed = [(dict(LOAD), 0.1), (ok(0), 0.2), (ok(1), 0.2 + ALLOWANCE - 0.01), (ok(2), 0.2 + 2 * ALLOWANCE - 0.02)]
    assert _run(CALL, timed) == [LOAD, ok(0), ok(1), ok(2)]


@pytest.mark.parametrize("late", [0, 1, 4])
def test_a_late_record_is_a_timeout(late: int) -> None:
    times, at = [(dict(LOAD), 0.01)], 0.01
    for i in range(N):
        at += ALLOWANCE + 0.05 if i == late else 0.01
        times.append((ok(i), at))
    out = _run(CALL, times)[1:]
    assert [r["s"] for r in out] == ["timeout" if i == late else "ok" for i in range(N)]
    assert "v" not in out[late] and out[late]["i"] == late


@pytest.mark.parametrize("factor", [1.3, 1.5, 3.0])
def test_no_test_gets_a_multiple_of_its_limit(factor: float) -> None:
    """What the client allowed before (1.5 x, and 3.5 x for the first test) is late."""
    for late in range(3):
        times, at = [(dict(LOAD), 0.01)], 0.01
        for i in range(3):
            at += factor if i == late else 0.01
            times.append((ok(i), at))
        assert _run(CALL, times)[1 + late]["s"] == "timeout"


def test_the_load_has_its_own_clock() -> None:
    # The first test's clock starts at the load's record, not at the job's start.
    assert _run(CALL, [(dict(LOAD), 1.0), (ok(0), 1.0 + ALLOWANCE - 0.01)])[1]["s"] == "ok"
    assert _run(CALL, [(dict(LOAD), 0.1), (ok(0), 0.1 + ALLOWANCE + 0.01)])[1]["s"] == "timeout"
    # A late load is a timeout of the load.
    out = _run(CALL, [(dict(LOAD), ALLOWANCE + 0.01), (ok(0), ALLOWANCE + 0.02)])
    assert out[0]["load"] == "timeout" and out[1]["s"] == "ok"


def test_a_job_killed_at_its_load_deadline_says_the_load_timed_out() -> None:
    """A compile in C (a 200 KiB f-string) lets no alarm write the load's record."""

    def killed_at(at: float, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        clock = pacing.TestClock.of(CALL)
        assert clock is not None
        clock.feed(ACCEPTED, 0.0)
        clock.mark(records, at)
        return records

    assert killed_at(ALLOWANCE + 0.01, [])[0]["load"] == "timeout"
    assert killed_at(ALLOWANCE - 0.01, []) == []  # ended in time: a crash, not a timeout
    assert killed_at(ALLOWANCE + 0.01, [{"load": "error", "e": "x"}]) == [{"load": "error", "e": "x"}]


def test_the_load_clock_starts_when_the_runner_took_the_job() -> None:
    """The sandbox's own start (a busy zygote) is not the program's time."""
    assert _run(CALL, [(dict(LOAD), 5.0 + ALLOWANCE - 0.01)], accepted_at=5.0)[0] == LOAD


@pytest.mark.parametrize(
    "heartbeat",
    [dict(LOAD), {"i": 99, "s": "ok"}, {"i": -1, "s": "ok"}, {"i": "1", "s": "ok"}, {"x": 1}, {"i": 0, "s": "ok"}],
    ids=["load", "index_out_of_range", "negative", "string_index", "junk", "duplicate_earlier"],
)
def test_other_records_do_not_reset_the_clock(heartbeat: dict[str, Any]) -> None:
    """Written every half second during a slow test: the test is still late."""
    timed = (
        [(dict(LOAD), 0.05), (ok(0), 0.1)] + [(dict(heartbeat), 0.1 + 0.5 * k) for k in range(1, 8)] + [(ok(1), 4.2)]
    )
    out = _run(CALL, timed)
    assert out[-1]["s"] == "timeout"


def test_a_forged_record_for_a_later_test_buys_nothing() -> None:
    """The program writes test 2's record early: it moves no clock, and test 1, due
    and slow, is late."""
    out = _run(CALL, [(dict(LOAD), 0.05), (ok(0), 0.1), (ok(2), 0.2), (ok(1), 0.1 + ALLOWANCE + 0.1)])
    assert [r.get("s") for r in out[1:]] == ["ok", "ok", "timeout"]


def test_records_read_together_share_their_time() -> None:
    records = [(dict(LOAD), 5), (ok(0), 10), (ok(1), 20), (ok(2), 30)]
    pacing.mark_late_tests(CALL, records, [(30, 0.5)])
    assert [r.get("s") for r, _ in records] == [None, "ok", "ok", "ok"]


def test_a_record_split_over_reads_counts_when_its_last_byte_came() -> None:
    records = [(dict(LOAD), 5), (ok(0), 10), (ok(1), 20)]
    pacing.mark_late_tests(CALL, records, [(5, 0.05), (10, 0.1), (15, 0.2), (20, 0.2 + ALLOWANCE + 0.1)])
    assert [r.get("s") for r, _ in records] == [None, "ok", "timeout"]


@pytest.mark.parametrize("kind", sorted(UNPACED))
def test_only_call_and_values_jobs_are_paced(kind: str) -> None:
    assert pacing.TestClock.of(UNPACED[kind]) is None
    assert _run(UNPACED[kind], [(ok(0), 100.0)])[0]["s"] == "ok"


@pytest.mark.parametrize("timeout", [None, 0, -1, "1", True])
def test_a_job_without_a_usable_limit_is_not_paced(timeout: Any) -> None:
    assert _run(ValuesJob(code="", exprs=["1"], timeout_s=timeout), [(ok(0), 100.0)])[0]["s"] == "ok"


def test_a_record_already_a_timeout_keeps_what_it_says() -> None:
    record = {"i": 0, "s": "timeout", "e": "own words"}
    assert _run(CALL, [(dict(record), 50.0)])[0] == record


# ------------------------------------------------------------------ the live clock


def _lines(*records: dict[str, Any]) -> bytes:
    import json

    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_the_load_has_a_deadline() -> None:
    clock = pacing.TestClock(1.0, tests=2)
    clock.feed(ACCEPTED, 0.5)
    assert clock.deadline() == pytest.approx(0.5 + ALLOWANCE)
    # Then the tests have none: a job that goes on past a late test still has the
    # others counted.
    clock.feed(_lines(LOAD), 0.6)
    assert clock.deadline() is None


def test_a_job_that_stops_at_a_failure_has_a_deadline_per_test() -> None:
    clock = pacing.TestClock(1.0, tests=2, stop_on_failure=True)
    assert clock.deadline() is None  # the runner has not taken the job yet
    clock.feed(ACCEPTED, 0.5)
    assert clock.deadline() == pytest.approx(0.5 + ALLOWANCE)
    clock.feed(_lines(LOAD), 0.6)
    assert clock.deadline() == pytest.approx(0.6 + ALLOWANCE)
    clock.feed(_lines(ok(1)), 0.7)  # not due: moves nothing
    assert clock.deadline() == pytest.approx(0.6 + ALLOWANCE)
    clock.feed(_lines(ok(0))[:5], 0.8)  # half a line: not yet a record
    assert clock.deadline() == pytest.approx(0.6 + ALLOWANCE)
    clock.feed(_lines(ok(0))[5:], 0.9)
    assert clock.deadline() == pytest.approx(0.9 + ALLOWANCE)
    clock.feed(_lines({"i": 1, "s": "timeout"}), 1.0)
    assert clock.deadline() is None  # every test has its record


def test_a_channel_the_runner_did_not_open_has_no_clock() -> None:
    clock = pacing.TestClock(1.0, tests=1)
    clock.feed(b"forged\n", 0.1)
    assert clock.deadline() is None


def test_the_live_clock_marks_what_came_late() -> None:
    clock = pacing.TestClock(1.0, tests=2)
    clock.feed(ACCEPTED + _lines(LOAD), 0.0)
    clock.feed(_lines(ok(0)), 0.1)
    clock.feed(_lines(ok(1)), 0.1 + ALLOWANCE + 0.5)
    records = [dict(LOAD), ok(0), ok(1)]
    clock.mark(records)
    assert [r.get("s") for r in records] == [None, "ok", "timeout"]
