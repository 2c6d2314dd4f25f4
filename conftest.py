"""Runs the docstring examples of the `rlvr` package as tests, so they cannot rot.

Only modules of the package are collected for doctests (not the tests themselves).
An example that needs a running service names `rlvr_url`: it gets the suite's live
server (see `tests/conftest.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem, DoctestModule

PACKAGE = Path(__file__).resolve().parent / "rlvr"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".py" and file_path.name != "__main__.py" and file_path.is_relative_to(PACKAGE):
        return DoctestModule.from_parent(parent, path=file_path)
    return None


@pytest.fixture(autouse=True)
def _doctest_service(request: pytest.FixtureRequest) -> None:
    if not isinstance(request.node, DoctestItem):
        return
    if any("rlvr_url" in example.source for example in request.node.dtest.examples):
        namespace = request.getfixturevalue("doctest_namespace")
        namespace["rlvr_url"] = request.getfixturevalue("live_server")
