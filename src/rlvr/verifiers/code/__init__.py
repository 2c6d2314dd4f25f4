"""The `code` verifier (see `verifiers.code.verifier`)."""

from rlvr.verifiers.code.models import CodeParams, GroundTruth
from rlvr.verifiers.code.verifier import CodeVerifier

__all__ = ["CodeParams", "CodeVerifier", "GroundTruth"]
