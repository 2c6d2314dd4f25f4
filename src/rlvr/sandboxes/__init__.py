"""Sandboxes for untrusted programs. `open_sandbox(config)` gives this process's backend
for a `SandboxConfig` (`rlvr.sandboxes.config`: every sandbox limit); `isolation_report`
says what isolation this host achieves (for /readyz), without starting a backend.

Imports here are lazy on purpose: the local backend's zygote imports this package, and
every module it holds is memory that each job's fork copies and tears down again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlvr.sandboxes.base import IsolationReport, Limits, RunResult, RunSpec, Sandbox, SandboxUnavailable, Status
    from rlvr.sandboxes.config import SandboxConfig

__all__ = [
    "Limits",
    "RunResult",
    "RunSpec",
    "Sandbox",
    "SandboxUnavailable",
    "Status",
    "isolation_report",
    "open_sandbox",
]

PROBE_TIMEOUT_S = 60.0
_BASE_NAMES = frozenset(("Limits", "RunResult", "RunSpec", "Sandbox", "SandboxUnavailable", "Status"))
_probe_report: dict[str, Any] | None = None


def __getattr__(name: str) -> Any:
    if name in _BASE_NAMES:
        from rlvr.sandboxes import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_sandbox(config: SandboxConfig) -> Sandbox:
    """This process's sandbox of `config.backend`, with `config`'s limits; started on
    its first job. Raises `SandboxUnavailable`."""
    from rlvr.sandboxes.base import SandboxUnavailable

    if config.backend == "docker":
        from rlvr.sandboxes.docker.sandbox import get_docker_sandbox

        return get_docker_sandbox(config.docker)
    if config.backend != "local":
        raise SandboxUnavailable(f"sandbox backend {config.backend!r} is not available in this build")
    from rlvr.sandboxes.local.sandbox import get_local_sandbox

    return get_local_sandbox(config)


def _probe(config: SandboxConfig) -> IsolationReport:
    # A subprocess, not a fork: this may be called from the multi-threaded server.
    global _probe_report
    if _probe_report is not None:
        return _probe_report
    import json
    import subprocess

    from rlvr.sandboxes.local.wiring import zygote_command, zygote_env

    try:
        out = subprocess.run(
            zygote_command("--probe", job_env=config.job_env),
            env=zygote_env(config.job_env),
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=True,
            cwd="/",
        )
        report: dict[str, Any] = json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        report = {"isolation": "none", "error": f"sandbox probe failed: {exc}"}
    _probe_report = report
    return report


def isolation_report(config: SandboxConfig | None = None) -> IsolationReport:
    """What the sandbox achieves on this host (the default config's: the local backend):
    the local backend's probe, cached after the first call; for docker, whether its
    daemon and image are there (no pool)."""
    if config is None:
        from rlvr.sandboxes.config import SandboxConfig

        config = SandboxConfig()
    if config.backend == "docker":
        from rlvr.sandboxes.docker.sandbox import probe

        return probe(config.docker)
    if config.backend != "local":
        return {"backend": config.backend, "isolation": "none", "error": f"backend {config.backend!r} not available"}
    from rlvr.sandboxes import jobenv

    return {"backend": "local", **_probe(config), "job_environment": jobenv.report(config.job_env)}
