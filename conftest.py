"""Fixtures that start real services (see `tests/services.py`), and the docstring
examples of the `rlvr` package run as tests, so that they cannot rot.

Only the package's modules are collected for doctests, not the tests themselves. An
example that needs a running service names `rlvr_url`: it gets the live server.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _pytest.doctest import DoctestItem, DoctestModule

from tests.services import Cluster, RedisServer, Server, install_plugins, require

PACKAGE = Path(__file__).resolve().parent / "src" / "rlvr"


@pytest.fixture(scope="session")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the example plugin and the misbehaving test plugins are pip-installed."""
    target = tmp_path_factory.mktemp("plugins")
    install_plugins(target)
    return target


@pytest.fixture(scope="session")
def live_server(plugin_dir: Path) -> Iterator[str]:
    """Base URL of a real `rlvr serve` subprocess with the plugins installed."""
    server = Server(plugin_dir, "--workers", "2")
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def http(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=120) as client:
        yield client


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    require(shutil.which("redis-server") is not None, "redis-server")
    server = RedisServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cluster(plugin_dir: Path, redis_server: RedisServer) -> Iterator[Cluster]:
    """API replicas and workers on the test's redis-server (see `tests.services.Cluster`)."""
    c = Cluster(plugin_dir, redis_server.url)
    try:
        yield c
    finally:
        c.close()


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
