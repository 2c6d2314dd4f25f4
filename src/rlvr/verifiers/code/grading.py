"""Grading a run: the prepared ground truth (`Prepared`) against the records the
sandbox brought back. Every record may be the program's forgery, so each step is total
over whatever a record holds."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import Any

from rlvr.sandboxes import RunResult, Status
from rlvr.sandboxes.jobs import NativeCallJob, NativeStdioJob, SplitJob, SplitTests, StdioJob, TestedJob, ValuesJob
from rlvr.sandboxes.runner import wire
from rlvr.sandboxes.runner.core import Record
from rlvr.verifiers.base import Details, Outcome, Verdict
from rlvr.verifiers.code import compare
from rlvr.verifiers.code.literals import Tests
from rlvr.verifiers.code.models import CodeParams, HumanEvalTests

MAX_REASON = 2000


@dataclass
class Prepared:
    """A ground truth turned into a runner job (minus the program) and what to expect."""

    language: str
    n_tests: int
    # Without its program: `CodeVerifier._spec` puts the response's in.
    job: TestedJob
    tests: SplitTests | None = None
    expected: list[Any] = field(default_factory=list)
    # A HumanEval check run as values: its calls pass or fail together, as one test
    # under one test's time limit, each judged as its assert judges it (`expected`
    # then holds `pure.Judged`s).
    one_test: bool = False
    # Names the tests take from the program beyond the entry point, in any format: no
    # trusted source gives them (`rlvr.sandboxes.runner.names`, rule 5), so the program
    # could redefine them (`helpers.names_from_program`, `helpers.assert_names`).
    untrusted_names: list[str] = field(default_factory=list)
    # Names the tests take from the program: a fenced block defining one of them is
    # the program (`extract_code`).
    defines: list[str] = field(default_factory=list)
    # The HumanEval prompt a completion (the entry point's body alone) is run after
    # (`helpers.completion_head`).
    completion_head: str | None = None
    # A HumanEval ground truth that came without its prompt, and what it was prepared
    # into with each item prompt seen so far (`CodeVerifier._with_task_prompt`).
    promptless: HumanEvalTests | None = None
    by_item_prompt: dict[str, Prepared] = field(default_factory=dict)
    # Call-based outputs that are each wrapped in a list of one, as APPS and TACO store
    # them (`CallTests.outputs_wrapped`): the value inside passes too, as their harness
    # accepts `outputs[i][0]`.
    wrapped_outputs: bool = False
    # Each test's input and expected output as atoms (`signals.test_probes`), made on
    # first need and shared by the ground truth's items.
    test_probes: Tests | None = None
    # A stdin ground truth's tests split into their cases (`signals.case_probes`).
    case_probes: Tests | None = None
    # The names the tests call the program's functions by (`signals`), made on first need.
    task_names: frozenset[str] | None = None

    @property
    def mode(self) -> str:
        """The job's kind, as results' details name it."""
        return self.job.MODE

    @property
    def counted_tests(self) -> int:
        """The tests a reward counts (records come for `n_tests`)."""
        return 1 if self.one_test else self.n_tests


def lost() -> Outcome:
    return Outcome(0.0, Verdict.ERROR, "the sandbox returned no result", mask=True)


def judged_by_company(result: RunResult) -> bool:
    """Whether a run that shared the machine with a batch may owe its end to the rest of
    the batch: a timeout (wall time, which contention stretches), a SIGKILL that neither
    the client nor the job's own memory limit sent (the host's OOM killer picks any
    job), or the sandbox failing. Alone, the same run gets its verdict."""
    if result.infra_error or result.status == Status.TIMEOUT:
        return True
    if result.status == Status.CRASHED and result.signal == signal.SIGKILL:
        return True
    return any(record.get("s") == "timeout" or record.get("load") == "timeout" for record in result.records)


def _record_map(result: RunResult, n: int) -> tuple[Record | None, dict[int, Record], set[int]]:
    load: Record | None = None
    tests: dict[int, Record] = {}
    duplicates: set[int] = set()
    for record in result.records:
        if "load" in record:
            if load is None or record.get("load") != "ok":
                load = record
            continue
        index = record.get("i")
        if type(index) is not int or not 0 <= index < n:
            continue
        if index in tests:
            duplicates.add(index)
        tests[index] = record
    return load, tests, duplicates


def _text(value: Any, default: str, limit: int = MAX_REASON) -> str:
    """A record's text field for a reason. The program may have forged the record, so
    anything but a string is `default`, and a lone surrogate (valid in JSON, not in
    UTF-8, so it would break the response) is replaced."""
    if type(value) is not str or not value:
        return default
    return value[-limit:].encode("utf-8", "replace").decode("utf-8")


def _check_record(prep: Prepared, index: int, record: Record) -> tuple[bool, str]:
    """Whether test `index` passed, and why not. A record may be forged (call and values
    modes run the program in the runner's process), so whatever it holds is the
    program's: wire and compare are total over it (their hypothesis tests say so), and
    should anything still raise, that is this test failing, never the grader failing."""
    try:
        return _judge(prep, index, record)
    except Exception as exc:
        return False, f"unusable record ({type(exc).__name__})"


def _judge(prep: Prepared, index: int, record: Record) -> tuple[bool, str]:
    status = record.get("s")
    why = _text(record.get("e"), _text(status, "malformed record"), 200)
    job = prep.job
    if isinstance(job, SplitJob):
        return status == "pass", why
    if isinstance(job, StdioJob | NativeStdioJob):
        code = record.get("code")
        if status != "ok" or type(code) is not int or code != 0:
            return False, f"run {_text(status, '?', 50)} (exit code {code if type(code) is int else '?'})"
        out = record.get("out")
        if type(out) is not str:
            return False, "malformed record"
        return compare.stdout_equal(out, prep.expected[index])
    if status != "ok":
        return False, why
    if isinstance(job, NativeCallJob):
        if "j" not in record:
            return False, "malformed record"
        return _call_equal(prep, record["j"], prep.expected[index]), "wrong value"
    if "v" not in record:
        return False, "malformed record"
    try:
        value = wire.decode(record["v"])
        if prep.one_test:
            return prep.expected[index].holds(value), "wrong value"
        if isinstance(job, ValuesJob):
            return compare.python_equal(value, prep.expected[index]), "wrong value"
        return _call_equal(prep, wire.to_json(value), prep.expected[index]), "wrong value"
    except (wire.WireError, wire.Unsupported) as exc:
        return False, f"unusable value: {exc}"[:200]


def _call_equal(prep: Prepared, actual: Any, expected: Any) -> bool:
    if compare.json_equal(actual, expected):
        return True
    return prep.wrapped_outputs and compare.json_equal(actual, expected[0])


@dataclass
class _Tally:
    """What the per-test records add up to."""

    passed: int = 0
    first_failure: str = ""
    timed_out: bool = False


def _tally(prep: Prepared, tests: dict[int, Record], duplicates: set[int]) -> _Tally:
    tally = _Tally()
    for index in range(prep.n_tests):
        record = tests.get(index)
        if record is None:
            ok, why = False, "no result (the run ended early)"
        elif index in duplicates:
            ok, why = False, "duplicate result records"
        else:
            ok, why = _check_record(prep, index, record)
            tally.timed_out = tally.timed_out or record.get("s") == "timeout"
        if ok:
            tally.passed += 1
        elif not tally.first_failure:
            tally.first_failure = f"test {index}: {why}"
    return tally


def _failed(prep: Prepared, params: CodeParams, result: RunResult, tally: _Tally, details: Details) -> Outcome:
    """The outcome when not every test passed."""
    score = tally.passed / prep.counted_tests if params.reward == "fraction" else 0.0
    reason = tally.first_failure
    if result.status == Status.TIMEOUT:
        # Every test within its own limit, the job as a whole past its wall time: a
        # request may ask for a longer deadline (`deadline_s`), which the job's follows.
        reason = f"{reason}; run ended: timeout (the job's wall time, a share of the item's deadline)"
    elif result.status != Status.OK:
        reason = f"{reason}; run ended: {result.status.value}"
    timed_out = tally.timed_out or result.status == Status.TIMEOUT
    if result.status == Status.TIMEOUT or (timed_out and tally.passed == 0):
        # A job cut at its wall time scored what the deadline let it run, not what the
        # program is worth: a timeout, whatever share passed, and so never cached.
        verdict = Verdict.TIMEOUT
    elif score > 0:
        verdict = Verdict.PARTIAL
    else:
        verdict = Verdict.TIMEOUT if timed_out else Verdict.INCORRECT
    return Outcome(score, verdict, reason[:MAX_REASON], details)


def grade(prep: Prepared, params: CodeParams, result: RunResult) -> Outcome:
    details: Details = {
        "status": result.status.value,
        "mode": prep.mode,
        "tests": prep.counted_tests,
        "wall_s": round(result.wall_s, 4),
        "cpu_s": round(result.cpu_s, 4),
    }
    if prep.untrusted_names:
        details["untrusted_names"] = prep.untrusted_names
    if result.infra_error:
        return Outcome(0.0, Verdict.ERROR, f"sandbox failure: {result.infra_error}", details, mask=True)
    load, tests, duplicates = _record_map(result, prep.n_tests)
    if load is not None and load.get("load") != "ok":
        verdict = Verdict.TIMEOUT if load.get("load") == "timeout" else Verdict.INCORRECT
        reason = _text(load.get("e"), "program failed to load")
        return Outcome(0.0, verdict, reason, {**details, "passed": 0})
    tally = _tally(prep, tests, duplicates)
    if prep.one_test:
        tally.passed = int(tally.passed == prep.n_tests)
    details["passed"] = tally.passed
    if result.status in (Status.MEMORY, Status.OUTPUT_LIMIT):
        details["limit"] = result.status.value
    if result.status == Status.MEMORY:
        # Past its memory limit, in any of its processes (the job's cgroup counts them
        # all), a program fails as judges fail it, whatever its tests printed first.
        return Outcome(0.0, Verdict.INCORRECT, f"memory limit exceeded ({tally.passed} tests passed)", details)
    if tally.passed == prep.counted_tests:
        return Outcome(1.0, Verdict.CORRECT, "", details)
    if result.stderr and "Traceback" in result.stderr:
        details["stderr_tail"] = _text(result.stderr, "", 1000)
    return _failed(prep, params, result, tally, details)
