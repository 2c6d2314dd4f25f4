"""docker-compose.docker-sandbox.yml for real: with it, the workers run each program in
a container of its own through the mounted Docker socket (RLVR_SANDBOX=docker), and
`down` leaves none of those containers behind (the workers' janitor removes them)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import httpx
import pytest

from tests.deploy.stack import BUILD_TIMEOUT_S, TEST_TIMEOUT_S, Stack, built_stack
from tests.deploy.test_compose import JOB_STATUS, STATUS_PROGRAM, grade, stdio

SANDBOX_IMAGE = "rlvr-sandbox:deploy-test"
pytestmark = pytest.mark.timeout(TEST_TIMEOUT_S)


@pytest.fixture(scope="module")
def docker_stack() -> Iterator[Stack]:
    s = built_stack("docker-compose.docker-sandbox.yml", RLVR_DOCKER_IMAGE=SANDBOX_IMAGE)
    try:
        s.run("build", "sandbox-image", timeout_s=BUILD_TIMEOUT_S)
        s.up()
        s.wait_ready()
        yield s
    finally:
        s.down()


def sandbox_containers(worker: str) -> list[str]:
    """Containers the worker started: it labels them with its host name (its id)."""
    label = f"label=org.rlvr.sandbox.host={worker[:12]}"
    out = subprocess.run(["docker", "ps", "-aq", "--filter", label], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_programs_run_in_sandbox_containers_and_down_removes_them(docker_stack: Stack) -> None:
    (worker,) = docker_stack.running("worker")
    with httpx.Client(base_url=docker_stack.url, timeout=600) as api:
        items = [stdio(f"p{i}", "print(int(input()) + 1)", f"{i}\n", f"{i + 1}\n") for i in range(8)]
        items.append({"id": "status", "verifier": "code", "response": STATUS_PROGRAM})
        items[-1]["ground_truth"] = {"inputs": [""], "outputs": [JOB_STATUS]}
        results = grade(api, items)
    assert all(r["reward"] == 1.0 and not r["mask"] for r in results.values()), results
    assert sandbox_containers(worker), "the worker started no sandbox container"
    docker_stack.down()
    assert sandbox_containers(worker) == []
    assert docker_stack.containers() == []
