"""Sandboxes for untrusted programs. `get_sandbox()` gives this process's backend;
`isolation_report()` says what isolation this host achieves (for /readyz)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from typing import Any

from sandboxes.base import Limits, RunResult, RunSpec, Sandbox, SandboxUnavailable, Status

__all__ = [
    "Limits",
    "RunResult",
    "RunSpec",
    "Sandbox",
    "SandboxUnavailable",
    "Status",
    "get_sandbox",
    "isolation_report",
]

PROBE_TIMEOUT_S = 60.0


def get_sandbox(backend: str = "local") -> Sandbox:
    if backend != "local":
        raise SandboxUnavailable(f"sandbox backend {backend!r} is not available in this build")
    from sandboxes.local import get_local_sandbox

    return get_local_sandbox()


@functools.cache
def _probe() -> dict[str, Any]:
    # A subprocess, not a fork: this may be called from the multi-threaded server.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "sandboxes.local.zygote", "--probe"],
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=True,
            env=env,
            cwd="/",
        )
        report: dict[str, Any] = json.loads(out.stdout)
        report.pop("raw", None)
        report.pop("level", None)
        return report
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return {"isolation": "none", "error": f"sandbox probe failed: {exc}"}


def isolation_report(backend: str = "local") -> dict[str, Any]:
    """What the sandbox achieves on this host; cached after the first call."""
    if backend != "local":
        return {"backend": backend, "isolation": "none", "error": f"backend {backend!r} not available"}
    return {"backend": "local", **_probe()}
