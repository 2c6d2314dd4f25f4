"""The `ifeval` verifier: does the response follow IFEval's verifiable instructions?

Tülu 3's RLVR trained on these constraints. The ground truth lists instruction ids
with their kwargs (see `models`); each is checked by `checks`, with IFEval's
semantics. `params.mode`:

- `strict` (default): each instruction is checked on the response as it is.
- `loose`: IFEval's upper bound: an instruction also holds if it holds on the response
  without its first line, its last line, both, or its `*` characters.

A reasoning model's thinking is not graded: only the answer after it, as open-instruct
grades (see `thinking`); `params.grade_thinking` grades the whole response.

An empty (all-whitespace) response follows no instruction, as in IFEval. Neither does
one whose graded answer is longer than `MAX_RESPONSE_CHARS`, several times the longest
response IFEval asks for (1,200 words): every check is linear, but Punkt and Treebank
tokenisation cost about a second per 50,000 hostile characters, loose mode grades
eight variants, and what a policy sends must not decide how long grading takes. The
cap is on the answer, not on the thinking before it, which is only split off; the
whole response has its own, larger cap, `MAX_RAW_RESPONSE_CHARS`.

    >>> from rlvr import GradeInput
    >>> from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
    >>> gt = IFEvalGroundTruth.model_validate(
    ...     {"instruction_id_list": ["punctuation:no_comma", "startend:end_checker"],
    ...      "kwargs": [{}, {"end_phrase": "Is there anything else?"}]})
    >>> v = IFEvalVerifier()
    >>> v.verify(GradeInput("", "Sure. Is there anything else?"), IFEvalParams(), gt).score
    1.0
    >>> out = v.verify(GradeInput("", "Yes, sure."), IFEvalParams(reward="fraction"), gt)
    >>> out.score, out.details["instructions"][1]
    (0.0, {'id': 'startend:end_checker', 'pass': False})
"""

from __future__ import annotations

from rlvr.verifiers.base import GradeInput, Outcome, Verdict
from rlvr.verifiers.ifeval.checks import CHECKS
from rlvr.verifiers.ifeval.kwargs import InstructionKwargs
from rlvr.verifiers.ifeval.models import IFEvalGroundTruth, IFEvalParams
from rlvr.verifiers.ifeval.signals import SIGNALS, observe
from rlvr.verifiers.ifeval.thinking import answer_text

DEADLINE_S = 10.0
MAX_RESPONSE_CHARS = 50_000
# Long thinking is normal; splitting it off is linear and costs well under a second here.
MAX_RAW_RESPONSE_CHARS = 1_000_000


def loose_variants(response: str) -> list[str]:
    """IFEval's loose variants, in its order: as is, without `*`, and without the first
    line, the last line or both, each also without `*`."""
    lines = response.split("\n")
    trimmed = ["\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    variants = [response, response.replace("*", "")]
    variants += trimmed + [variant.replace("*", "") for variant in trimmed]
    return variants


def _holds(instruction_id: str, kwargs: InstructionKwargs, variants: list[str]) -> bool:
    check = CHECKS[instruction_id]
    return any(variant.strip() and check(variant, kwargs) for variant in variants)


def _outcome(results: list[tuple[str, bool]], params: IFEvalParams) -> Outcome:
    passed = sum(ok for _, ok in results)
    total = len(results)
    details = {
        "mode": params.mode,
        "passed": passed,
        "total": total,
        "instructions": [{"id": iid, "pass": ok} for iid, ok in results],
    }
    failed = [iid for iid, ok in results if not ok]
    reason = f"{passed}/{total} instructions followed" + (f"; not: {', '.join(failed)}" if failed else "")
    if passed == total:
        return Outcome(1.0, Verdict.CORRECT, reason, details)
    if params.reward == "fraction" and passed:
        return Outcome(passed / total, Verdict.PARTIAL, reason, details)
    return Outcome(0.0, Verdict.INCORRECT, reason, details)


def _none_followed(gt: IFEvalGroundTruth, params: IFEvalParams, verdict: Verdict, reason: str) -> Outcome:
    details = _outcome([(iid, False) for iid in gt.instruction_id_list], params).details
    return Outcome(0.0, verdict, reason, details)


class IFEvalVerifier:
    name = "ifeval"
    version = "1.2.0"
    description = (
        "IFEval's 25 verifiable instruction types (as in Tülu 3's RLVR): reward 1 if all hold, or the share "
        "that hold; strict or loose."
    )
    params_model = IFEvalParams
    ground_truth_model = IFEvalGroundTruth
    default_deadline_s = DEADLINE_S
    signals = SIGNALS

    def verify(self, item: GradeInput, params: IFEvalParams, ground_truth: IFEvalGroundTruth) -> Outcome:
        if not item.response.strip():
            return _none_followed(ground_truth, params, Verdict.NO_ANSWER, "empty response")
        if len(item.response) > MAX_RAW_RESPONSE_CHARS:
            reason = f"response longer than {MAX_RAW_RESPONSE_CHARS} characters"
            return _none_followed(ground_truth, params, Verdict.INCORRECT, reason)
        response = item.response if params.grade_thinking else answer_text(item.response)
        if not response.strip():
            return _none_followed(ground_truth, params, Verdict.NO_ANSWER, "no answer after the thinking")
        if len(response) > MAX_RESPONSE_CHARS:
            reason = f"graded text longer than {MAX_RESPONSE_CHARS} characters"
            return _none_followed(ground_truth, params, Verdict.INCORRECT, reason)
        variants = [response] if params.mode == "strict" else loose_variants(response)
        results = [(iid, _holds(iid, kwargs, variants)) for iid, kwargs in ground_truth.instructions]
        outcome = _outcome(results, params)
        outcome.signals = observe(response, ground_truth)
        return outcome
