"""The `code` verifier: run the response's program against the ground truth's tests
in a sandbox, compare outside it."""

from __future__ import annotations

import logging
import math
import shutil
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NotRequired, TypedDict

from rlvr.sandboxes import RunResult, RunSpec, SandboxUnavailable
from rlvr.sandboxes.config import SandboxConfig
from rlvr.sandboxes.jobs import (
    AssertSuite,
    CallJob,
    CheckSuite,
    NativeCallJob,
    NativeStdioJob,
    SplitJob,
    StdioJob,
    TestedJob,
    ValuesJob,
)
from rlvr.verifiers.base import BatchEntry, GradeInput, Outcome, Verdict
from rlvr.verifiers.code import asserts, helpers
from rlvr.verifiers.code.description import COMPARISON_RULES
from rlvr.verifiers.code.extract import defines_any, extract_code
from rlvr.verifiers.code.grading import Prepared, grade, judged_by_company, lost
from rlvr.verifiers.code.models import (
    MAX_CODE_CHARS,
    AssertTests,
    CallTests,
    CodeParams,
    GroundTruth,
    HumanEvalTests,
    StdioTests,
)
from rlvr.verifiers.code.signals import SIGNALS, observe
from rlvr.verifiers.programs import BuiltWithRunner
from rlvr.verifiers.turns import cut_code_at_turn_end

DEADLINE_S = 30.0
# Items whose jobs a worker keeps in flight at once (`verify_many`).
MAX_BATCH = 32
# A job is stopped after the config's `job_wall_s`, or after this share of its item's
# deadline where that is longer (a request may ask for more: `deadline_s`), so that a
# slow program is graded here instead of taking its worker down with the dispatcher's kill.
JOB_WALL_SHARE = 0.8
# What a job spends besides its tests (starting, loading the program), in its wall time.
JOB_OVERHEAD_S = 2.0
# What a Python solution finds bound without importing it (`runner.preludes`): call-based
# problems come from LeetCode-style judges, which pre-import the common modules; other
# function tests give the `typing` names their signatures use.
PYTHON_CALL_ENVIRONMENT = "leetcode"
PYTHON_FUNCTION_ENVIRONMENT = "typing"
# Names of an assert test's program that the extractor looks for: enough for any
# test's functions, few enough that its scan stays linear in the response.
MAX_DEFINED_NAMES = 16
# Item prompts a promptless HumanEval ground truth keeps what it was prepared into for:
# one per prompt is the rule (its G responses share it), a few cover reworded copies.
ITEM_PROMPTS_PER_GROUND_TRUTH = 8

_log = logging.getLogger(__name__)


def _program(response: str, prep: Prepared) -> str:
    """The response's program; a HumanEval completion (the entry point's body alone,
    as base models and the dataset's `canonical_solution` write it) after its prompt,
    as HumanEval's harness runs it. A response decoded with its special tokens ends at
    the first that ends a turn (`...```<|im_end|>`; `cut_code_at_turn_end`)."""
    code = extract_code(cut_code_at_turn_end(response), prep.language, prep.defines)
    if not _starts_indented(code):
        return code
    # Indented as a whole (a list item's code without its fence), it is the program
    # where it defines what the tests call; else, after a prompt, a completion.
    flat = textwrap.dedent(code)
    if defines_any(flat, prep.language, prep.defines):
        return flat
    return code if prep.completion_head is None else prep.completion_head + code


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


