"""Refusals: isolation below the minimum, a missing toolchain, a dead sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes import RunResult, Status
from rlvr.sandboxes.config import SandboxConfig
from rlvr.verifiers.code import verifier as code_verifier
from rlvr.verifiers.programs import ProgramRunner
from tests.verifiers.code.conftest import grade

GT = {"tests": ["assert f() == 1"]}
PROGRAM = "def f():\n    return 1\n"


class _WeakSandbox:
    backend = "local"

    def isolation(self) -> dict[str, Any]:
        return {"isolation": "rlimits"}

    def run(self, spec: Any) -> RunResult:
        return RunResult(Status.OK, records=[{"load": "ok"}, {"i": 0, "s": "ok", "v": 1}])

    def run_many(self, specs: list[Any]) -> list[RunResult]:
        return [self.run(spec) for spec in specs]


def _verifier(sandbox: Any, **config: Any) -> code_verifier.CodeVerifier:
    return code_verifier.CodeVerifier(ProgramRunner(SandboxConfig(**config), sandbox=sandbox))


def test_below_min_isolation_refuses_with_mask() -> None:
    strict = _verifier(_WeakSandbox(), min_isolation="namespaces")
    out = grade(PROGRAM, GT, verifier=strict)
    assert out.verdict == "error" and out.mask and "rlimits" in out.reason
    assert out.details == {"isolation": "rlimits"}
    lenient = _verifier(_WeakSandbox(), min_isolation="namespaces", allow_weak_isolation=True)
    assert grade(PROGRAM, GT, verifier=lenient).score == 1.0
    assert grade(PROGRAM, GT, verifier=_verifier(_WeakSandbox(), min_isolation="rlimits")).score == 1.0


def test_missing_toolchain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_verifier, "_toolchains", lambda: {"python": "/x", "cpp": None, "javascript": None})
    out = grade("int main(){}", {"inputs": [""], "outputs": [""], "language": "cpp"})
    assert out.verdict == "error" and out.mask and "g++" in out.reason
    avail = code_verifier.CodeVerifier().availability()
    assert avail["languages"] == {"python": True, "cpp": False, "javascript": False}


def test_sandbox_failure_masks() -> None:
    class Broken(_WeakSandbox):
        def isolation(self) -> dict[str, Any]:
            return {"isolation": "full"}

        def run(self, spec: Any) -> RunResult:
            return RunResult(Status.CRASHED, infra_error="sandbox zygote died")

    out = grade(PROGRAM, GT, verifier=_verifier(Broken()))
    assert out.verdict == "error" and out.mask and "zygote died" in out.reason
