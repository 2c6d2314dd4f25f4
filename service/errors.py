"""The one exception tree of rlvr. `service.app` maps it to HTTP status in one place."""

from __future__ import annotations

from typing import Any


class RLVRError(Exception):
    """Base of every error rlvr raises on purpose."""

    status_code = 500
    code = "internal_error"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class BadRequest(RLVRError):
    status_code = 422
    code = "invalid_request"


class UnknownVerifier(BadRequest):
    code = "unknown_verifier"


class PayloadTooLarge(RLVRError):
    status_code = 413
    code = "payload_too_large"


class Overloaded(RLVRError):
    """Too much work in flight; the client should retry after `retry_after_s`."""

    status_code = 429
    code = "overloaded"

    def __init__(self, message: str, *, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class BackendUnavailable(RLVRError):
    """A backend the request needs (Redis, the worker pool) is down."""

    status_code = 503
    code = "backend_unavailable"


class PluginError(RLVRError):
    """A verifier plugin failed to load; reported, never fatal to the service."""

    code = "plugin_error"
