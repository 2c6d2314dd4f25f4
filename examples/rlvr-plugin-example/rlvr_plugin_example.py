"""An rlvr verifier plugin: the response, trimmed, equals one of the accepted answers."""

from pydantic import BaseModel, ConfigDict

from rlvr import GradeInput, Outcome, Verdict


class ExactMatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    case_sensitive: bool = False


class ExactMatch:
    name = "exact_match"
    version = "0.1.0"
    description = "Trimmed response equals the ground truth (a string or a list of accepted strings)."
    params_model = ExactMatchParams
    ground_truth_model = str | list[str]

    def verify(self, item: GradeInput, params: ExactMatchParams, ground_truth: str | list[str]) -> Outcome:
        accepted = [ground_truth] if isinstance(ground_truth, str) else ground_truth
        fold = (lambda s: s.strip()) if params.case_sensitive else (lambda s: s.strip().casefold())
        if fold(item.response) in {fold(a) for a in accepted}:
            return Outcome(1.0, Verdict.CORRECT, "exact match")
        return Outcome(0.0, Verdict.INCORRECT, "no accepted answer matches")
