"""The `proof` verifier (see `verifiers.proof.verifier`)."""

from rlvr.verifiers.proof.models import ProofGroundTruth, ProofParams
from rlvr.verifiers.proof.verifier import ProofVerifier

__all__ = ["ProofGroundTruth", "ProofParams", "ProofVerifier"]