class CodeVerifier(BuiltWithRunner):
    name = "code"
    # Its versions, and what each changed: CHANGELOG.md.
    version = "1.11.0"
    description = (
        "Runs the response's program (the last fenced block of the language that defines what the tests "
        "call, else the last one; after a `</think>`, the answer's blocks first; before the first "
        "chat-template token such as `<|im_end|>`) against assert, HumanEval, "
        "call-based or stdin/stdout tests in an isolated "
        "sandbox; the comparison happens outside it. Function-style programs run as their judges run them: "
        "call-based ones after LeetCode's usual imports (typing, collections, itertools, functools, heapq, "
        "bisect, string, math), assert and HumanEval ones after `from typing import *` and, where the ground "
        "truth has it (else where the item's prompt holds code defining the entry point), the HumanEval "
        "prompt. Split-mode tests take only their entry point from the program whatever its name; their other "
        "names come from their own imports, the prompt, builtins, standard modules and the same pre-imports as "
        "call-based programs (plus `np`, `pd`), and any name they still take from the program is listed in "
        "`details.untrusted_names`. Scripts (stdin/stdout) "
        "run as `python solution.py`.\n\n" + COMPARISON_RULES
    )
    params_model = CodeParams
    ground_truth_model = GroundTruth
    default_deadline_s = DEADLINE_S
    signals = SIGNALS
    max_batch = MAX_BATCH

    def availability(self) -> dict[str, Any]:
        languages = {lang: path is not None for lang, path in _toolchains().items()}
        return {**self.runner.availability(), "languages": languages}

    def prepare(self, params: CodeParams, gt: GroundTruth) -> Prepared:
        prep = self._prepare(params, gt)
        prep.defines = _defined_by_program(gt)
        if isinstance(gt, HumanEvalTests) and gt.prompt is not None:
            prep.completion_head = helpers.completion_head(gt.prompt, gt.entry_point)
        elif isinstance(gt, HumanEvalTests):
            prep.promptless = gt
        return prep

    def _with_task_prompt(self, prep: Prepared, params: CodeParams, prompt: str) -> Prepared:
        """`prep` of a HumanEval ground truth without its prompt, prepared again with the
        item's prompt where that is the task's code (`helpers.task_prompt`), as if the
        ground truth had carried it: the check's helpers then come from the prompt, not
        from the program, and a completion (the body alone) runs after it. The G
        responses to one prompt share what it was prepared into."""
        gt = prep.promptless
        if gt is None or not prompt:
            return prep
        hit = prep.by_item_prompt.get(prompt)
        if hit is None:
            task = helpers.task_prompt(prompt, gt.entry_point, MAX_CODE_CHARS)
            hit = prep if task is None else self.prepare(params, gt.model_copy(update={"prompt": task}))
            if len(prep.by_item_prompt) >= ITEM_PROMPTS_PER_GROUND_TRUTH:
                prep.by_item_prompt.pop(next(iter(prep.by_item_prompt)))
            prep.by_item_prompt[prompt] = hit
        return hit

    def _prepare(self, params: CodeParams, gt: GroundTruth) -> Prepared:
        """The ground truth's job, with no program yet (`_spec` adds the response's)."""
        limits = _PerTest(
            params.timeout_s, params.stop_on_failure, self.runner.config.max_output_per_test_bytes, params.signals
        )
        if isinstance(gt, HumanEvalTests):
            return _humaneval_prepared(gt, limits)
        if isinstance(gt, AssertTests):
            _, untrusted = helpers.assert_names(_assert_sources(gt))
            split = [asserts.split_assert(t) for t in gt.tests]
            if gt.setup is None and all(s is not None for s in split):
                exprs = [s[0] for s in split if s is not None]
                expected = [s[1] for s in split if s is not None]
                job = ValuesJob("", exprs, **limits.python(PYTHON_FUNCTION_ENVIRONMENT))
                return Prepared("python", len(exprs), job, None, expected, untrusted_names=untrusted)
            split_job = SplitJob("", **limits.python(PYTHON_FUNCTION_ENVIRONMENT))
            suite = AssertSuite(gt.tests, gt.setup)
            return Prepared("python", len(gt.tests), split_job, suite, untrusted_names=untrusted)
        compile_s = self.runner.config.compile_timeout_s
        if isinstance(gt, CallTests):
            call: TestedJob = (
                CallJob("", gt.fn_name, gt.inputs, **limits.python(PYTHON_CALL_ENVIRONMENT))
                if gt.language == "python"
                else NativeCallJob(
                    language=gt.language,
                    code="",
                    fn_name=gt.fn_name,
                    inputs=gt.inputs,
                    **limits.native(params.memory_mb, compile_s),
                )
            )
            prep = Prepared(gt.language, len(gt.inputs), call, None, list(gt.outputs))
            prep.wrapped_outputs = gt.outputs_wrapped
            return prep
        assert isinstance(gt, StdioTests)
        stdio: TestedJob = (
            StdioJob("", gt.inputs, **limits.stdio())
            if gt.language == "python"
            else NativeStdioJob(
                language=gt.language, code="", inputs=gt.inputs, **limits.native(params.memory_mb, compile_s)
            )
        )
        return Prepared(gt.language, len(gt.inputs), stdio, None, list(gt.outputs))

    def verify(self, item: GradeInput, params: CodeParams, ground_truth: Any) -> Outcome:
        return self.verify_within(BatchEntry(item, params, ground_truth, DEADLINE_S))

    def verify_within(self, entry: BatchEntry) -> Outcome:
        """The item alone, its job stopped in time (`job_wall_s`) to be graded inside
        the deadline the worker holds it to."""
        return self._verify([entry], alone=True)[0] or lost()

    def verify_many(self, entries: Sequence[BatchEntry]) -> list[Outcome | None]:
        """The entries' jobs run in the sandbox together. An entry whose run may have
        been judged by the batch's contention rather than by its program (a timeout,
        a kill nobody asked for, the sandbox failing) is None: verified alone."""
        return self._verify(entries, alone=False)

    def _verify(self, entries: Sequence[BatchEntry], *, alone: bool) -> list[Outcome | None]:
        outcomes: list[Outcome | None] = [None] * len(entries)
        runs: list[tuple[int, Prepared, CodeParams, RunSpec, str]] = []
        isolation = self.runner.refusal()
        tools = _toolchains()  # PATH lookups: once per batch, not per item
        for index, entry in enumerate(entries):
            params: CodeParams = entry.params
            gt = entry.ground_truth
            prep = gt if isinstance(gt, Prepared) else self.prepare(params, gt)
            prep = self._with_task_prompt(prep, params, entry.item.prompt)
            early = isolation or _toolchain_refusal(prep, tools)
            code = "" if early is not None else _program(entry.item.response, prep)
            if early is None and not code.strip():
                early = Outcome(0.0, Verdict.NO_ANSWER, "the response contains no code")
            if early is not None:
                outcomes[index] = early
            else:
                # In a batch, a job gets no more wall time than its deadline of CPU: one
                # that needs more, under the batch's contention, is judged alone after.
                wall_s = job_wall_s(self.runner.config, entry.deadline_s)
                if not alone:
                    wall_s = min(wall_s, entry.deadline_s)
                spec = _spec(self.runner.config, prep, code, params, wall_s, tools)
                runs.append((index, prep, params, spec, code))
        if not runs:
            return outcomes
        try:
            results = self.runner.run_many([run[3] for run in runs])
        except SandboxUnavailable as exc:
            for index, *_ in runs:
                outcomes[index] = Outcome(0.0, Verdict.ERROR, f"sandbox unavailable: {exc}", mask=True)
            return outcomes
        for (index, prep, params, _, code), result in zip(runs, results, strict=True):
            if alone or not judged_by_company(result):
                outcome = outcomes[index] = grade(prep, params, result)
                outcome.signals = _signals(prep, code, result, outcome) if params.signals else ()
        return outcomes


