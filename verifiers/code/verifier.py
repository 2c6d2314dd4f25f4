"""The `code` verifier: run the response's program against the ground truth's tests
in a sandbox, compare outside it."""

from __future__ import annotations

import math
import shutil
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rlvr.sandboxes import RunResult, RunSpec, SandboxUnavailable, Status, get_sandbox, isolation_report
from rlvr.sandboxes.base import Limits, meets_isolation
from rlvr.sandboxes.runner import wire
from rlvr.verifiers.base import BatchEntry, GradeInput, Outcome, Verdict
from rlvr.verifiers.code import asserts, compare, helpers
from rlvr.verifiers.code.description import COMPARISON_RULES
from rlvr.verifiers.code.extract import extract_code
from rlvr.verifiers.code.models import (
    AssertTests,
    CallTests,
    CodeParams,
    GroundTruth,
    HumanEvalTests,
    StdioTests,
)
from rlvr.verifiers.config import SandboxPolicy

DEADLINE_S = 30.0
# Items whose jobs a worker keeps in flight at once (`verify_many`).
MAX_BATCH = 32
# A job is killed after this long, well inside DEADLINE_S, so that a slow program is
# graded here instead of taking its worker down with the dispatcher's kill.
MAX_JOB_WALL_S = 24.0
JOB_OVERHEAD_S = 2.0
COMPILE_TIMEOUT_S = 15.0
COMPILE_MEMORY_MB = 2048
NODE_MEMORY_MB = 4096
MAX_OUTPUT_PER_TEST = 1024 * 1024
MAX_REASON = 2000
# What a Python solution finds bound without importing it (`runner.preludes`): call-based
# problems come from LeetCode-style judges, which pre-import the common modules; other
# function tests give the `typing` names their signatures use.
PYTHON_CALL_ENVIRONMENT = "leetcode"
PYTHON_FUNCTION_ENVIRONMENT = "typing"
# Names of an assert test's program that the extractor looks for: enough for any
# test's functions, few enough that its scan stays linear in the response.
MAX_DEFINED_NAMES = 16


@dataclass
class Prepared:
    """A ground truth turned into a runner job (minus the program) and what to expect."""

    language: str
    mode: str
    n_tests: int
    job: dict[str, Any]
    tests: dict[str, Any] | None = None
    expected: list[Any] = field(default_factory=list)
    # A HumanEval check run as values: its calls pass or fail together, as one test
    # under one test's time limit, each judged as its assert judges it (`expected`
    # then holds `pure.Judged`s).
    one_test: bool = False
    # Names a split check takes from the program beyond the entry point, because the
    # ground truth gave no prompt to take them from (`helpers.names_from_program`).
    untrusted_names: list[str] = field(default_factory=list)
    # Names the tests take from the program: a fenced block defining one of them is
    # the program (`extract_code`).
    defines: list[str] = field(default_factory=list)
    # The HumanEval prompt a completion (the entry point's body alone) is run after
    # (`helpers.completion_head`).
    completion_head: str | None = None

    @property
    def counted_tests(self) -> int:
        """The tests a reward counts (records come for `n_tests`)."""
        return 1 if self.one_test else self.n_tests


def _program(response: str, prep: Prepared) -> str:
    """The response's program; a HumanEval completion (the entry point's body alone,
    as base models and the dataset's `canonical_solution` write it) after its prompt,
    as HumanEval's harness runs it."""
    code = extract_code(response, prep.language, prep.defines)
    if prep.completion_head is not None and _starts_indented(code):
        return prep.completion_head + code
    return code


def _starts_indented(code: str) -> bool:
    """Whether the first line of code (not blank, not a comment) is indented: a body,
    which Python alone refuses (`unexpected indent`)."""
    for line in code.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return line[0] in " \t"
    return False


def _toolchains() -> dict[str, str | None]:
    return {"python": sys.executable, "cpp": shutil.which("g++"), "javascript": shutil.which("node")}


