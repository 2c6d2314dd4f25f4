"""Refusals: isolation below the minimum, a missing toolchain, a dead sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.sandboxes import RunResult, Status
from rlvr.service.settings import Settings
from rlvr.verifiers.code import verifier as code_verifier
from tests.verifiers.code.conftest import grade

GT = {"tests": ["assert f() == 1"]}


def _settings(monkeypatch: pytest.MonkeyPatch, **kw: Any) -> None:
    monkeypatch.setattr(code_verifier, "get_settings", lambda: Settings(**kw))


class _WeakSandbox:
    backend = "local"

    def isolation(self) -> dict[str, Any]:
        return {"isolation": "rlimits"}

    def run(self, spec: Any) -> RunResult:
        return RunResult(Status.OK, records=[{"load": "ok"}, {"i": 0, "s": "ok", "v": 1}])


def test_below_min_isolation_refuses_with_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_verifier, "get_sandbox", lambda backend="local": _WeakSandbox())
    _settings(monkeypatch, min_isolation="namespaces")
    out = grade("def f():\n    return 1\n", GT)
    assert out.verdict == "error" and out.mask and "rlimits" in out.reason
    _settings(monkeypatch, min_isolation="namespaces", allow_weak_isolation=True)
    assert grade("def f():\n    return 1\n", GT).score == 1.0


def test_missing_toolchain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_verifier, "_toolchains", lambda: {"python": "/x", "cpp": None, "javascript": None})
    out = grade("int main(){}", {"inputs": [""], "outputs": [""], "language": "cpp"})
    assert out.verdict == "error" and out.mask and "g++" in out.reason
    avail = code_verifier.CodeVerifier().availability()
    assert avail["languages"] == {"python": True, "cpp": False, "javascript": False}


def test_sandbox_failure_masks(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(_WeakSandbox):
        def isolation(self) -> dict[str, Any]:
            return {"isolation": "full"}

        def run(self, spec: Any) -> RunResult:
            return RunResult(Status.CRASHED, infra_error="sandbox zygote died")

    monkeypatch.setattr(code_verifier, "get_sandbox", lambda backend="local": Broken())
    out = grade("def f():\n    return 1\n", GT)
    assert out.verdict == "error" and out.mask


def test_docker_backend_not_available_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    _settings(monkeypatch, sandbox="docker")
    out = grade("def f():\n    return 1\n", GT)
    assert out.verdict == "error" and out.mask
