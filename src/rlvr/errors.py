"""The one exception tree of rlvr. Each layer raises its own branch; the service maps
the whole tree to HTTP in one place (`rlvr.service.errors.http_status`, used by the
single handler in `rlvr.service.app`)::

    RLVRError                         rlvr.errors
    ├── ServiceError                  rlvr.service.errors
    │   ├── BadRequest                422  the request names what is wrong
    │   ├── PayloadTooLarge           413
    │   ├── RequestTimeout            408  the body came too slowly
    │   ├── ClientGone                499  the client left before its answer
    │   ├── UnknownSession            404  no live session has that id
    │   ├── SessionLost               410  the replica that held the session died
    │   ├── Overloaded                429  with Retry-After
    │   └── BackendUnavailable        503  Redis or the worker pool is down
    │       └── ShuttingDown          503  draining: retry (with Retry-After)
    ├── VerifierError                 rlvr.verifiers.errors
    │   ├── UnknownVerifier           422  no verifier has that name
    │   └── PluginError               500  a plugin failed to load
    ├── SandboxUnavailable            rlvr.sandboxes.base
    │                                 503  the backend cannot run programs here
    ├── SessionBusy                   rlvr.sandboxes.sessions
    │                                 409  the session's previous call still runs
    ├── SessionFileError              rlvr.sandboxes.sessions
    │                                 422  a file asked of a session is missing or too large
    └── SessionEnded                  rlvr.sandboxes.sessions
                                      410  the session ended during the request

A verifier never lets `SandboxUnavailable` escape for an item: it masks the item
instead. An error outside this tree is a bug, and becomes a 500 that names its type.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RLVRError"]


class RLVRError(Exception):
    """Base of every error rlvr raises on purpose."""

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
