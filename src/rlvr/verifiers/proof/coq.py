"""Checking a Coq proof: five tool runs in the sandbox, in two jobs.

The ground truth's job, once per ground truth and worker (its compiled modules are
kept, see `verifier`), before anything of the response is looked at:
- `Preamble.v` (only with a preamble): the ground truth's imports and definitions,
  exported. The statement and the response both build on this one compiled module, so
  `Preamble.f` means the same constant on both sides.
- `Stmt.v`: the statement, elaborated alone (nothing of the response is loaded yet, so
  no notation, coercion or instance of the response can change what it says), admitted,
  and its type saved as `rlvr_goal`.
- `coqchk` re-checks both. Any of these failing is the ground truth's fault: masked.

Each item's job, given those modules (written again before each of its steps):
- `Response.v`: the imports, then the response (after the statement, if the response
  does not state it itself).
- `Check.v`: loads both without importing either, sets back the options a response's
  `Global Set` carried through `Require`, and states
  `Definition rlvr_check : R.Stmt.rlvr_goal := @R.Response.NAME.`: the response's
  constant must have the statement's type, up to conversion, as Coq sees it here;
  then `Print Assumptions rlvr_check` must list nothing but the standard library's
  primitives (`primitives`; no axiom, no `Admitted`, no fixpoint or inductive type let
  off its guard, positivity or universe check). Which printed names are those
  primitives is read from the same file: `Print Assumptions` of a definition that uses
  every one of them, printed in the same environment under the same options (a printed
  name always names one constant there).
- `coqchk -o -norec R.Response -norec R.Check`: Coq's independent checker loads the
  compiled modules and re-checks every constant of both in its own kernel (no tactics,
  no virtual machine: a `vm_compute` cast is re-checked by its own conversion), the
  standard library and the ground truth's modules trusted. An item is correct only if
  coqc, `Print Assumptions` and coqchk all agree.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from rlvr.verifiers.base import Outcome, Verdict
from rlvr.verifiers.compile.steps import Step, ToolRun, reason, which
from rlvr.verifiers.proof import primitives, vernacular
from rlvr.verifiers.proof.models import THEOREM_KEYWORDS, ProofGroundTruth, ProofParams

ROOT = "/tmp/proof"
LIBRARY = "R"
# The trusted files compile in well under a second; these bound a pathological ground truth.
PREAMBLE_TIMEOUT_S = 10.0
STATEMENT_TIMEOUT_S = 10.0
STATEMENT_RECHECK_TIMEOUT_S = 20.0
# Checking the response's constant against the statement: conversion the response may
# have made expensive, a timeout of the response's. coqchk's re-check of the response
# gets the response's own time limit (it re-runs conversions coqc ran in its VM).
CHECK_TIMEOUT_S = 10.0
# coqchk spends most of its time unmarshalling the libraries it loads; a larger minor
# heap than OCaml's default (256k words; coqc sets its own) takes a quarter of it off.
COQCHK_GC = "s=4M"
CLOSED = "Closed under the global context"
AXIOMS = "Axioms:"
# What a response may define its theorem with (besides the theorem keywords).
DEFINING = (*THEOREM_KEYWORDS, "Definition", "Fixpoint", "CoFixpoint", "Let", "Instance", "Program")
# Set back in Check.v after loading the response: options a response's `Global Set`
# carries through `Require`, that change how the check types or prints.
CHECK_OPTIONS = (
    "Set Guard Checking.",
    "Set Positivity Checking.",
    "Set Universe Checking.",
    "Unset Definitional UIP.",
    "Set Printing Depth 50.",
    "Set Printing Width 78.",
    "Unset Printing All.",
    "Set Printing Notations.",
    "Unset Printing Universes.",
    "Unset Fast Name Printing.",
    "Unset Short Module Printing.",
)
_LOCATION = re.compile(r'File "[^"]*", line (\d+), characters (\d+-\d+):')
# A title of `Print Assumptions`' sections ("Axioms:", "Theory:", ...): a line of its
# own; an entry's first line starts with a name, which has no ':' in it.
_TITLE = re.compile(r"^[A-Z][A-Za-z ]*:$")
GROUND_TRUTH_STEPS = ("preamble", "statement", "statement_recheck")


def coqc() -> str | None:
    return which("coqc")


def coqchk() -> str | None:
    return which("coqchk")


@dataclass(frozen=True, slots=True)
class CoqJob:
    """The trusted part of the files, made once per ground truth; `key` names the
    ground truth's compiled modules."""

    name: str
    preamble: str | None
    statement: str
    header: str
    statement_file: str
    # Whether the ground truth names the primitive arrays' library (see `check_file`).
    arrays: bool
    # Whether it loads the real numbers, and so takes the axioms they rest on.
    reals: bool
    key: str


