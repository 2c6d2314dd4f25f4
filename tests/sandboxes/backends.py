"""Both sandbox backends for the suites that run the same hostile programs against each:
the local sandbox at full isolation, and the Docker backend on the test image."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rlvr.sandboxes import Sandbox
from rlvr.sandboxes.docker.sandbox import DockerSandbox
from rlvr.sandboxes.local.sandbox import get_local_sandbox
from tests.sandboxes.docker.images import sandbox_config
from tests.services import require

BACKENDS = ["local", "docker"]


def open_backend(kind: str, **docker_changes: Any) -> Iterator[Sandbox]:
    """The body of a fixture parametrised over `BACKENDS`: yields the sandbox, then
    closes it (the local one is shared by the session, and stays)."""
    if kind == "local":
        box = get_local_sandbox()
        require(box.isolation()["isolation"] == "full", "full isolation of the local sandbox (run as root)")
        yield box
        return
    docker = DockerSandbox(sandbox_config(**docker_changes))
    yield docker
    docker.close()
