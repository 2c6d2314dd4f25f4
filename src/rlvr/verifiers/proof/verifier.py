"""The `proof` verifier: check a proof of the ground truth's theorem with the proof
assistant of `params.language`, in the sandbox. Coq is the one language so far; each
language is a module with `prepare`, `refusal`, `steps` and `grade` (see `coq`)."""

from __future__ import annotations

from typing import Any

from rlvr.verifiers.base import GradeInput, Outcome, Verdict
from rlvr.verifiers.code.extract import fenced_blocks
from rlvr.verifiers.compile.steps import ToolSandbox
from rlvr.verifiers.programs import BuiltWithRunner
from rlvr.verifiers.proof import coq
from rlvr.verifiers.proof.models import ProofGroundTruth, ProofParams

# Above the longest job: trusted steps, the response's timeout and the check.
DEADLINE_S = 60.0
FENCE_TAGS = {"coq": ("coq", "rocq", "gallina", "v")}
MAX_SCRIPT_CHARS = 256 * 1024


def extract_script(response: str, language: str) -> str:
    """The last fenced block tagged with the language, else the whole response."""
    tags = FENCE_TAGS[language]
    blocks = [body for tag, body in fenced_blocks(response) if tag in tags]
    return blocks[-1] if blocks else response


class ProofVerifier(BuiltWithRunner):
    name = "proof"
    version = "1.0.0"
    description = (
        "Checks a proof of the ground truth's theorem with a proof assistant (`coq`: coqc 8.16) in the "
        "sandbox. Reward 1 only if the response's script compiles, the constant it defines under the "
        "ground truth's name has the statement's type as elaborated in a separate file the response "
        "cannot influence, and `Print Assumptions` finds it closed (no axiom, Admitted, or disabled "
        "guard, positivity or universe check). The script is the last ```coq block, else the whole "
        "response; if it does not state the theorem itself, the statement is put before it."
    )
    params_model = ProofParams
    ground_truth_model = ProofGroundTruth
    default_deadline_s = DEADLINE_S

    def availability(self) -> dict[str, Any]:
        installed = coq.coqc() is not None
        return {
            "available": installed,
            "languages": {"coq": installed},
            "min_isolation": self.runner.config.min_isolation,
        }

    def prepare(self, params: ProofParams, gt: ProofGroundTruth) -> coq.CoqJob:
        return coq.prepare(gt)

    def verify(self, item: GradeInput, params: ProofParams, ground_truth: Any) -> Outcome:
        job = ground_truth if isinstance(ground_truth, coq.CoqJob) else self.prepare(params, ground_truth)
        if coq.coqc() is None:
            return Outcome(0.0, Verdict.ERROR, "the coq toolchain (coqc) is not installed", mask=True)
        script = extract_script(item.response, params.language)
        if not script.strip():
            return Outcome(0.0, Verdict.NO_ANSWER, "the response contains no proof")
        if len(script) > MAX_SCRIPT_CHARS:
            return Outcome(0.0, Verdict.INCORRECT, f"the proof is longer than {MAX_SCRIPT_CHARS} characters")
        refused = coq.refusal(script)
        if refused is not None:
            return refused
        plan, offset = coq.steps(job, script, params)
        run = ToolSandbox(self.runner, params.memory_mb).run(plan)
        return coq.grade(run, offset)
