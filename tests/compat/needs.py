"""The compat suite needs the trainers' packages (the `compat` extra, which `make test`
installs): skipped locally without them, a failure in CI."""

from __future__ import annotations

import importlib.util

import pytest

from tests.services import in_ci


def need(*modules: str) -> None:
    """Call at the top of a test module, before importing `modules`."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    message = f"not installed: {', '.join(missing)} (pip install -e '.[compat]'; see the Makefile)"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=True)