class CodeVerifier:
    name = "code"
    # 1.1: integers compare exactly, and the fence extractor reads CRLF and list items.
    # 1.3: a HumanEval check of literal calls runs as values, each call under the time
    # limit (the job under the check's).
    # 1.4: so does a check whose asserts judge one call each with pure operations.
    # 1.5: a check's helpers come from the prompt; floats take abs-or-rel 1e-6; library
    # types holding plain values pass; the defining block of the answer after
    # `</think>` is the program; judges' pre-imports (`runner.preludes`); a HumanEval
    # body runs after its prompt.
    # 1.6: each test of a JavaScript call job has its own time limit (one node process
    # runs them all; it had their limits together).
    version = "1.6.0"
    description = (
        "Runs the response's program (the last fenced block of the language that defines what the tests "
        "call, else the last one; after a `</think>`, the answer's blocks first) against assert, HumanEval, "
        "call-based or stdin/stdout tests in an isolated "
        "sandbox; the comparison happens outside it. Function-style programs run as their judges run them: "
        "call-based ones after LeetCode's usual imports (typing, collections, itertools, functools, heapq, "
        "bisect, string, math), assert and HumanEval ones after `from typing import *` and, where the ground "
        "truth has it, the HumanEval prompt; the tests see only the program's own names. Scripts (stdin/stdout) "
        "run as `python solution.py`.\n\n" + COMPARISON_RULES
    )
    params_model = CodeParams
    ground_truth_model = GroundTruth
    default_deadline_s = DEADLINE_S
    max_batch = MAX_BATCH

    def __init__(self, policy: SandboxPolicy | None = None) -> None:
        self.policy = policy or SandboxPolicy()

    def availability(self) -> dict[str, Any]:
        try:
            report = isolation_report(self.policy.backend, self.policy.docker)
        except Exception as exc:
            report = {"isolation": "none", "error": str(exc)}
        return {
            "available": self._accepts_isolation(str(report.get("isolation", "none"))),
            "languages": {lang: path is not None for lang, path in _toolchains().items()},
            "sandbox": report,
            "min_isolation": self.policy.min_isolation,
        }

    def _accepts_isolation(self, level: str) -> bool:
        return meets_isolation(level, self.policy.min_isolation) or self.policy.allow_weak_isolation

    def prepare(self, params: CodeParams, gt: GroundTruth) -> Prepared:
        prep = self._prepare(params, gt)
        prep.defines = _defined_by_program(gt)
        if isinstance(gt, HumanEvalTests) and gt.prompt is not None:
            prep.completion_head = helpers.completion_head(gt.prompt, gt.entry_point)
        return prep

    def _prepare(self, params: CodeParams, gt: GroundTruth) -> Prepared:
        base: dict[str, Any] = {
            "timeout_s": params.timeout_s,
            "stop_on_failure": params.stop_on_failure,
            "max_output": MAX_OUTPUT_PER_TEST,
            "memory_mb": params.memory_mb,
        }
        if isinstance(gt, HumanEvalTests):
            # As HumanEval's harness runs prompt + completion, the program runs after
            # the prompt's imports and helpers; the tests take the helpers from there too.
            trusted = helpers.trusted_helpers(gt.prompt, gt.entry_point) if gt.prompt is not None else None
            base = {**base, "environment": PYTHON_FUNCTION_ENVIRONMENT, "prelude": trusted or ""}
            calls = asserts.check_calls(gt.test, gt.entry_point)
            if calls is not None:
                exprs, expected = calls
                job = {**base, "mode": "values", "exprs": exprs}
                return Prepared("python", "values", len(exprs), job, None, expected, one_test=True)
            tests: dict[str, Any] = {"kind": "check", "test": gt.test, "entry_point": gt.entry_point}
            untrusted: list[str] = []
            if trusted is not None:
                tests["helpers"] = trusted
            else:
                untrusted = helpers.names_from_program(gt.test, gt.entry_point)
            return Prepared("python", "split", 1, {**base, "mode": "split"}, tests, untrusted_names=untrusted)
        if isinstance(gt, AssertTests):
            base["environment"] = PYTHON_FUNCTION_ENVIRONMENT
            split = [asserts.split_assert(t) for t in gt.tests]
            if gt.setup is None and all(s is not None for s in split):
                exprs = [s[0] for s in split if s is not None]
                expected = [s[1] for s in split if s is not None]
                return Prepared(
                    "python", "values", len(exprs), {**base, "mode": "values", "exprs": exprs}, None, expected
                )
            tests = {"kind": "asserts", "tests": gt.tests, "setup": gt.setup}
            return Prepared("python", "split", len(gt.tests), {**base, "mode": "split"}, tests)
        if isinstance(gt, CallTests):
            mode = "call" if gt.language == "python" else "native_call"
            job = {**base, "mode": mode, "language": gt.language, "fn_name": gt.fn_name}
            if mode == "call":
                job["environment"] = PYTHON_CALL_ENVIRONMENT
            job["inputs"] = gt.inputs
            return Prepared(gt.language, mode, len(gt.inputs), job, None, list(gt.outputs))
        assert isinstance(gt, StdioTests)
        mode = "stdio" if gt.language == "python" else "native_stdio"
        job = {**base, "mode": mode, "language": gt.language, "inputs": gt.inputs}
        return Prepared(gt.language, mode, len(gt.inputs), job, None, list(gt.outputs))

    def verify(self, item: GradeInput, params: CodeParams, ground_truth: Any) -> Outcome:
        # Alone, the worker holds the item to its deadline.
        entry = BatchEntry(item, params, ground_truth, MAX_JOB_WALL_S)
        return self._verify([entry], alone=True)[0] or _lost()

    def verify_many(self, entries: Sequence[BatchEntry]) -> list[Outcome | None]:
        """The entries' jobs run in the sandbox together. An entry whose run may have
        been judged by the batch's contention rather than by its program (a timeout,
        a kill nobody asked for, the sandbox failing) is None: verified alone."""
        return self._verify(entries, alone=False)

    def _verify(self, entries: Sequence[BatchEntry], *, alone: bool) -> list[Outcome | None]:
        outcomes: list[Outcome | None] = [None] * len(entries)
        runs: list[tuple[int, Prepared, CodeParams, RunSpec]] = []
        isolation = self._isolation_refusal()
        tools = _toolchains()  # PATH lookups: once per batch, not per item
        for index, entry in enumerate(entries):
            params: CodeParams = entry.params
            gt = entry.ground_truth
            prep = gt if isinstance(gt, Prepared) else self.prepare(params, gt)
            early = isolation or _toolchain_refusal(prep, tools)
            code = "" if early is not None else _program(entry.item.response, prep)
            if early is None and not code.strip():
                early = Outcome(0.0, Verdict.NO_ANSWER, "the response contains no code")
            if early is not None:
                outcomes[index] = early
            else:
                runs.append((index, prep, params, _spec(prep, code, params, entry.deadline_s, tools)))
        if not runs:
            return outcomes
        try:
            results = get_sandbox(self.policy.backend, self.policy.docker).run_many([run[3] for run in runs])
        except SandboxUnavailable as exc:
            for index, *_ in runs:
                outcomes[index] = Outcome(0.0, Verdict.ERROR, f"sandbox unavailable: {exc}", mask=True)
            return outcomes
        for (index, prep, params, _), result in zip(runs, results, strict=True):
            if alone or not _judged_by_company(result):
                outcomes[index] = grade(prep, params, result)
        return outcomes

    def _isolation_refusal(self) -> Outcome | None:
        try:
            level = get_sandbox(self.policy.backend, self.policy.docker).isolation().get("isolation", "none")
        except SandboxUnavailable as exc:
            return Outcome(0.0, Verdict.ERROR, f"sandbox unavailable: {exc}", mask=True)
        if not self._accepts_isolation(str(level)):
            return Outcome(
                0.0,
                Verdict.ERROR,
                f"sandbox isolation is {level!r}, below the required {self.policy.min_isolation!r} "
                "(set RLVR_ALLOW_WEAK_ISOLATION=true to run anyway)",
                details={"isolation": level},
                mask=True,
            )
        return None


