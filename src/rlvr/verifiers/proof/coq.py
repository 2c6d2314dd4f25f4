"""Checking a Coq proof: four files, each compiled by `coqc` in the sandbox.

- `Preamble.v` (only with a preamble): the ground truth's imports and definitions,
  exported. The statement and the response both build on this one compiled module, so
  `Preamble.f` means the same constant on both sides.
- `Stmt.v`: the statement, elaborated alone (nothing of the response is loaded yet, so
  no notation, coercion or instance of the response can change what it says), admitted,
  and its type saved as `rlvr_goal`. If this fails the ground truth is at fault: masked.
- `Response.v`: the imports, then the response (after the statement, if the response
  does not state it itself).
- `Check.v`: loads both without importing either and states
  `Definition rlvr_check : R.Stmt.rlvr_goal := @R.Response.NAME.`: the response's
  constant must have the statement's type, up to conversion, as Coq sees it here;
  then `Print Assumptions rlvr_check` must say it is closed under the global context
  (no axiom, no `Admitted`, no fixpoint or inductive type let off its guard,
  positivity or universe check).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr.verifiers.base import Outcome, Verdict
from rlvr.verifiers.compile.steps import Step, ToolRun, reason, which
from rlvr.verifiers.proof import vernacular
from rlvr.verifiers.proof.models import THEOREM_KEYWORDS, ProofGroundTruth, ProofParams

ROOT = "/tmp/proof"
LIBRARY = "R"
# The trusted files compile in well under a second; these bound a pathological ground truth.
PREAMBLE_TIMEOUT_S = 10.0
STATEMENT_TIMEOUT_S = 10.0
# Checking the response's constant against the statement: conversion the response may
# have made expensive, a timeout of the response's.
CHECK_TIMEOUT_S = 10.0
CLOSED = "Closed under the global context"
# What a response may define its theorem with (besides the theorem keywords).
DEFINING = (*THEOREM_KEYWORDS, "Definition", "Fixpoint", "CoFixpoint", "Let", "Instance", "Program")
_LOCATION = re.compile(r'File "[^"]*", line (\d+), characters (\d+-\d+):')


def coqc() -> str | None:
    return which("coqc")


@dataclass(frozen=True, slots=True)
class CoqJob:
    """The trusted part of the four files, made once per ground truth."""

    name: str
    preamble: str | None
    statement: str
    header: str
    statement_file: str
    check_file: str


def _require(modules: list[str], verb: str) -> str:
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
    check_file = (
        f"Require {LIBRARY}.Stmt.\nRequire {LIBRARY}.Response.\n"
        f"Definition rlvr_check : {LIBRARY}.Stmt.rlvr_goal := @{LIBRARY}.Response.{gt.name}.\n"
        "Print Assumptions rlvr_check.\n"
    )
    return CoqJob(gt.name, preamble, gt.statement, header, statement_file, check_file)


def refusal(script: str) -> Outcome | None:
    """An incorrect outcome for a script that uses a forbidden command, or cannot be
    read as Coq text at all; None otherwise."""
    found = vernacular.forbidden(script)
    if found:
        return Outcome(0.0, Verdict.INCORRECT, f"the proof uses {found!r}, which is not allowed", {"forbidden": found})
    if vernacular.unclosed(script):
        return Outcome(0.0, Verdict.INCORRECT, "the proof has an unterminated comment or string")
    return None


def response_file(job: CoqJob, script: str) -> tuple[str, int]:
    """Response.v, and how many lines precede the response's own text."""
    prefix = job.header
    if not vernacular.defines(vernacular.strip(script), job.name, DEFINING):
        prefix += job.statement + "\n"
    return prefix + script + "\n", prefix.count("\n")


def steps(job: CoqJob, script: str, params: ProofParams) -> tuple[list[Step], int]:
    """The coqc runs, in order, and the line offset of the response in Response.v.
    The first run starts from an empty folder; coqc is found on the sandbox's PATH."""
    response, offset = response_file(job, script)
    files = [("statement", "Stmt", job.statement_file, STATEMENT_TIMEOUT_S)]
    if job.preamble is not None:
        files.insert(0, ("preamble", "Preamble", job.preamble, PREAMBLE_TIMEOUT_S))
    files += [("response", "Response", response, params.timeout_s), ("check", "Check", job.check_file, CHECK_TIMEOUT_S)]
    plan = []
    for index, (name, module, text, timeout_s) in enumerate(files):
        path = f"{ROOT}/{module}.v"
        argv = ["coqc", "-q", "-Q", ROOT, LIBRARY, path]
        plan.append(Step(name, argv, ROOT, timeout_s, files={path: text}, clear=() if index else (ROOT,)))
    return plan, offset


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


def grade(run: ToolRun, line_offset: int) -> Outcome:
    if run.stopped is not None:
        return run.stopped
    last = run.steps[-1]
    details: dict[str, object] = {"steps": {s.name: s.status for s in run.steps}}
    if last.name in ("preamble", "statement"):
        # The ground truth did not compile, before the response was even loaded.
        why = f"the ground truth's {last.name} does not check ({last.status}): {first_error(last.out)}"
        return Outcome(0.0, Verdict.ERROR, reason(why), details, mask=True)
    if last.status == "timeout":
        return Outcome(0.0, Verdict.TIMEOUT, f"coqc ran past the time limit ({last.name} step)", details)
    if last.status != "ok":
        return _failed(last.name, last.status, last.out, line_offset, details)
    if last.name != "check":
        return Outcome(0.0, Verdict.INCORRECT, "the checker stopped early", details)
    return _assumptions(last.out, details)


def _failed(step: str, status: str, output: str, line_offset: int, details: dict[str, object]) -> Outcome:
    if status != "error":
        limit = "output or file size" if status == "output_limit" else "memory or a signal"
        return Outcome(0.0, Verdict.INCORRECT, f"coqc was stopped ({limit}) in the {step} step", details)
    if step == "response":
        return Outcome(0.0, Verdict.INCORRECT, reason(first_error(output, line_offset)), details)
    why = f"the response does not prove the statement as stated: {first_error(output)}"
    return Outcome(0.0, Verdict.INCORRECT, reason(why), details)


def _assumptions(output: str, details: dict[str, object]) -> Outcome:
    lines = [line.strip() for line in output.strip().splitlines()]
    if lines and lines[-1] == CLOSED and "Axioms:" not in lines:
        return Outcome(1.0, Verdict.CORRECT, "", details)
    listed = output[output.find("Axioms:") :] if "Axioms:" in output else output
    why = "the proof is not closed under the global context: " + " ".join(listed.split())
    return Outcome(0.0, Verdict.INCORRECT, reason(why), {**details, "assumptions": listed.strip()[:1000]})