def _require(modules: list[str] | tuple[str, ...], verb: str) -> str:
    return "".join(f"Require {verb} {m}.\n" for m in modules)


def prepare(gt: ProofGroundTruth) -> CoqJob:
    preamble = None
    if gt.preamble.strip():
        preamble = _require(gt.imports, "Export") + gt.preamble + "\n"
        header = f"Require Import {LIBRARY}.Preamble.\n"
    else:
        header = _require(gt.imports, "Import")
    statement_file = (
        f"{header}{gt.statement}\nAdmitted.\nDefinition rlvr_goal := ltac:(let t := type of @{gt.name} in exact t).\n"
    )
    key = hashlib.sha256(f"{preamble}\0{statement_file}".encode()).hexdigest()
    arrays = primitives.ARRAY_MARK in f"{gt.imports} {gt.preamble} {gt.statement}"
    reals = primitives.loads_reals(gt.imports, vernacular.words(gt.preamble))
    return CoqJob(gt.name, preamble, gt.statement, header, statement_file, arrays, reals, key)


def check_file(name: str, arrays: bool, reals: bool) -> str:
    """Check.v. The primitive arrays' library is loaded (for the reference list) only
    where the ground truth or the response names it, the one way to load it: it costs
    a quarter of a second, the others a few milliseconds. With `reals`, the axioms the
    standard library's reals rest on join the reference list."""
    libraries: tuple[str, ...] = primitives.LIBRARIES if arrays else primitives.LIBRARIES[:-1]
    names = [p for p in primitives.STANDARD if arrays or not p.startswith(primitives.ARRAY)]
    if reals:
        libraries += primitives.REALS_LIBRARIES
        names += primitives.REALS_AXIOMS
    used = ", ".join(f"@{p}" for p in names)
    return (
        f"Require {LIBRARY}.Stmt.\nRequire {LIBRARY}.Response.\nRequire {' '.join(libraries)}.\n"
        + "\n".join(CHECK_OPTIONS)
        + f"\nDefinition rlvr_check : {LIBRARY}.Stmt.rlvr_goal := @{LIBRARY}.Response.{name}.\n"
        f"Definition rlvr_primitives := ({used}, tt).\n"
        "Print Assumptions rlvr_check.\nPrint Assumptions rlvr_primitives.\n"
    )


def refusal(script: str, allow_recursion: bool) -> Outcome | None:
    """An incorrect outcome for a script that uses a forbidden command (or recursion of
    its own, unless allowed), or cannot be read as Coq text at all; None otherwise."""
    found = vernacular.forbidden(script, () if allow_recursion else vernacular.RECURSION)
    if found:
        # Recursion refused by the request's settings is how honest proofs are often
        # written, not an attempt on the checker: only the always-forbidden signal.
        tried = ("forbidden_command",) if vernacular.forbidden(script) else ()
        why = f"the proof uses {found!r}, which is not allowed"
        return Outcome(0.0, Verdict.INCORRECT, why, {"forbidden": found}, signals=tried)
    if vernacular.unclosed(script):
        return Outcome(0.0, Verdict.INCORRECT, "the proof has an unterminated comment or string")
    return None


