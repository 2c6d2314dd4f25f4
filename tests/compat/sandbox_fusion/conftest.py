"""SandboxFusion's own `/run_code` tests (vendored unmodified under `sandbox/tests/`; see
README.md) run against a live rlvr server: `import sandbox` finds the client-side shim
next to this file, whose app and sandbox client send every request over HTTP to the
`live_server` fixture's rlvr. Their async tests (SandboxFusion runs them with
pytest-asyncio) run here on a fresh event loop each."""

from __future__ import annotations

import asyncio
import inspect
import sys
from pathlib import Path

import httpx
import pytest

from tests.services import require

HERE = Path(__file__).resolve().parent
# `sandbox` is the shim next to this file, not an installed package.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from sandbox import rlvr  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    # SandboxFusion's `sandbox/tests/__init__.py` marks its package for pytest-asyncio.
    config.addinivalue_line("markers", "asyncio: SandboxFusion's pytest-asyncio mark (run by this conftest)")


@pytest.fixture(scope="session")
def _rlvr_with_sandbox(live_server: str) -> str:
    answer = httpx.post(f"{live_server}/run_code", json={"code": "print(1)", "language": "python"}, timeout=120)
    require(answer.json().get("status") != "SandboxError", f"a sandbox ({answer.text[:300]})")
    return live_server


@pytest.fixture(autouse=True)
def _point_the_shim_at_rlvr(_rlvr_with_sandbox: str) -> None:
    rlvr.set_url(_rlvr_with_sandbox)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True
