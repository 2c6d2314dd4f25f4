"""Errors of the verifier layer; see `rlvr.errors` for the whole tree."""

from __future__ import annotations

from rlvr.errors import RLVRError


class VerifierError(RLVRError):
    """Base of the errors the verifier layer raises on purpose."""


class UnknownVerifier(VerifierError):
    """No built-in or entry point has this name."""


class PluginError(VerifierError):
    """A verifier plugin failed to load; reported, never fatal to the service."""
