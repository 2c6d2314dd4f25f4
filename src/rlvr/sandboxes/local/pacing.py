"""Per-test time limits of call and values jobs, measured and enforced by the trusted client.

In these modes the program runs in the runner's own process, and the runner limits
each test with SIGALRM: the program can ignore or block the signal and take as long as
it likes on one test. So the client keeps each test's clock itself, by when each record
arrives: the program's load must end (its `load` record) within the limit after the
runner took the job (`core.ACCEPTED`), and each test's record within the limit after
the record before (the load's, for the first test), plus `TEST_SLACK_S` for the
records' way out. A test whose record comes later is graded as timed out, whatever the
record says. The client kills the job once a deadline passes with no record (`TestClock`
gives it the deadline) where no later record could count: the load's (a program that
never loads has no test to pass), and, in a job that stops at its first failure, each
test's. Elsewhere the job runs on, so that its other tests still count (a program stuck
in C code, where the runner's alarm waits, may be honest) until its wall time.

A clock kept outside is sound only if the program cannot work on a test before its
clock starts: the client sends each test's input only then (`Lockstep`), so that no
thread of the program can take on a slow test while the fast ones before it idle.

Only the record that is due moves the clock: a line the program writes itself (fd 3 is
open to it) for a test that is not due moves nothing, and one for the test that is due
only starts the next test's clock early (and, as a second record for that test, fails
it). Honest programs are stopped by the runner's own SIGALRM at the limit itself; a
record that comes late because the machine was busy, not the program, is a timeout in
a batch, which the verifier runs again alone.
"""

from __future__ import annotations

import bisect
import json
from typing import TYPE_CHECKING

from rlvr.sandboxes.runner.core import ACCEPTED, Record

if TYPE_CHECKING:  # the Docker image's pid 1 keeps a clock too, without `jobs`
    from rlvr.sandboxes.jobs import Job

# What a test's record may take beyond the test's limit, on its way from the runner's
# write to the client's read (a wake-up of each under load).
TEST_SLACK_S = 0.25


