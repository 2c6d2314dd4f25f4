"""`pacing.mark_late_tests`: a test record that comes later than its limit allows is a
timeout, whatever it says; nothing else the program writes moves the clock."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes.jobs import CallJob, Job, NativeCallJob, NativeStdioJob, SplitJob, StdioJob, ValuesJob, WireFrame
from rlvr.sandboxes.local import pacing

CALL = CallJob(code="", fn_name="f", inputs=[], timeout_s=1.0)
NATIVE: dict[str, Any] = {"timeout_s": 1.0, "max_output": 1, "memory_mb": 1, "compile_timeout_s": 1}
UNPACED: dict[str, Job] = {
    "stdio": StdioJob(code="", inputs=[], timeout_s=1.0),
    "split": SplitJob(code="", timeout_s=1.0),
    "native_call": NativeCallJob(language="cpp", code="", fn_name="f", inputs=[], **NATIVE),
    "native_stdio": NativeStdioJob(language="cpp", code="", inputs=[], **NATIVE),
    "a frame of no job": WireFrame({"timeout_s": 1.0}),
}
ALLOWANCE = 1.0 * pacing.LATE_FACTOR + pacing.LATE_SLACK_S


def _run(job: Job, timed: list[tuple[dict[str, Any], float]]) -> list[dict[str, Any]]:
    """Records that each came alone, at the given second after the job started."""
    records, arrivals, end = [], [], 0
    for record, at in timed:
        end += 10
        records.append((record, end))
        arrivals.append((end, at))
    pacing.mark_late_tests(job, records, arrivals)
    return [record for record, _ in records]


def ok(i: int) -> dict[str, Any]:
    return {"i": i, "s": "ok", "v": i}


def test_records_in_time_are_left_alone() -> None:
    timed = [({"load": "ok"}, 0.1), (ok(0), 0.2), (ok(1), 0.2 + ALLOWANCE - 0.01), (ok(2), 2 * ALLOWANCE)]
    assert _run(CALL, timed) == [{"load": "ok"}, ok(0), ok(1), ok(2)]


@pytest.mark.parametrize("late", [0, 1, 4])
def test_a_late_record_is_a_timeout(late: int) -> None:
    times, at = [], 0.0
    for i in range(5):
        at += (2 * ALLOWANCE if i == 0 else ALLOWANCE) + 0.05 if i == late else 0.01
        times.append((ok(i), at))
    out = _run(CALL, times)
    assert [r["s"] for r in out] == ["timeout" if i == late else "ok" for i in range(5)]
    assert "v" not in out[late] and out[late]["i"] == late


def test_the_first_test_shares_its_clock_with_the_load() -> None:
    assert _run(CALL, [(ok(0), 2 * ALLOWANCE - 0.01)])[0]["s"] == "ok"
    assert _run(CALL, [(ok(0), 2 * ALLOWANCE + 0.01)])[0]["s"] == "timeout"


@pytest.mark.parametrize(
    "heartbeat",
    [{"load": "ok"}, {"i": 99, "s": "ok"}, {"i": -1, "s": "ok"}, {"i": "1", "s": "ok"}, {"x": 1}, {"i": 0, "s": "ok"}],
    ids=["load", "index_out_of_range", "negative", "string_index", "junk", "duplicate_earlier"],
)
def test_other_records_do_not_reset_the_clock(heartbeat: dict[str, Any]) -> None:
    """Written every half second during a slow test: the test is still late."""
    timed = [(ok(0), 0.1)] + [(dict(heartbeat), 0.1 + 0.5 * k) for k in range(1, 8)] + [(ok(1), 4.2)]
    out = _run(CALL, timed)
    assert out[-1]["s"] == "timeout"


def test_records_read_together_share_their_time() -> None:
    records = [(ok(0), 10), (ok(1), 20), (ok(2), 30)]
    pacing.mark_late_tests(CALL, records, [(30, 0.5)])
    assert [r["s"] for r, _ in records] == ["ok", "ok", "ok"]


def test_a_record_split_over_reads_counts_when_its_last_byte_came() -> None:
    records = [(ok(0), 10), (ok(1), 20)]
    pacing.mark_late_tests(CALL, records, [(10, 0.1), (15, 0.2), (20, 0.2 + ALLOWANCE + 0.1)])
    assert [r["s"] for r, _ in records] == ["ok", "timeout"]


@pytest.mark.parametrize("kind", sorted(UNPACED))
def test_only_call_and_values_jobs_are_paced(kind: str) -> None:
    assert _run(UNPACED[kind], [(ok(0), 100.0)])[0]["s"] == "ok"


@pytest.mark.parametrize("timeout", [None, 0, -1, "1", True])
def test_a_job_without_a_usable_limit_is_not_paced(timeout: Any) -> None:
    assert _run(ValuesJob(code="", exprs=[], timeout_s=timeout), [(ok(0), 100.0)])[0]["s"] == "ok"


def test_a_gap_in_the_indexes_ends_the_check() -> None:
    out = _run(CALL, [(ok(0), 0.1), (ok(2), 50.0)])
    assert [r["s"] for r in out] == ["ok", "ok"]  # test 1 has no result: it fails anyway


def test_a_record_already_a_timeout_keeps_what_it_says() -> None:
    record = {"i": 0, "s": "timeout", "e": "own words"}
    assert _run(CALL, [(dict(record), 50.0)])[0] == record
