"""The `code` verifier (see `verifiers.code.verifier`)."""

from verifiers.code.models import CodeParams, GroundTruth
from verifiers.code.verifier import CodeVerifier

__all__ = ["CodeParams", "CodeVerifier", "GroundTruth"]