def _defined_by_program(gt: GroundTruth) -> list[str]:
    """The names the tests call that the program must define (`Prepared.defines`)."""
    if isinstance(gt, HumanEvalTests):
        return [gt.entry_point]
    if isinstance(gt, CallTests):
        return [gt.fn_name, "Solution"] if gt.language == "python" else [gt.fn_name]
    if isinstance(gt, AssertTests):
        sources = [(test, f"test_{index}") for index, test in enumerate(gt.tests)]
        return helpers.program_names(sources)[:MAX_DEFINED_NAMES]
    return []


def _toolchain_refusal(prep: Prepared, tools: dict[str, str | None]) -> Outcome | None:
    if tools.get(prep.language) is not None:
        return None
    name = {"cpp": "g++", "javascript": "node"}.get(prep.language, prep.language)
    return Outcome(0.0, Verdict.ERROR, f"toolchain for {prep.language} ({name}) is not installed", mask=True)


def _spec(prep: Prepared, code: str, params: CodeParams, deadline_s: float, tools: dict[str, str | None]) -> RunSpec:
    job = {
        **prep.job,
        "code": code,
        "gxx": tools["cpp"],
        "node": tools["javascript"],
        "compile_timeout_s": COMPILE_TIMEOUT_S,
    }
    per_test = params.timeout_s
    wall = JOB_OVERHEAD_S + per_test * prep.counted_tests + (COMPILE_TIMEOUT_S if prep.language == "cpp" else 0.0)
    wall = min(wall, MAX_JOB_WALL_S, deadline_s)
    memory = params.memory_mb
    if prep.language == "cpp":
        memory = max(memory, COMPILE_MEMORY_MB)  # the runner lowers it again for each test run
    elif prep.language == "javascript":
        memory = max(memory, NODE_MEMORY_MB)  # V8 reserves address space; its heap flag bounds use
    limits = Limits(wall_s=wall, cpu_s=max(2, math.ceil(wall)), memory_mb=memory)
    return RunSpec(job, limits, prep.tests)


