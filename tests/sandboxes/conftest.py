from __future__ import annotations

import pytest

from rlvr.sandboxes.local.client import LocalSandbox, get_local_sandbox
from tests.services import require


@pytest.fixture(scope="session")
def sb() -> LocalSandbox:
    """This process's local sandbox, at full isolation (the tests that use it attack it)."""
    box = get_local_sandbox()
    if box.isolation()["isolation"] != "full":
        require(False, "full isolation (run as root)")
    return box
