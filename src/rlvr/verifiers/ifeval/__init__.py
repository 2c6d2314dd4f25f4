"""The `ifeval` verifier package; see `verifiers.ifeval.verifier` for the grading rules."""

from rlvr.verifiers.ifeval.models import IFEvalGroundTruth, IFEvalParams
from rlvr.verifiers.ifeval.verifier import IFEvalVerifier

__all__ = ["IFEvalGroundTruth", "IFEvalParams", "IFEvalVerifier"]
