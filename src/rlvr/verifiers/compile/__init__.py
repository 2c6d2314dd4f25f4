"""The `compile` verifier (see `verifiers.compile.verifier`), and the seam that runs a
toolchain in the sandbox (`steps`), which the `proof` verifier shares."""

from rlvr.verifiers.compile.models import CompileParams
from rlvr.verifiers.compile.verifier import CompileVerifier

__all__ = ["CompileParams", "CompileVerifier"]
