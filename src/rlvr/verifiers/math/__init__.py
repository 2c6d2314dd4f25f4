"""The `math` verifier package; see `verifiers.math.verifier` for the grading rules."""

from rlvr.verifiers.math.verifier import MathParams, MathVerifier, PreparedGold

__all__ = ["MathParams", "MathVerifier", "PreparedGold"]
