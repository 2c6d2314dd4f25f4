from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes.local.sandbox import get_local_sandbox
from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.compile import CompileParams, CompileVerifier
from rlvr.verifiers.compile.verifier import toolchains
from tests.services import require

VERIFIER = CompileVerifier()


def grade(response: str, **params: Any) -> Outcome:
    return VERIFIER.verify(GradeInput("", response), CompileParams(**params), None)


@pytest.fixture(scope="session")
def isolated() -> None:
    level = get_local_sandbox().isolation()["isolation"]
    require(level in ("namespaces", "full"), f"namespace isolation (here only {level!r}; run as root)")


@pytest.fixture(scope="session")
def toolchain() -> None:
    """Every compile language's toolchain: skip locally without them, fail in CI."""
    missing = [lang for lang, path in toolchains().items() if path is None]
    require(not missing, f"toolchains for {', '.join(missing)} (gcc, g++, nodejs, rustc from Debian)")
