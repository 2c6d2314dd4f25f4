"""What the Docker backend is built with. The service fills it from its settings
(`RLVR_DOCKER_*`); the defaults are defined here, once."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_DOCKER_URL = "unix:///var/run/docker.sock"
DEFAULT_DOCKER_IMAGE = "rlvr-sandbox:latest"
DEFAULT_DOCKER_RUNTIME = "runc"
DEFAULT_DOCKER_POOL_SIZE = 4
DEFAULT_DOCKER_MEMORY_MB = 2048
DEFAULT_DOCKER_CPUS = 1.0
DEFAULT_DOCKER_PIDS = 128
DEFAULT_DOCKER_TMP_MB = 256
DEFAULT_DOCKER_USER = "10001:10001"
DEFAULT_DOCKER_START_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class DockerConfig:
    """`runtime` is the OCI runtime the daemon starts containers with: `runc`, or
    `runsc` for gVisor where it is installed. `pool_size` started, idle containers wait
    per worker process. `memory_mb`, `cpus`, `pids` and `tmp_mb` bound a whole container
    (its job's own, tighter limits apply inside it); `gxx` and `node` are the
    toolchains' paths inside the image."""

    url: str = DEFAULT_DOCKER_URL
    image: str = DEFAULT_DOCKER_IMAGE
    runtime: str = DEFAULT_DOCKER_RUNTIME
    pool_size: int = DEFAULT_DOCKER_POOL_SIZE
    memory_mb: int = DEFAULT_DOCKER_MEMORY_MB
    cpus: float = DEFAULT_DOCKER_CPUS
    pids: int = DEFAULT_DOCKER_PIDS
    tmp_mb: int = DEFAULT_DOCKER_TMP_MB
    user: str = DEFAULT_DOCKER_USER
    start_timeout_s: float = DEFAULT_DOCKER_START_TIMEOUT_S
    gxx: str = "/usr/bin/g++"
    node: str = "/usr/bin/node"
