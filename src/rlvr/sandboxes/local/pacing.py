"""Per-test time limits of call and values jobs, checked by the trusted client.

In these modes the program runs in the runner's own process, and the runner limits
each test with SIGALRM: the program can ignore or block the signal and take as long as
it likes on one test, borrowing the time of the others up to the job's wall limit, so
a correct but too slow program (a brute force a judge would stop) would pass. The
client sees each record arrive. A test whose record comes later than its limit allows
after the record of the test before it (for the first test, after the job started: the
program's load is under the same limit) is graded as timed out, whatever the record
says.

Only the records the grader uses are clocks: test records by index. Any other line the
program writes (a second `load`, a record for an index out of range) moves nothing, and
a second record for an index fails that test anyway. The allowance is generous:
honest programs are stopped by the runner's own SIGALRM at the limit itself, and a
record that comes late because the machine was busy, not the program, is a timeout in
a batch, which the verifier runs again alone.
"""

from __future__ import annotations

import bisect

from rlvr.sandboxes.jobs import CallJob, Job, ValuesJob
from rlvr.sandboxes.runner.core import Record

# How late a test's record may come: its limit times this, plus LATE_SLACK_S.
LATE_FACTOR = 1.5
LATE_SLACK_S = 0.25
def mark_late_tests(job: Job, records: list[tuple[Record, int]], arrivals: list[tuple[int, float]]) -> None:
    """Turn each test record of `job` (a record, and the channel offset its line ends
    at) that came too late into a timeout, in place. `arrivals` holds, for each read of
    the channel, how many bytes had come by then and when (seconds after the job
    started), in order."""
    # Only these jobs run their tests in the program's own process.
    if not isinstance(job, CallJob | ValuesJob) or not arrivals:
        return
    timeout_s = job.timeout_s
    if type(timeout_s) not in (int, float) or not timeout_s > 0:
        return
    allowance = float(timeout_s) * LATE_FACTOR + LATE_SLACK_S
    ends = [end for end, _ in arrivals]
    first: dict[int, tuple[Record, float]] = {}
    for record, end in records:
        index = record.get("i")
        if type(index) is int and index >= 0 and index not in first:
            at = bisect.bisect_left(ends, end)
            first[index] = (record, arrivals[min(at, len(arrivals) - 1)][1])
    previous = 0.0
    for index in range(max(first, default=-1) + 1):
        if index not in first:
            return  # the run ended early: the tests from here on have no result anyway
        record, arrived = first[index]
        # The first test's clock starts with the job: the program's load shares it.
        budget = allowance * (2 if index == 0 else 1)
        if arrived - previous > budget and record.get("s") != "timeout":
            took = arrived - previous
            record.clear()
            record.update({"i": index, "s": "timeout", "e": f"its result came {took:.2f}s after the last one"})
        previous = arrived
