"""The compose deployment (docker-compose.yml) brought up for real: the service image
built from this checkout, a project of its own per session, and the docker commands
the tests use to look at it.

The image is built from host-built wheels (`pip wheel`, as docker/service.Dockerfile
documents), so the build needs no network inside containers; its base is the one the
Dockerfile names, in CI the stand-in `.ci/stand-in-images` builds.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from typing import Any

import httpx

from tests.sandboxes import job_wheels
from tests.services import ROOT, free_port, require

TEST_IMAGE = "rlvr:deploy-test"
BASE_IMAGES = ("python:3.11-slim-bookworm", "redis:7-bookworm")
WHEELS = "build/docker-wheels"
# Wheels the image's Python may need beyond the host's: a Debian 3.11.2 base takes
# redis's `async-timeout` (required below 3.11.3), which a newer host Python skips.
EXTRA_WHEELS = ("async-timeout>=4.0.3",)
# Entries of a killed worker are reclaimed after this long (the default is 60 s).
RECLAIM_IDLE_S = "5"
START_TIMEOUT_S = 240.0
BUILD_TIMEOUT_S = 1200.0
# pytest-timeout counts fixture set-up: the first test of a stack waits for its images.
TEST_TIMEOUT_S = 1800


def missing_tools() -> str | None:
    """What this host lacks for the deployment tests, or None."""
    if shutil.which("docker") is None:
        return "docker"
    if compose_command() is None:
        return "docker-compose or docker compose"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "a running Docker daemon"
    absent = [i for i in BASE_IMAGES if not image_exists(i)]
    if absent:
        return f"base images {absent} (run .ci/stand-in-images where no registry is reachable)"
    return None


def compose_command() -> list[str] | None:
    """docker-compose 1.29 (what Debian and CI have) first, else compose v2."""
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return None


def image_exists(name: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode == 0


@functools.cache  # once per session, whichever stack comes first
def build_image() -> None:
    wheels = ROOT / WHEELS
    wheels.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "--find-links", str(wheels), "-w", str(wheels), ".[redis,docker]", *EXTRA_WHEELS], cwd=ROOT, check=True
    )
    # The job environment's wheels, for the image's Python (see docker/service.Dockerfile).
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
    subprocess.run(
        [*pip, *job_wheels.TARGET, "-d", str(wheels), "-r", str(job_wheels.REQUIREMENTS)], cwd=ROOT, check=True
    )
    job_wheels.download()  # and the sandbox image's (docker/sandbox.Dockerfile), in build/job-wheels
    build = ["docker", "build", "--quiet", "-f", "docker/service.Dockerfile", "--build-arg", f"WHEELS={WHEELS}"]
    subprocess.run(
        [*build, "-t", TEST_IMAGE, "."], cwd=ROOT, check=True, stdout=subprocess.DEVNULL, timeout=BUILD_TIMEOUT_S
    )


def built_stack(*overrides: str, **env: str) -> Stack:
    """A Stack of docker-compose.yml (and `overrides`), once the image is built."""
    missing = missing_tools()
    require(missing is None, str(missing))
    build_image()
    return Stack(*overrides, **env)


class Stack:
    """One compose project from docker-compose.yml, under a unique name."""

    def __init__(self, *overrides: str, **env: str) -> None:
        self.project = f"rlvrtest{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = compose_command()
        assert command is not None
        files = [a for name in ("docker-compose.yml", *overrides) for a in ("-f", str(ROOT / name))]
        self.compose = [*command, "-p", self.project, *files]
        # Only what the test sets: the host's own RLVR_* would pass through to the stack.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RLVR_")}
        self.env.update(RLVR_PORT=str(self.port), RLVR_IMAGE=TEST_IMAGE, RLVR_REDIS_RECLAIM_IDLE_S=RECLAIM_IDLE_S)
        self.env.update(env)

    def run(self, *args: str, check: bool = True, timeout_s: float = START_TIMEOUT_S) -> str:
        out = subprocess.run(
            [*self.compose, *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout_s
        )
        if check and out.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}): {out.stderr[-3000:]}")
        return out.stdout

    def up(self, *args: str) -> None:
        self.run("up", "-d", "--no-build", *args)

    def wait_ready(self) -> dict[str, Any]:
        deadline = time.monotonic() + START_TIMEOUT_S
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                r = httpx.get(self.url + "/readyz", timeout=5)
                if r.status_code == 200:
                    return dict(r.json())
                last = r.text[:500]
            except httpx.HTTPError as exc:
                last = repr(exc)
            time.sleep(1)
        raise RuntimeError(f"{self.url}/readyz not ready after {START_TIMEOUT_S}s: {last}\n{self.logs()}")

    def containers(self, service: str | None = None) -> list[str]:
        """Ids of the project's containers (of one service), running or not."""
        label = ["--filter", f"label=com.docker.compose.project={self.project}"]
        if service is not None:
            label += ["--filter", f"label=com.docker.compose.service={service}"]
        out = subprocess.run(["docker", "ps", "-aq", *label], capture_output=True, text=True, check=True)
        return out.stdout.split()

    def running(self, service: str) -> list[str]:
        return [c for c in self.containers(service) if inspect(c)["State"]["Running"]]

    def logs(self, *services: str) -> str:
        """The last lines each of `services` (all by default) logged."""
        return self.run("logs", "--no-color", "--tail", "40", *services, check=False)[-6000:]

    def down(self) -> None:
        self.run("down", "--remove-orphans", check=False)


def inspect(container: str) -> dict[str, Any]:
    out = subprocess.run(["docker", "inspect", container], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout)[0])


def docker_exec(container: str, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "exec", container, *command], capture_output=True, text=True, timeout=120)