def _lost() -> Outcome:
    return Outcome(0.0, Verdict.ERROR, "the sandbox returned no result", mask=True)


def _judged_by_company(result: RunResult) -> bool:
    """Whether a run that shared the machine with a batch may owe its end to the rest of
    the batch: a timeout (wall time, which contention stretches), a SIGKILL that neither
    the client nor the job's own memory limit sent (the host's OOM killer picks any
    job), or the sandbox failing. Alone, the same run gets its verdict."""
    if result.infra_error or result.status == Status.TIMEOUT:
        return True
    if result.status == Status.CRASHED and result.signal == signal.SIGKILL:
        return True
    return any(record.get("s") == "timeout" or record.get("load") == "timeout" for record in result.records)


def _record_map(result: RunResult, n: int) -> tuple[dict[str, Any] | None, dict[int, dict[str, Any]], set[int]]:
    load: dict[str, Any] | None = None
    tests: dict[int, dict[str, Any]] = {}
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


def _check_record(prep: Prepared, index: int, record: dict[str, Any]) -> tuple[bool, str]:
    """Whether test `index` passed, and why not. A record may be forged (call and values
    modes run the program in the runner's process), so whatever it holds is the
    program's: wire and compare are total over it (their hypothesis tests say so), and
    should anything still raise, that is this test failing, never the grader failing."""
    try:
        return _judge(prep, index, record)
    except Exception as exc:
        return False, f"unusable record ({type(exc).__name__})"


def _judge(prep: Prepared, index: int, record: dict[str, Any]) -> tuple[bool, str]:
    status = record.get("s")
    why = _text(record.get("e"), _text(status, "malformed record"), 200)
    if prep.mode == "split":
        return status == "pass", why
    if prep.mode in ("stdio", "native_stdio"):
        code = record.get("code")
        if status != "ok" or type(code) is not int or code != 0:
            return False, f"run {_text(status, '?', 50)} (exit code {code if type(code) is int else '?'})"
        out = record.get("out")
        if type(out) is not str:
            return False, "malformed record"
        return compare.stdout_equal(out, prep.expected[index])
    if status != "ok":
        return False, why
    if prep.mode == "native_call":
        if "j" not in record:
            return False, "malformed record"
        return compare.json_equal(record["j"], prep.expected[index]), "wrong value"
    if "v" not in record:
        return False, "malformed record"
    try:
        value = wire.decode(record["v"])
        if prep.one_test:
            return prep.expected[index].holds(value), "wrong value"
        if prep.mode == "values":
            return compare.python_equal(value, prep.expected[index]), "wrong value"
        return compare.json_equal(wire.to_json(value), prep.expected[index]), "wrong value"
    except (wire.WireError, wire.Unsupported) as exc:
        return False, f"unusable value: {exc}"[:200]


@dataclass
class _Tally:
    """What the per-test records add up to."""

    passed: int = 0
    first_failure: str = ""
    timed_out: bool = False


def _tally(prep: Prepared, tests: dict[int, dict[str, Any]], duplicates: set[int]) -> _Tally:
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


def _failed(prep: Prepared, params: CodeParams, result: RunResult, tally: _Tally, details: dict[str, Any]) -> Outcome:
    """The outcome when not every test passed."""
    score = tally.passed / prep.counted_tests if params.reward == "fraction" else 0.0
    reason = tally.first_failure
    if result.status != Status.OK:
        reason = f"{reason}; run ended: {result.status.value}"
    timed_out = tally.timed_out or result.status == Status.TIMEOUT
    if timed_out and tally.passed == 0:
        verdict = Verdict.TIMEOUT
    elif score > 0:
        verdict = Verdict.PARTIAL
    else:
        verdict = Verdict.TIMEOUT if timed_out else Verdict.INCORRECT
    return Outcome(score, verdict, reason[:MAX_REASON], details)


def grade(prep: Prepared, params: CodeParams, result: RunResult) -> Outcome:
    details: dict[str, Any] = {
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
