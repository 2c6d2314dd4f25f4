from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes.local.sandbox import get_local_sandbox
from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.proof import ProofGroundTruth, ProofParams, ProofVerifier
from rlvr.verifiers.proof import coq as coq_module
from tests.services import require

VERIFIER = ProofVerifier()
ADD_COMM: dict[str, Any] = {
    "statement": "Theorem add_comm : forall n m : nat, n + m = m + n.",
    "name": "add_comm",
    "imports": ["Arith"],
}


def grade(response: str, ground_truth: dict[str, Any] | None = None, **params: Any) -> Outcome:
    p = ProofParams(**params)
    prepared = VERIFIER.prepare(p, ProofGroundTruth(**(ground_truth or ADD_COMM)))
    return VERIFIER.verify(GradeInput("", response), p, prepared)


@pytest.fixture(scope="session")
def coq() -> None:
    """coqc installed and the sandbox isolated: skip locally without them, fail in CI."""
    require(coq_module.coqc() is not None, "coqc (apt-get install coq)")
    level = get_local_sandbox().isolation()["isolation"]
    require(level in ("namespaces", "full"), f"namespace isolation (here only {level!r}; run as root)")
