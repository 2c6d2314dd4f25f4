"""Errors of the service layer, and `http_status`: the one place where any error of
the tree drawn in `rlvr.errors` gets its HTTP status and code."""

from __future__ import annotations

from rlvr.errors import RLVRError
from rlvr.sandboxes.base import SandboxUnavailable
from rlvr.sandboxes.sessions import SessionBusy, SessionEnded, SessionFileError
from rlvr.verifiers.errors import PluginError, UnknownVerifier

DEFAULT_RETRY_AFTER_S = 1.0


class ServiceError(RLVRError):
    """Base of the errors the service layer raises on purpose."""


class BadRequest(ServiceError):
    """The request is invalid; the message names the item and the field."""


class PayloadTooLarge(ServiceError):
    """The body is over `max_request_bytes`."""


class RequestTimeout(ServiceError):
    """The client sent its request too slowly."""


class ClientGone(ServiceError):
    """The client disconnected before its answer: its grading was cancelled."""


class Overloaded(ServiceError):
    """Too much work in flight; the client should retry after `retry_after_s`."""

    def __init__(self, message: str, *, retry_after_s: float = DEFAULT_RETRY_AFTER_S) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class UnknownSession(ServiceError):
    """No live session has that id: it ended, expired, or never existed here."""


class SessionLost(ServiceError):
    """The replica that held the session is gone, and the session with it."""


class BackendUnavailable(ServiceError):
    """A backend the request needs (Redis, the worker pool) is down."""


class ShuttingDown(BackendUnavailable):
    """The server is draining: the request is safe to retry (grading is idempotent)."""

    def __init__(self, message: str, *, retry_after_s: float = DEFAULT_RETRY_AFTER_S) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


# Most specific first: the first class in an error's MRO found here wins.
HTTP_STATUS: dict[type[RLVRError], tuple[int, str]] = {
    BadRequest: (422, "invalid_request"),
    UnknownVerifier: (422, "unknown_verifier"),
    PayloadTooLarge: (413, "payload_too_large"),
    UnknownSession: (404, "session_not_found"),
    SessionBusy: (409, "session_busy"),
    SessionEnded: (410, "session_ended"),
    SessionLost: (410, "session_lost"),
    SessionFileError: (422, "session_file"),
    RequestTimeout: (408, "request_timeout"),
    ClientGone: (499, "client_closed_request"),
    Overloaded: (429, "overloaded"),
    ShuttingDown: (503, "shutting_down"),
    BackendUnavailable: (503, "backend_unavailable"),
    SandboxUnavailable: (503, "sandbox_unavailable"),
    PluginError: (500, "plugin_error"),
    RLVRError: (500, "internal_error"),
}


def http_status(exc: RLVRError) -> tuple[int, str]:
    """(HTTP status, error code) for any error of the tree."""
    for cls in type(exc).__mro__:
        found = HTTP_STATUS.get(cls)
        if found is not None:
            return found
    return HTTP_STATUS[RLVRError]
