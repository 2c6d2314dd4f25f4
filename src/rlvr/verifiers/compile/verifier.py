"""The `compile` verifier: does the response's program compile (and without warnings)?

The compiler runs in the sandbox (compilers are attack surface: `#include </dev/zero>`,
template bombs, gigabyte static arrays), under the job's memory cap, a time limit and a
cap on every file it writes; each of those ends the item as `incorrect` or `timeout`,
never masked. Nothing compiled is run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from rlvr.verifiers.base import GradeInput, Outcome, Verdict
from rlvr.verifiers.code.extract import fenced_blocks
from rlvr.verifiers.compile.models import ALIASES, OUTPUT_FILE_MB, CompileParams, LanguageName
from rlvr.verifiers.compile.steps import Step, StepResult, ToolSandbox, reason, which
from rlvr.verifiers.programs import BuiltWithRunner

ROOT = "/tmp/compile"
# The longest job (MAX_TIMEOUT_S) plus the sandbox's start and the driver.
DEADLINE_S = 40.0
MAX_PROGRAM_CHARS = 1024 * 1024
SOURCE = {"python": "main.py", "c": "main.c", "cpp": "main.cpp", "javascript": "main.js", "rust": "main.rs"}
# Byte-compile without running or writing anything: the program's own code never runs.
PY_COMPILE = (
    "import sys\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    source = f.read()\n"
    "try:\n"
    "    compile(source, 'main.py', 'exec', dont_inherit=True)\n"
    "except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:\n"
    "    print(f'error: {type(exc).__name__}: {exc}')\n"
    "    sys.exit(1)\n"
)
# Whether an output line is a warning, in each toolchain's own format (string tests,
# not regexes: the lines echo the program's source).
WARNING_LINE: dict[LanguageName, Callable[[str], bool]] = {
    "c": lambda line: ": warning: " in line,
    "cpp": lambda line: ": warning: " in line,
    "python": lambda line: line.startswith("main.py:") and "Warning: " in line,
    "javascript": lambda line: line.startswith("(node:") and "Warning: " in line,
    "rust": lambda line: line.startswith(("warning: ", "warning[")) and not line.endswith("emitted"),
}
ERROR_MARKS = ("error:", "error[", "Error:")
ToolPaths = dict[LanguageName, str | None]


# What each language's steps run, found on the sandbox's PATH by the driver; `python`
# is the sandbox's own interpreter.
TOOLS: dict[LanguageName, str] = {"python": "python", "c": "gcc", "cpp": "g++", "javascript": "node", "rust": "rustc"}


def toolchains() -> ToolPaths:
    """Where this host has each toolchain (None: not installed)."""
    return {
        "python": sys.executable,
        "c": which("gcc"),
        "cpp": which("g++"),
        "javascript": which("node"),
        "rust": which("rustc"),
    }


def _c_family(tool: str, language: str, flags: list[str], source: str) -> list[str]:
    mode = "c++" if language == "cpp" else "c"
    return [tool, "-x", mode, *flags, "-fdiagnostics-color=never", "-c", "-o", f"{ROOT}/main.o", source]


COMMANDS: dict[LanguageName, Callable[[str, str, list[str], str], list[str]]] = {
    "c": _c_family,
    "cpp": _c_family,
    "python": lambda tool, _, flags, source: [tool, "-I", "-W", "always", "-c", PY_COMPILE, source],
    "javascript": lambda tool, _, flags, source: [tool, "--check", source],
    "rust": lambda tool, _, flags, source: [tool, *flags, "--emit=metadata", "-o", f"{ROOT}/main.rmeta", source],
}


def extract_program(response: str, language: LanguageName) -> str:
    """The last fenced block of the language, else the last untagged one, else the whole response."""
    tagged, untagged = [], []
    for tag, body in fenced_blocks(response):
        if not tag:
            untagged.append(body)
        elif ALIASES.get(tag) == language:
            tagged.append(body)
    return (tagged or untagged or [response])[-1]


def grade(step: StepResult, params: CompileParams) -> Outcome:
    details: dict[str, Any] = {"status": step.status}
    if step.status == "timeout":
        return Outcome(0.0, Verdict.TIMEOUT, "compilation ran past its time limit", details)
    if step.status == "output_limit":
        why = f"compilation wrote a file or output past {OUTPUT_FILE_MB} MiB"
        return Outcome(0.0, Verdict.INCORRECT, why, details)
    if step.status == "killed":
        return Outcome(0.0, Verdict.INCORRECT, "the compiler was killed (memory limit or a signal)", details)
    if step.status != "ok":
        lines = step.out.splitlines()
        first = next((line for line in lines if any(mark in line for mark in ERROR_MARKS)), step.out.strip())
        first = first or "compilation failed"
        return Outcome(0.0, Verdict.INCORRECT, reason(first), {**details, "output": step.out[-2000:]})
    is_warning = WARNING_LINE[params.language]
    warnings = sum(1 for line in step.out.splitlines() if is_warning(line))
    details["warnings"] = warnings
    if warnings:
        details["output"] = step.out[-2000:]
    if warnings and params.warnings_as_errors:
        return Outcome(0.0, Verdict.INCORRECT, f"{warnings} warning(s), and warnings_as_errors is set", details)
    score = 1.0 if params.reward == "binary" else max(0.0, 1.0 - params.warning_penalty * warnings)
    if score == 1.0:
        return Outcome(1.0, Verdict.CORRECT, "", details)
    verdict = Verdict.PARTIAL if score > 0 else Verdict.INCORRECT
    return Outcome(score, verdict, f"compiles with {warnings} warning(s)", details)


class CompileVerifier(BuiltWithRunner):
    name = "compile"
    version = "1.0.0"
    description = (
        "Compiles the response's program (last fenced block of `params.language`, else the last untagged "
        "block, else the whole response) in the sandbox: python byte-compiles, c/cpp compile to an object "
        "file with gcc/g++, javascript is `node --check`, rust is `rustc --emit=metadata`. Nothing is run. "
        "Reward 1 if it compiles; with reward=warnings_penalty, less per warning; warnings_as_errors makes "
        "any warning a 0. Flags come from an allow-list. Ground truth: none (null)."
    )
    params_model = CompileParams
    ground_truth_model = None
    default_deadline_s = DEADLINE_S

    def availability(self) -> dict[str, Any]:
        return {"languages": {lang: path is not None for lang, path in toolchains().items()}}

    def verify(self, item: GradeInput, params: CompileParams, ground_truth: None) -> Outcome:
        if toolchains()[params.language] is None:
            return Outcome(0.0, Verdict.ERROR, f"the {params.language} toolchain is not installed", mask=True)
        program = extract_program(item.response, params.language)
        if not program.strip():
            return Outcome(0.0, Verdict.NO_ANSWER, "the response contains no program")
        if len(program) > MAX_PROGRAM_CHARS:
            return Outcome(0.0, Verdict.INCORRECT, f"the program is longer than {MAX_PROGRAM_CHARS} characters")
        source = f"{ROOT}/{SOURCE[params.language]}"
        argv = COMMANDS[params.language](TOOLS[params.language], params.language, params.flags, source)
        step = Step("compile", argv, ROOT, params.timeout_s, OUTPUT_FILE_MB, {source: program}, (ROOT,))
        run = ToolSandbox(self.runner, params.memory_mb).run([step])
        if run.stopped is not None:
            return run.stopped
        return grade(run.steps[-1], params)