def response_file(job: CoqJob, script: str) -> tuple[str, int]:
    """Response.v, and how many lines precede the response's own text."""
    prefix = job.header
    if not vernacular.defines(vernacular.strip(script), job.name, DEFINING):
        prefix += job.statement + "\n"
    return prefix + script + "\n", prefix.count("\n")


def _coqc(name: str, module: str, text: str, timeout_s: float, clear: bool) -> Step:
    path = f"{ROOT}/{module}.v"
    # No native compiler here (no native runtime): `native_compute` falls back to the VM,
    # which coqchk re-checks, instead of failing a correct proof.
    argv = ["coqc", "-q", "-native-compiler", "no", "-Q", ROOT, LIBRARY, path]
    return Step(name, argv, ROOT, timeout_s, files={path: text}, clear=(ROOT,) if clear else ())


def _coqchk(name: str, modules: list[str], timeout_s: float) -> Step:
    argv = ["env", f"OCAMLRUNPARAM={COQCHK_GC}", "coqchk", "-silent", "-o", "-Q", ROOT, LIBRARY]
    for module in modules:
        argv += ["-norec", f"{LIBRARY}.{module}"]
    return Step(name, argv, ROOT, timeout_s)


def trusted_modules(job: CoqJob) -> list[str]:
    return ["Preamble", "Stmt"] if job.preamble is not None else ["Stmt"]


def trusted_files(job: CoqJob) -> tuple[str, ...]:
    """The compiled modules the ground truth's job hands to its items' jobs."""
    return tuple(f"{ROOT}/{module}.vo" for module in trusted_modules(job))


def ground_truth_steps(job: CoqJob) -> list[Step]:
    """Compile the ground truth's modules, from an empty folder, and re-check them."""
    plan = [_coqc("statement", "Stmt", job.statement_file, STATEMENT_TIMEOUT_S, clear=job.preamble is None)]
    if job.preamble is not None:
        plan.insert(0, _coqc("preamble", "Preamble", job.preamble, PREAMBLE_TIMEOUT_S, clear=True))
    return [*plan, _coqchk("statement_recheck", trusted_modules(job), STATEMENT_RECHECK_TIMEOUT_S)]


def response_steps(job: CoqJob, script: str, params: ProofParams, first: bool) -> tuple[list[Step], int]:
    """The response's runs, and its line offset in Response.v. `first`: they start the
    job (from an empty folder), the ground truth's modules handed in."""
    response, offset = response_file(job, script)
    check = check_file(job.name, job.arrays or primitives.ARRAY_MARK in script, job.reals)
    plan = [
        _coqc("response", "Response", response, params.timeout_s, clear=first),
        _coqc("check", "Check", check, CHECK_TIMEOUT_S, clear=False),
        _coqchk("kernel_recheck", ["Response", "Check"], params.timeout_s),
    ]
    return plan, offset


def steps(job: CoqJob, script: str, params: ProofParams) -> tuple[list[Step], int]:
    """Every run in one job, the ground truth's first: for a ground truth whose
    modules were not kept, and for tests."""
    plan, offset = response_steps(job, script, params, first=False)
    return ground_truth_steps(job) + plan, offset


def first_error(output: str, line_offset: int = 0) -> str:
    """coqc's first error, its line counted in the response's own text."""
    at = output.find("Error:")
    if at < 0:
        return output.strip()[-500:] or "coqc failed without a message"
    message = output[at:].strip()
    location = None
    for match in _LOCATION.finditer(output[:at]):
        location = match
    if location is not None:
        line = int(location.group(1)) - line_offset
        message = f"line {line}, characters {location.group(2)}: {message}"
    return message[:1000]


