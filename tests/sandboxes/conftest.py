from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from tests.services import require


@pytest.fixture(scope="session", params=["native", "python"])
def sb(request: pytest.FixtureRequest) -> Iterator[LocalSandbox]:
    """A local sandbox at full isolation (the tests that use it attack it), once with
    jobs started by the `_jobstart` extension and once by the same steps in Python."""
    if request.param == "native":
        box = get_local_sandbox()
        require(box.isolation()["job_start"] == "native", "the _jobstart extension (a C compiler and Python headers)")
    else:
        box = LocalSandbox(native_start=False)
    if box.isolation()["isolation"] != "full":
        require(False, "full isolation (run as root)")
    yield box
    if request.param != "native":
        box.close()
