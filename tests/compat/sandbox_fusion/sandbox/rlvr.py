"""The one place that knows where the rlvr server under test is: the conftest sets it
from the `live_server` fixture before each test."""

from __future__ import annotations

# As long as rlvr lets a request wait: its run and compile limits of 60 s each, and a queue.
TIMEOUT_S = 600.0
_url: str | None = None


def set_url(url: str) -> None:
    global _url
    _url = url


def url() -> str:
    if _url is None:
        raise RuntimeError("no rlvr server: the vendored tests run under tests/compat/sandbox_fusion/conftest.py")
    return _url