def _signals(prep: Prepared, code: str, result: RunResult, outcome: Outcome) -> tuple[str, ...]:
    """The run's signals; telemetry must never fail the item it describes, so a signal
    reading that breaks is logged and reads as none."""
    try:
        return observe(prep, code, result, outcome)
    except Exception:
        _log.exception("code signals failed; the item keeps its outcome without them")
        return ()


class _StdioLimits(TypedDict):
    timeout_s: float
    stop_on_failure: bool
    max_output: int
    watch: NotRequired[bool]


class _PythonLimits(_StdioLimits):
    environment: str


class _ScriptLimits(TypedDict):
    timeout_s: float
    stop_on_failure: bool
    max_output: int


class _NativeLimits(_ScriptLimits):
    memory_mb: int
    compile_timeout_s: float


@dataclass(frozen=True, slots=True)
class _PerTest:
    """What every test of an item's job is held to, as each kind of job takes it."""

    timeout_s: float
    stop_on_failure: bool
    max_output: int
    # Whether a Python program runs under the audit hook (`CodeParams.signals`); the
    # default is left out of the job's frame.
    watch: bool = True

    def script(self) -> _ScriptLimits:
        return {"timeout_s": self.timeout_s, "stop_on_failure": self.stop_on_failure, "max_output": self.max_output}

    def stdio(self) -> _StdioLimits:
        limits: _StdioLimits = {
            "timeout_s": self.timeout_s,
            "stop_on_failure": self.stop_on_failure,
            "max_output": self.max_output,
        }
        if not self.watch:
            limits["watch"] = False
        return limits

    def python(self, environment: str) -> _PythonLimits:
        return {**self.stdio(), "environment": environment}

    def native(self, memory_mb: int, compile_timeout_s: float) -> _NativeLimits:
        return {**self.script(), "memory_mb": memory_mb, "compile_timeout_s": compile_timeout_s}


