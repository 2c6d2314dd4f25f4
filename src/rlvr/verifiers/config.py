"""What the built-in verifiers are constructed with. The service fills it from its
settings once; a verifier never reads settings or the environment itself."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr.sandboxes.config import SandboxConfig


@dataclass(frozen=True, slots=True)
class BuiltinConfig:
    """What the registry builds verifiers with: the sandbox config of those that run
    programs (`rlvr.verifiers.programs.ProgramRunner`); plugins that run none take nothing."""

    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