class TestClock:
    """The clock of a job whose tests run in the program's own process: fed the channel
    as it comes (`feed`), it says by when the next record is due (`deadline`) and which
    records came too late (`mark`). Times are seconds after the job started."""

    __test__ = False  # not a pytest class

    def __init__(self, limit_s: float, tests: int, stop_on_failure: bool = False) -> None:
        self.allowance = limit_s + TEST_SLACK_S
        self.tests = tests
        self.stop_on_failure = stop_on_failure
        self.started_at: float | None = None  # when the clock last started
        self.loaded = False
        self.due = 0  # the test whose record is awaited
        self.late: dict[int | None, float] = {}  # test (None: the load) -> how long it took
        self._pending = b""
        self._accepted = False

    @classmethod
    def of(cls, job: Job) -> TestClock | None:
        """The clock for `job`, if its tests run in the program's process."""
        from rlvr.sandboxes.jobs import CallJob, ValuesJob

        if not isinstance(job, CallJob | ValuesJob):
            return None
        timeout_s = job.timeout_s
        if type(timeout_s) not in (int, float) or not timeout_s > 0:
            return None
        tests = len(job.inputs) if isinstance(job, CallJob) else len(job.exprs)
        return cls(float(timeout_s), tests, job.stop_on_failure is True)

    def deadline(self) -> float | None:
        """When the job is to be killed, its record that is due not having come (see
        above); None while there is no such deadline."""
        if self.started_at is None or self.due >= self.tests:
            return None
        if self.loaded and not self.stop_on_failure:
            return None
        return self.started_at + self.allowance

    @property
    def started(self) -> int:
        """How many tests' clocks have started: the first with the load's record, each
        next one with the record of the one before."""
        if not (self.loaded or self.due):
            return 0
        return min(self.tests, self.due + 1)

    def feed(self, chunk: bytes, at: float) -> None:
        """Take in what came on the channel at `at`."""
        if self.due >= self.tests:
            return  # every test has its record: the rest is not read for the clock
        data = self._pending + chunk
        if not self._accepted:
            if len(data) < len(ACCEPTED):
                self._pending = data
                return
            if not data.startswith(ACCEPTED):
                self.due = self.tests  # not a job the runner took: nothing to time
                return
            self._accepted, self.started_at = True, at
            data = data[len(ACCEPTED) :]
        *lines, self._pending = data.split(b"\n")
        for line in lines:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if type(record) is dict:
                self.see(record, at)

    def see(self, record: Record, at: float) -> None:
        """One record, come at `at`."""
        if self.started_at is None:
            return
        if "load" in record:
            if self.loaded or self.due:
                return
            self.loaded = True
            self._tick(None, at)
            return
        index = record.get("i")
        if type(index) is int and index == self.due:
            self._tick(index, at)
            self.due += 1

    def _load_overdue(self, at: float) -> bool:
        if self.started_at is None or self.loaded or self.due:
            return False
        return at - self.started_at > self.allowance

    def _tick(self, test: int | None, at: float) -> None:
        assert self.started_at is not None
        took = at - self.started_at
        if took > self.allowance:
            self.late[test] = took
        self.started_at = at

    def mark(self, records: list[Record], ended_at: float | None = None) -> None:
        """Turn the first record of each test (and the first load record) that came too
        late into a timeout, in place; and where the job ended (at `ended_at`) past the
        load's deadline with no load record, killed there, say so: the load timed out
        (a compile in C, which no alarm interrupts, leaves the runner no time to)."""
        if ended_at is not None and self._load_overdue(ended_at) and not any("load" in r for r in records):
            limit = self.allowance - TEST_SLACK_S
            records.insert(0, {"load": "timeout", "e": f"loading the program took too long: no result in {limit:g}s"})
        if not self.late:
            return
        seen: set[int | None] = set()
        for record in records:
            key: int | None
            if "load" in record:
                key = None
            elif type(record.get("i")) is int:
                key = record["i"]
            else:
                continue
            if key in seen:
                continue
            seen.add(key)
            took = self.late.get(key, -1.0)
            if took < 0:
                continue
            why = f"its result came {took:.2f}s after the last one (limit {self.allowance - TEST_SLACK_S:g}s)"
            if key is None:
                if record.get("load") == "ok":
                    record.clear()
                    record.update({"load": "timeout", "e": f"loading the program took too long: {why}"})
            elif record.get("s") != "timeout":
                record.clear()
                record.update({"i": key, "s": "timeout", "e": why})


class Lockstep:
    """A job's tests' inputs, held back until each test's clock starts (`TestClock.
    started`): the runner reads each when it is due, and until then it is nowhere in
    the job, whatever the program reads (the runner's memory, its data fd)."""

    def __init__(self, steps: list[bytes], clock: TestClock) -> None:
        self.steps, self.clock = steps, clock
        self.sent = 0

    @property
    def done(self) -> bool:
        return self.sent >= len(self.steps)

    def take(self) -> bytes:
        """The inputs that may go now and have not gone yet (b"": none)."""
        due = min(self.clock.started, len(self.steps))
        if due <= self.sent:
            return b""
        out = b"".join(self.steps[self.sent : due])
        self.sent = due
        return out


def mark_late_tests(job: Job, records: list[tuple[Record, int]], arrivals: list[tuple[int, float]]) -> None:
    """`TestClock`'s verdicts after the run, for a client that did not keep the clock as
    the records came: each test record of `job` (a record, and the channel offset its
    line ends at) that came too late turns into a timeout, in place. `arrivals` holds,
    for each read of the channel, how many bytes had come by then and when (seconds
    after the job started), in order; offsets are from the channel's start,
    `core.ACCEPTED`'s line included."""
    clock = TestClock.of(job)
    if clock is None or not arrivals:
        return
    ends = [end for end, _ in arrivals]

    def arrived(offset: int) -> float:
        return arrivals[min(bisect.bisect_left(ends, offset), len(arrivals) - 1)][1]

    clock.feed(ACCEPTED, arrived(len(ACCEPTED)))
    for record, end in records:
        clock.see(record, arrived(end))
    clock.mark([record for record, _ in records])