def _humaneval_prepared(gt: HumanEvalTests, limits: _PerTest) -> Prepared:
    """As HumanEval's harness runs prompt + completion, the program runs after the
    prompt's imports and helpers, and the tests take the helpers from there too. A check
    of literal calls runs as values, one test; any other as a split job."""
    trusted = helpers.trusted_helpers(gt.prompt, gt.entry_point) if gt.prompt is not None else None
    function, prelude = limits.python(PYTHON_FUNCTION_ENVIRONMENT), trusted or ""
    calls = asserts.check_calls(gt.test, gt.entry_point)
    if calls is not None:
        exprs, expected = calls
        job = ValuesJob("", exprs, prelude=prelude, **function)
        return Prepared("python", len(exprs), job, None, expected, one_test=True)
    tests = CheckSuite(gt.test, gt.entry_point, trusted)
    # What the check reads that no trusted source (the prompt included) gives it comes
    # from the program.
    untrusted = helpers.names_from_program(gt.test, gt.entry_point, trusted or "")
    return Prepared("python", 1, SplitJob("", prelude=prelude, **function), tests, untrusted_names=untrusted)


def _defined_by_program(gt: GroundTruth) -> list[str]:
    """The names the tests call that the program must define (`Prepared.defines`)."""
    if isinstance(gt, HumanEvalTests):
        return [gt.entry_point]
    if isinstance(gt, CallTests):
        return [gt.fn_name, "Solution"] if gt.language == "python" else [gt.fn_name]
    if isinstance(gt, AssertTests):
        entry, untrusted = helpers.assert_names(_assert_sources(gt))
        return ([entry] if entry is not None else []) + untrusted[: MAX_DEFINED_NAMES - 1]
    # A C++ program defines `main`, where a block of sample input does not.
    return ["main"] if gt.language == "cpp" else []


def _assert_sources(gt: AssertTests) -> list[tuple[str, str]]:
    """An assert suite's code as the split runner reads it: its setup, then its tests."""
    setup = [(gt.setup, "setup.py")] if gt.setup else []
    return setup + [(test, f"test_{index}") for index, test in enumerate(gt.tests)]


def job_wall_s(config: SandboxConfig, deadline_s: float) -> float:
    """The most wall time the job of an item with this deadline (seconds of CPU, which
    the dispatcher lets run to a multiple of it in wall time) gets when it runs alone."""
    return max(config.job_wall_s, JOB_WALL_SHARE * deadline_s)


def _toolchain_refusal(prep: Prepared, tools: dict[str, str | None]) -> Outcome | None:
    if tools.get(prep.language) is not None:
        return None
    name = {"cpp": "g++", "javascript": "node"}.get(prep.language, prep.language)
    return Outcome(0.0, Verdict.ERROR, f"toolchain for {prep.language} ({name}) is not installed", mask=True)


def _spec(
    config: SandboxConfig,
    prep: Prepared,
    code: str,
    params: CodeParams,
    max_wall_s: float,
    tools: dict[str, str | None],
) -> RunSpec:
    job = prep.job
    if isinstance(job, NativeCallJob | NativeStdioJob):
        job = replace(job, code=code, gxx=tools["cpp"], node=tools["javascript"])
    else:
        job = replace(job, code=code)
    compiling = config.compile_timeout_s if prep.language == "cpp" else 0.0
    wall = min(JOB_OVERHEAD_S + params.timeout_s * prep.counted_tests + compiling, max_wall_s)
    memory = job_memory_mb(config, prep.language, params.memory_mb)
    return RunSpec(job, config.limits(wall_s=wall, cpu_s=max(2, math.ceil(wall)), memory_mb=memory), prep.tests)


def job_memory_mb(config: SandboxConfig, language: str, program_mb: int) -> int:
    """A job's memory limit for a program allowed `program_mb`: a C++ job compiles first
    (the runner lowers the limit again for each test run); V8 reserves address space up
    front (its heap flag bounds what it uses)."""
    if language == "cpp":
        return max(program_mb, config.compile_memory_mb)
    if language == "javascript":
        return max(program_mb, config.node_memory_mb)
    return program_mb
