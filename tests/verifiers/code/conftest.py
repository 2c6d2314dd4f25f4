from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import TypeAdapter

from rlvr.sandboxes.config import SandboxConfig
from rlvr.sandboxes.local.sandbox import get_local_sandbox
from rlvr.verifiers.base import BatchEntry, GradeInput, Outcome
from rlvr.verifiers.code import CodeParams, CodeVerifier, GroundTruth
from rlvr.verifiers.programs import ProgramRunner
from tests.sandboxes.docker.images import sandbox_config
from tests.services import require

_GT: TypeAdapter[Any] = TypeAdapter(GroundTruth)
_VERIFIER = CodeVerifier()
# The verifier `grade` uses by default: the local backend's, or the one `code_backend`
# set up for the test that runs (tests that use it run once per sandbox backend).
_DEFAULT: dict[str, CodeVerifier] = {"verifier": _VERIFIER}


def grade(
    response: str,
    ground_truth: dict[str, Any],
    *,
    verifier: CodeVerifier | None = None,
    prompt: str = "",
    **params: Any,
) -> Outcome:
    verifier = verifier or _DEFAULT["verifier"]
    p = CodeParams(**params)
    prepared = verifier.prepare(p, _GT.validate_python(ground_truth))
    return verifier.verify(GradeInput(prompt, response), p, prepared)


@pytest.fixture(scope="session")
def isolated() -> None:
    level = get_local_sandbox().isolation()["isolation"]
    if level not in ("namespaces", "full"):
        require(False, f"namespace isolation (here only {level!r}; run as root)")


@pytest.fixture(scope="session", params=["local", "docker"])
def code_backend(request: pytest.FixtureRequest) -> CodeVerifier:
    """The code verifier on each sandbox backend: the same test bodies run on both."""
    if request.param == "local":
        request.getfixturevalue("isolated")
        return _VERIFIER
    return CodeVerifier(ProgramRunner(SandboxConfig(backend="docker", docker=sandbox_config())))


@pytest.fixture(autouse=True)
def _grade_on_backend(request: pytest.FixtureRequest) -> Iterator[None]:
    uses = "code_backend" in request.fixturenames
    _DEFAULT["verifier"] = request.getfixturevalue("code_backend") if uses else _VERIFIER
    yield
    _DEFAULT["verifier"] = _VERIFIER


def grade_many(
    entries: list[tuple[str, dict[str, Any]]],
    *,
    verifier: CodeVerifier | None = None,
    deadline_s: float = 30.0,
    prompts: list[str] | None = None,
    **params: Any,
) -> tuple[list[Outcome | None], list[Outcome]]:
    """(response, ground truth) pairs verified as one batch, with the items' `prompts`
    if given: what `verify_many` said of each, and each item's final outcome, as a
    worker has it (an item the batch could not judge verified alone)."""
    verifier = verifier or _DEFAULT["verifier"]
    p = CodeParams(**params)
    prompts = prompts or [""] * len(entries)
    batch = [
        BatchEntry(GradeInput(prompt, response), p, verifier.prepare(p, _GT.validate_python(gt)), deadline_s)
        for (response, gt), prompt in zip(entries, prompts, strict=True)
    ]
    said = verifier.verify_many(batch)
    final = [
        out if out is not None else verifier.verify(e.item, p, e.ground_truth)
        for out, e in zip(said, batch, strict=True)
    ]
    return said, final
