"""The `compile` verifier: does the response's program compile (and without warnings)?

The compiler runs in the sandbox (compilers are attack surface: `#include </dev/zero>`,
template bombs, gigabyte static arrays), under the job's memory cap, a time limit and a
cap on every file it writes; each of those ends the item as `incorrect` or `timeout`,
never masked. Nothing compiled is run.

In-source diagnostic control. Where warnings count (`warnings_as_errors`,
`reward=warnings_penalty`, or `-Werror` among the flags) a program must not switch
them off itself; the compiler decides what it switched off, not a pattern on its text:

- C/C++: after a clean compile the source is preprocessed again (`-E`, with the flags
  that change what the preprocessor reads, and `-Wpedantic`): line splices, comments,
  digraphs, trigraphs, macros and `_Pragma` are the compiler's to resolve, and what
  remains are `#pragma` lines as GCC reads them. Each `#pragma GCC|clang diagnostic`
  other than push, pop and error (ignored, warning: it turns an error of -Werror back
  into a warning, ignored_attributes ...), each MSVC `#pragma warning`, each line marker
  that puts the program's own text in a system header (`#pragma GCC system_header` in
  a file that includes itself, a GNU `# 1 "x.h" 3` marker, which -Wpedantic names) is
  one warning more; under `-Werror` any of them makes it a 0. A raw string holding
  such a line counts too: the price of reading what the compiler reads.
- Rust: every warn-by-default lint is `--force-warn`ed, so `allow` attributes (inner,
  outer, `cfg_attr`, from macros) silence nothing and the warnings are counted.
- Python (`compile()` warnings) and JavaScript (`node --check`, which has no lints)
  have no in-source control of what is checked here; comments like `eslint-disable`
  or `@ts-ignore` change nothing.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from rlvr.verifiers.base import GradeInput, Outcome, Signal, Verdict
from rlvr.verifiers.code.extract import fenced_blocks
from rlvr.verifiers.compile.models import ALIASES, OUTPUT_FILE_MB, CompileParams, LanguageName
from rlvr.verifiers.compile.steps import ENV, Step, StepResult, ToolSandbox, reason, which
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
# The C/C++ suppression check: the preprocessed file, the flags kept from the params
# (they change what the preprocessor reads: trigraphs under -std=c99, __cplusplus,
# NDEBUG), and GCC's -Wpedantic mark on a GNU line marker written in the source.
PREPROCESSED = f"{ROOT}/main.i"
PREPROCESS_FLAGS = ("-std=", "-DNDEBUG")
LINE_MARKER_MARK = "style of line directive is a GCC extension"
ToolPaths = dict[LanguageName, str | None]
SANDBOX_PATH = ENV["PATH"]


# What each language's steps run, found on the sandbox's PATH by the driver; `python`
# is the sandbox's own interpreter.
TOOLS: dict[LanguageName, str] = {"python": "python", "c": "gcc", "cpp": "g++", "javascript": "node", "rust": "rustc"}
PACKAGES: dict[LanguageName, str] = {
    "python": "python3",
    "c": "gcc",
    "cpp": "g++",
    "javascript": "nodejs",
    "rust": "rustc",
}


def toolchains() -> ToolPaths:
    """Where this host has each toolchain (None: not installed)."""
    return {
        "python": sys.executable,
        "c": which("gcc"),
        "cpp": which("g++"),
        "javascript": which("node"),
        "rust": which("rustc"),
    }


def missing_toolchain(language: LanguageName) -> str:
    """Why a language's items are masked here: its tool is not where jobs look for it (a
    rustup toolchain under a home directory is invisible to jobs, which see /usr only)."""
    return (
        f"the {language} toolchain ({TOOLS[language]}) is not installed where the sandbox looks for it "
        f"({SANDBOX_PATH}); install the distribution's package (Debian: {PACKAGES[language]})"
    )


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


def warnings_matter(params: CompileParams) -> bool:
    return params.warnings_as_errors or params.reward == "warnings_penalty" or "-Werror" in params.flags


def plan(program: str, params: CompileParams) -> list[Step]:
    """The compile step; where warnings count, rustc's lints forced to warn, and for
    C/C++ the preprocessing that finds in-source diagnostic control."""
    language = params.language
    source = f"{ROOT}/{SOURCE[language]}"
    argv = COMMANDS[language](TOOLS[language], language, params.flags, source)
    strict = warnings_matter(params)
    files = {source: program}
    steps = [
        Step("compile", argv, ROOT, params.timeout_s, OUTPUT_FILE_MB, files, (ROOT,), strict and language == "rust")
    ]
    if strict and language in ("c", "cpp"):
        kept = [flag for flag in params.flags if flag.startswith(PREPROCESS_FLAGS)]
        mode = "c++" if language == "cpp" else "c"
        argv = [TOOLS[language], "-x", mode, *kept, "-Wpedantic", "-E", "-o", PREPROCESSED, source]
        scan = {"file": PREPROCESSED, "output_marks": [LINE_MARKER_MARK]}
        steps.append(Step("preprocess", argv, ROOT, params.timeout_s, OUTPUT_FILE_MB, scan=scan))
    return steps


def _failed(step: StepResult, details: dict[str, Any], what: str) -> Outcome:
    if step.status == "timeout":
        return Outcome(0.0, Verdict.TIMEOUT, f"{what} ran past its time limit", details)
    if step.status == "output_limit":
        return Outcome(0.0, Verdict.INCORRECT, f"{what} wrote a file or output past {OUTPUT_FILE_MB} MiB", details)
    if step.status == "killed":
        return Outcome(0.0, Verdict.INCORRECT, f"{what}: the compiler was killed (memory limit or a signal)", details)
    lines = step.out.splitlines()
    first = next((line for line in lines if any(mark in line for mark in ERROR_MARKS)), step.out.strip())
    first = first or f"{what} failed"
    return Outcome(0.0, Verdict.INCORRECT, reason(first), {**details, "output": step.out[-2000:]})


# Diagnostic control as the source writes it, for the runs the compiler's own reading
# never got to (a compile that failed first under -Werror).
_DIAGNOSTIC_CONTROL = re.compile(
    r"\b_?[Pp]ragma\s*\(?\s*\"?\s*(?:GCC|clang)\s+(?:diagnostic\s+(?!push\b|pop\b|error\b)\w|system_header\b)"
    r"|\bpragma\s+warning\b"
)


def _names_diagnostic_control(program: str, params: CompileParams) -> bool:
    """Where warnings count, whether a C/C++ source spells a diagnostic-control pragma."""
    counts = params.warnings_as_errors or params.reward == "warnings_penalty" or "-Werror" in params.flags
    return counts and params.language in ("c", "cpp") and bool(_DIAGNOSTIC_CONTROL.search(program))


def grade(steps: list[StepResult], params: CompileParams) -> Outcome:
    """The compile step's outcome; a second step is the C/C++ suppression check. Where
    the source switched diagnostics off, whatever it earned, `diagnostic_control`."""
    outcome = _graded(steps, params)
    if outcome.details.get("suppressions"):
        outcome.signals = ("diagnostic_control",)
    return outcome


def _graded(steps: list[StepResult], params: CompileParams) -> Outcome:
    step = steps[0]
    details: dict[str, Any] = {"status": step.status}
    if step.status != "ok":
        return _failed(step, details, "compilation")
    is_warning = WARNING_LINE[params.language]
    warnings = sum(1 for line in step.out.splitlines() if is_warning(line))
    details["warnings"] = warnings
    if warnings:
        details["output"] = step.out[-2000:]
    suppressed = _suppressions(steps[1], details, params) if len(steps) > 1 else 0
    if isinstance(suppressed, Outcome):
        return suppressed
    warnings += suppressed
    details["warnings"] = warnings
    counted = f"{warnings} warning(s)" + (f", {suppressed} of them in-source suppressions" if suppressed else "")
    if warnings and params.warnings_as_errors:
        return Outcome(0.0, Verdict.INCORRECT, f"{counted}, and warnings_as_errors is set", details)
    score = 1.0 if params.reward == "binary" else max(0.0, 1.0 - params.warning_penalty * warnings)
    if score == 1.0:
        return Outcome(1.0, Verdict.CORRECT, "", details)
    verdict = Verdict.PARTIAL if score > 0 else Verdict.INCORRECT
    return Outcome(score, verdict, f"compiles with {counted}", details)


def _suppressions(check: StepResult, details: dict[str, Any], params: CompileParams) -> Outcome | int:
    """How many places of the source switch diagnostics off (listed in `details`), or
    the outcome that ends grading: the check failed on this input, or -Werror is set."""
    if check.status != "ok":
        return _failed(check, details, "preprocessing (the check for in-source diagnostic control)")
    if not check.found_count:
        return 0
    details["suppressions"] = check.found_count
    details["suppression_lines"] = list(check.found)
    if "-Werror" in params.flags:
        why = f"the source switches diagnostics off ({check.found_count} place(s)), and -Werror is set"
        return Outcome(0.0, Verdict.INCORRECT, why, details)
    return check.found_count


SIGNALS = {
    "diagnostic_control": Signal(
        "Where warnings count, the C/C++ source switches diagnostics off itself (a `#pragma GCC diagnostic "
        "ignored`, `_Pragma`, MSVC `#pragma warning`, its own text made a system header).",
        '#pragma GCC diagnostic ignored "-Wunused-variable"\nint main() { int x; }',
    ),
}


class CompileVerifier(BuiltWithRunner):
    name = "compile"
    version = "1.2.0"
    description = (
        "Compiles the response's program (last fenced block of `params.language`, else the last untagged "
        "block, else the whole response) in the sandbox: python byte-compiles, c/cpp compile to an object "
        "file with gcc/g++, javascript is `node --check`, rust is `rustc --emit=metadata`. Nothing is run. "
        "Reward 1 if it compiles; with reward=warnings_penalty, less per warning; warnings_as_errors makes "
        "any warning a 0. Where warnings count (warnings_as_errors, warnings_penalty or -Werror), the source "
        "may not switch them off: in C/C++ each diagnostic-control pragma GCC reads after preprocessing "
        "(`#pragma GCC|clang diagnostic` but push/pop/error, `_Pragma`, MSVC `#pragma warning`, the program's "
        "own text made a system header) counts as a warning, and under -Werror makes it a 0; rust runs with "
        "every warn-by-default lint `--force-warn`ed, so `allow` attributes silence nothing (details.suppressions "
        "counts the C/C++ ones). Flags come from an allow-list. Ground truth: none (null)."
    )
    params_model = CompileParams
    ground_truth_model = None
    default_deadline_s = DEADLINE_S
    signals = SIGNALS

    def availability(self) -> dict[str, Any]:
        return {"languages": {lang: path is not None for lang, path in toolchains().items()}}

    def verify(self, item: GradeInput, params: CompileParams, ground_truth: None) -> Outcome:
        if toolchains()[params.language] is None:
            return Outcome(0.0, Verdict.ERROR, missing_toolchain(params.language), mask=True)
        program = extract_program(item.response, params.language)
        if not program.strip():
            return Outcome(0.0, Verdict.NO_ANSWER, "the response contains no program")
        if len(program) > MAX_PROGRAM_CHARS:
            return Outcome(0.0, Verdict.INCORRECT, f"the program is longer than {MAX_PROGRAM_CHARS} characters")
        run = ToolSandbox(self.runner, params.memory_mb).run(plan(program, params))
        if run.stopped is None and run.steps[0].status == "ok":
            return grade(run.steps, params)
        outcome = run.stopped or grade(run.steps, params)
        if not outcome.mask and _names_diagnostic_control(program, params):
            outcome.signals = ("diagnostic_control",)
        return outcome
