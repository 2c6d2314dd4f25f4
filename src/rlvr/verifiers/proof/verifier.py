"""The `proof` verifier: check a proof of the ground truth's theorem with the proof
assistant of `params.language`, in the sandbox. Coq is the one language so far; each
language is a module with `prepare`, `refusal`, `steps` and `grade` (see `coq`)."""

from __future__ import annotations

import subprocess
import threading
from collections import OrderedDict
from functools import cache
from typing import Any

from rlvr.verifiers.base import GradeInput, Outcome, Signal, Verdict
from rlvr.verifiers.code.extract import fenced_blocks
from rlvr.verifiers.compile.steps import reason
from rlvr.verifiers.programs import BuiltWithRunner, ProgramRunner
from rlvr.verifiers.proof import coq
from rlvr.verifiers.proof.jobs import JobSandbox
from rlvr.verifiers.proof.models import ProofGroundTruth, ProofParams

SIGNALS = {
    "forbidden_command": Signal(
        "The proof uses a command that leaves a gap, turns a kernel check off or reaches outside the file "
        "(Admitted, admit, Axiom, Unset Guard, Load, Extraction...); recursion refused by `allow_recursion` "
        "does not count.",
        "Theorem t : 1 = 2. Proof. Admitted.",
    ),
    "axiom": Signal(
        "The proof compiled, but `Print Assumptions` finds it resting on an axiom or an unchecked definition.",
        "Require Import Classical. Theorem t : forall P, P \\/ ~P. Proof. exact classic. Qed.",
    ),
    "kernel_recheck_failed": Signal(
        "coqc accepted the proof and coqchk, Coq's independent kernel, rejected it: a term that fooled "
        "the first checker.",
        "A proof built through a soundness bug of coqc's (its VM or native conversion).",
    ),
}
# Above the longest job: trusted steps, the response's timeout and the check.
DEADLINE_S = 60.0
FENCE_TAGS = {"coq": ("coq", "rocq", "gallina", "v")}
MAX_SCRIPT_CHARS = 256 * 1024
# Ground truths whose compiled modules (or failure) a worker keeps: a group's items
# share them. Each is the .vo files of a statement (some 14 KiB with Arith) and its
# preamble; the oldest go first past either bound.
MAX_KEPT_GROUND_TRUTHS = 256
MAX_KEPT_BYTES = 64 * 1024 * 1024
VERSION_TIMEOUT_S = 10.0
# What a ground truth's job left: its compiled modules, a masked outcome, or None
# where they were too large to hand on (its items then compile them themselves).
Built = dict[str, bytes] | Outcome | None


def extract_script(response: str, language: str) -> str:
    """The last fenced block tagged with the language, else the whole response."""
    tags = FENCE_TAGS[language]
    blocks = [body for tag, body in fenced_blocks(response) if tag in tags]
    return blocks[-1] if blocks else response


class ProofVerifier(BuiltWithRunner):
    name = "proof"
    version = "1.2.0"
    description = (
        "Checks a proof of the ground truth's theorem with a proof assistant (`coq`: coqc 8.16) in the "
        "sandbox. Reward 1 only if the response's script compiles, the constant it defines under the "
        "ground truth's name has the statement's type as elaborated in a separate file the response "
        "cannot influence, `Print Assumptions` finds it closed (no axiom, Admitted, or disabled "
        "guard, positivity or universe check; the standard library's primitive integers, floats and "
        "arrays are allowed), and coqchk, Coq's independent checker, re-checks the compiled proof. "
        "The script is the last ```coq block, else the whole response; if it does not state the "
        "theorem itself, the statement is put before it."
    )
    params_model = ProofParams
    ground_truth_model = ProofGroundTruth
    default_deadline_s = DEADLINE_S
    signals = SIGNALS

    def __init__(self, runner: ProgramRunner | None = None) -> None:
        super().__init__(runner)
        self._built: OrderedDict[str, Built] = OrderedDict()
        self._lock = threading.Lock()

    def availability(self) -> dict[str, Any]:
        installed = coq.coqc() is not None and coq.coqchk() is not None
        return {
            "available": installed,
            "languages": {"coq": installed},
            "coq_version": coq_version(),
            "min_isolation": self.runner.config.min_isolation,
        }

    def prepare(self, params: ProofParams, gt: ProofGroundTruth) -> coq.CoqJob:
        return coq.prepare(gt)

    def verify(self, item: GradeInput, params: ProofParams, ground_truth: Any) -> Outcome:
        job = ground_truth if isinstance(ground_truth, coq.CoqJob) else self.prepare(params, ground_truth)
        if coq.coqc() is None or coq.coqchk() is None:
            return Outcome(0.0, Verdict.ERROR, "the coq toolchain (coqc, coqchk) is not installed", mask=True)
        # The ground truth first: a broken one masks its items whatever they say.
        built = self._ground_truth(job, params)
        if isinstance(built, Outcome):
            return built
        script = extract_script(item.response, params.language)
        if not script.strip():
            return Outcome(0.0, Verdict.NO_ANSWER, "the response contains no proof")
        if len(script) > MAX_SCRIPT_CHARS:
            return Outcome(0.0, Verdict.INCORRECT, f"the proof is longer than {MAX_SCRIPT_CHARS} characters")
        refused = coq.refusal(script, params.allow_recursion)
        if refused is not None:
            return refused
        if built is None:
            plan, offset = coq.steps(job, script, params)
        else:
            plan, offset = coq.response_steps(job, script, params, first=True)
        run = JobSandbox(self.runner, params.memory_mb).run(plan, built or {})
        return coq.grade(run.run, offset)

    def _ground_truth(self, job: coq.CoqJob, params: ProofParams) -> Built:
        """The ground truth's compiled modules, built in a job of their own the first
        time this worker meets it; a failing sandbox is not kept (it may recover)."""
        with self._lock:
            if job.key in self._built:
                self._built.move_to_end(job.key)
                return self._built[job.key]
        files = coq.trusted_files(job)
        done = JobSandbox(self.runner, params.memory_mb).run(coq.ground_truth_steps(job), {}, files)
        stopped = done.run.stopped
        if stopped is not None and stopped.mask:
            return stopped
        built: Built = None
        if stopped is not None:
            # Nothing of a response's ran: the ground truth's job is at fault.
            why = reason(f"the ground truth's job did not finish: {stopped.reason}")
            built = Outcome(0.0, Verdict.ERROR, why, stopped.details, mask=True)
        else:
            built = coq.ground_truth_failure(done.run)
        if built is None and all(path in done.fetched for path in files):
            built = {path: done.fetched[path] for path in files}
        with self._lock:
            self._built[job.key] = built
            while len(self._built) > MAX_KEPT_GROUND_TRUTHS or _kept_bytes(self._built) > MAX_KEPT_BYTES:
                self._built.popitem(last=False)
        return built


def _kept_bytes(kept: OrderedDict[str, Built]) -> int:
    return sum(sum(map(len, built.values())) for built in kept.values() if isinstance(built, dict))


@cache
def coq_version() -> str | None:
    """`coqc --version`'s first line, e.g. "The Coq Proof Assistant, version 8.16.1"."""
    tool = coq.coqc()
    if tool is None:
        return None
    try:
        done = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0] if done.returncode == 0 and lines else None
