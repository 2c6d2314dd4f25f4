from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.deploy.stack import Stack, built_stack


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    """docker-compose.yml up, with the image built from this checkout once per session;
    down (and checked empty by the last test) at the end. Skips locally, fails in CI,
    where Docker or the base images are missing."""
    s = built_stack()
    try:
        s.up()
        s.wait_ready()
        yield s
    finally:
        s.down()


@pytest.fixture
def api(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=600) as client:
        yield client
