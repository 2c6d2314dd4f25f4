"""The names SandboxFusion's `sandbox/datasets/types.py` re-exports and its tests import."""

from __future__ import annotations

from sandbox.runners import CommandRunResult, CommandRunStatus
from sandbox.server.sandbox_api import Language, RunCodeRequest, RunCodeResponse, RunStatus

__all__ = ["CommandRunResult", "CommandRunStatus", "Language", "RunCodeRequest", "RunCodeResponse", "RunStatus"]
