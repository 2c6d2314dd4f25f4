"""The one way a verifier runs programs: a `ProgramRunner`, given to it when it is built
(as httpx's client is given its transport), holding the sandbox config and the one
isolation check every verifier that runs programs makes before it runs anything.

A verifier never looks a sandbox up itself: the registry builds each verifier that
runs programs (`RunsPrograms`) with the host's runner, and a test builds one with the
runner it wants.
"""

from __future__ import annotations

from typing import Any, Self

from rlvr.sandboxes import RunResult, RunSpec, Sandbox, SandboxUnavailable, isolation_report, open_sandbox
from rlvr.sandboxes.base import OnResult, meets_isolation
from rlvr.sandboxes.config import SandboxConfig
from rlvr.verifiers.base import Outcome, Verdict

__all__ = ["BuiltWithRunner", "ProgramRunner"]


class ProgramRunner:
    """Runs jobs in the sandbox `config` names, once it is isolated enough.

    `sandbox` is the backend to use instead of this process's own for `config` (a
    test's, or a custom one); by default it is opened on the first job, in the process
    that runs it (a worker, not the API process that built the registry)."""

    def __init__(self, config: SandboxConfig | None = None, sandbox: Sandbox | None = None) -> None:
        self.config = config or SandboxConfig()
        self._sandbox = sandbox

    @property
    def sandbox(self) -> Sandbox:
        return self._sandbox if self._sandbox is not None else open_sandbox(self.config)

    def accepts(self, level: str) -> bool:
        return meets_isolation(level, self.config.min_isolation) or self.config.allow_weak_isolation

    def refusal_reason(self) -> str | None:
        """Why no program may run here now (the sandbox is missing, or below the least
        isolation the config accepts); None when programs may run."""
        return self._check()[0]

    def refusal(self) -> Outcome | None:
        """The masked outcome of an item when `refusal_reason` says no; else None."""
        reason, level = self._check()
        if reason is None:
            return None
        return Outcome(0.0, Verdict.ERROR, reason, details={"isolation": level} if level else {}, mask=True)

    def _check(self) -> tuple[str | None, str | None]:
        """Why no program may run (or None), and the isolation level found."""
        try:
            level = str(self.sandbox.isolation().get("isolation", "none"))
        except SandboxUnavailable as exc:
            return f"sandbox unavailable: {exc}", None
        if self.accepts(level):
            return None, level
        why = (
            f"sandbox isolation is {level!r}, below the required {self.config.min_isolation!r} "
            "(set RLVR_ALLOW_WEAK_ISOLATION=true to run anyway)"
        )
        return why, level

    def availability(self) -> dict[str, Any]:
        """What this host's sandbox achieves, read without starting it, and whether
        that is enough: the `availability` report of a verifier that runs programs."""
        try:
            report = isolation_report(self.config)
        except Exception as exc:
            report = {"isolation": "none", "error": str(exc)}
        return {
            "available": self.accepts(str(report.get("isolation", "none"))),
            "sandbox": report,
            "min_isolation": self.config.min_isolation,
        }

    def run(self, spec: RunSpec) -> RunResult:
        """Raises SandboxUnavailable."""
        return self.sandbox.run(spec)

    def run_many(self, specs: list[RunSpec], on_result: OnResult | None = None) -> list[RunResult]:
        """Raises SandboxUnavailable."""
        # A sandbox written before `on_result` is asked only what it knows.
        return self.sandbox.run_many(specs) if on_result is None else self.sandbox.run_many(specs, on_result)


class BuiltWithRunner:
    """A base for verifiers that run programs: built with a `ProgramRunner` (the
    registry's, through `from_runner`; a default one when built by hand), which it
    keeps as `runner`. It implements `rlvr.verifiers.base.RunsPrograms`."""

    def __init__(self, runner: ProgramRunner | None = None) -> None:
        self.runner = runner or ProgramRunner()

    @classmethod
    def from_runner(cls, runner: ProgramRunner) -> Self:
        return cls(runner)
