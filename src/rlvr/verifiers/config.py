"""What the built-in verifiers are constructed with. The service fills it from its
settings once; a verifier never reads settings or the environment itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rlvr.sandboxes.base import IsolationLevel
from rlvr.sandboxes.docker.config import DockerConfig

SandboxBackend = Literal["local", "docker"]
DEFAULT_SANDBOX_BACKEND: SandboxBackend = "local"
DEFAULT_MIN_ISOLATION: IsolationLevel = "namespaces"


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Where the `code` verifier runs programs, and the least isolation it accepts
    before it masks items instead (unless the operator opts out)."""

    backend: SandboxBackend = DEFAULT_SANDBOX_BACKEND
    min_isolation: IsolationLevel = DEFAULT_MIN_ISOLATION
    allow_weak_isolation: bool = False
    # What the docker backend is built with (unused by the local one).
    docker: DockerConfig = field(default_factory=DockerConfig)


@dataclass(frozen=True, slots=True)
class BuiltinConfig:
    """Construction arguments of the built-in verifiers; plugins take none."""

    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
