from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from rlvr.sandboxes.local.client import get_local_sandbox
from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.code import CodeParams, CodeVerifier, GroundTruth
from tests.services import require

_GT: TypeAdapter[Any] = TypeAdapter(GroundTruth)
_VERIFIER = CodeVerifier()


def grade(
    response: str, ground_truth: dict[str, Any], *, verifier: CodeVerifier = _VERIFIER, **params: Any
) -> Outcome:
    p = CodeParams(**params)
    prepared = verifier.prepare(p, _GT.validate_python(ground_truth))
    return verifier.verify(GradeInput("", response), p, prepared)


@pytest.fixture(scope="session")
def isolated() -> None:
    level = get_local_sandbox().isolation()["isolation"]
    if level not in ("namespaces", "full"):
        require(False, f"namespace isolation (here only {level!r}; run as root)")
