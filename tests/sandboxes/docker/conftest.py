from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.sandboxes.config import DockerConfig
from rlvr.sandboxes.docker.sandbox import DockerSandbox
from tests.sandboxes.docker.images import sandbox_config


@pytest.fixture(scope="session")
def docker_config() -> DockerConfig:
    return sandbox_config()


@pytest.fixture(scope="module")
def sandbox(docker_config: DockerConfig) -> Iterator[DockerSandbox]:
    box = DockerSandbox(docker_config)
    yield box
    box.close()