def ground_truth_failure(run: ToolRun) -> Outcome | None:
    """The masked outcome of a job whose ground-truth steps stopped it; None if they passed."""
    if run.stopped is not None:
        return run.stopped
    last = run.steps[-1] if run.steps else None
    if last is None or last.status == "ok" or last.name not in GROUND_TRUTH_STEPS:
        return None
    what = "statement's kernel re-check (coqchk)" if last.name == "statement_recheck" else last.name
    why = f"the ground truth's {what} does not check ({last.status}): {first_error(last.out)}"
    return Outcome(0.0, Verdict.ERROR, reason(why), {"steps": {s.name: s.status for s in run.steps}}, mask=True)


def grade(run: ToolRun, line_offset: int) -> Outcome:
    failed = ground_truth_failure(run)
    if failed is not None:
        return failed
    last = run.steps[-1]
    details: dict[str, object] = {"steps": {s.name: s.status for s in run.steps}}
    if last.status == "timeout":
        return Outcome(0.0, Verdict.TIMEOUT, f"a Coq tool ran past the time limit ({last.name} step)", details)
    if last.status != "ok":
        return _failed(last.name, last.status, last.out, line_offset, details)
    check = run.step("check")
    if last.name != "kernel_recheck" or check is None:
        return Outcome(0.0, Verdict.INCORRECT, "the checker stopped early", details)
    return _assumptions(check.out, {**details, "kernel_recheck": "ok"})


def _failed(step: str, status: str, output: str, line_offset: int, details: dict[str, object]) -> Outcome:
    if status != "error":
        limit = "output or file size" if status == "output_limit" else "memory or a signal"
        return Outcome(0.0, Verdict.INCORRECT, f"a Coq tool was stopped ({limit}) in the {step} step", details)
    if step == "response":
        return Outcome(0.0, Verdict.INCORRECT, reason(first_error(output, line_offset)), details)
    if step == "kernel_recheck":
        why = f"the kernel re-check (coqchk) rejected the compiled proof: {first_error(output)}"
        details = {**details, "kernel_recheck": "failed"}
        return Outcome(0.0, Verdict.INCORRECT, reason(why), details, signals=("kernel_recheck_failed",))
    why = f"the response does not prove the statement as stated: {first_error(output)}"
    return Outcome(0.0, Verdict.INCORRECT, reason(why), details)


def _assumptions(output: str, details: dict[str, object]) -> Outcome:
    """Check.v's verdict from its last two outputs: `Print Assumptions` of the proof,
    then of the primitives (always `Axioms:` and their entries)."""
    lines = output.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line == AXIOMS]
    if not starts:
        return Outcome(0.0, Verdict.INCORRECT, "the check printed no list of assumptions", details)
    allowed = set(_entries(lines[starts[-1] + 1 :]))
    if starts[-1] > 0 and lines[starts[-1] - 1] == CLOSED:
        return Outcome(1.0, Verdict.CORRECT, "", details)
    listed = lines[starts[-2] + 1 : starts[-1]] if len(starts) > 1 else []
    entries = _entries(listed)
    extra = [e for e in entries if e not in allowed or "..." in e]
    if len(starts) > 1 and entries and not extra and not any(_TITLE.match(line) for line in listed):
        return Outcome(1.0, Verdict.CORRECT, "", {**details, "primitives": len(entries)})
    shown = "\n".join(extra) if len(starts) > 1 and entries else "\n".join(listed) or "(unreadable)"
    why = "the proof is not closed under the global context: Axioms: " + " ".join(shown.split())
    details = {**details, "assumptions": shown[:1000]}
    return Outcome(0.0, Verdict.INCORRECT, reason(why), details, signals=("axiom",))


def _entries(lines: list[str]) -> list[str]:
    """`Print Assumptions`' entries: a line that starts at the margin, with the
    indented lines that continue it."""
    entries: list[str] = []
    for line in lines:
        if line[:1].isspace() and entries:
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return entries
