"""Every limit of the sandboxes, in one schema (as nsjail has one config for all of its
limits). The service fills a `SandboxConfig` from its settings once (`RLVR_SANDBOX_*`,
`RLVR_DOCKER_*`, `RLVR_MIN_ISOLATION`; see `rlvr.service.settings.builtin_config`) and
hands it to the verifiers that run programs; nothing else reads a sandbox limit.

| field                       | default   | what it bounds                                         |
|-----------------------------|-----------|--------------------------------------------------------|
| backend                     | local     | where programs run: `local` (zygote) or `docker`        |
| min_isolation               | namespaces| least isolation a verifier runs programs under          |
| allow_weak_isolation        | False     | run below `min_isolation` anyway (operator's opt-out)   |
| max_jobs_in_flight          | 64        | a worker's local jobs running at once                   |
| memory_in_flight_mb         | 8192      | the memory limits of a worker's local jobs, added up    |
| job_wall_s                  | 24.0      | one graded job's wall time (or 0.8 of its deadline)     |
| compile_timeout_s           | 15.0      | compiling a C++ program                                 |
| compile_memory_mb           | 2048      | a C++ job while it compiles                             |
| node_memory_mb              | 4096      | a JavaScript job (V8 reserves address space)            |
| max_output_per_test_bytes   | 1 MiB     | what one test's output may be before it fails           |
| keep_output_bytes           | 64 KiB    | stdout/stderr kept of a job                             |
| max_output_bytes            | 8 MiB     | stdout/stderr past which a job is killed                |
| max_channel_bytes           | 32 MiB    | the runner's records past which a job is killed         |
| max_records                 | 10,000    | records past which a job is killed                      |
| job_env                     | see below | what programs may import and require beyond the       |
|                             |           | standard library (`rlvr.sandboxes.jobenv`)             |
| docker.*                    |           | the Docker backend's containers (`DockerConfig`; the  |
|                             |           | service's `RLVR_DOCKER_*` settings)                     |

Per-test time and memory come with each item (the `code` verifier's params), within the
job's limits above.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rlvr.sandboxes.base import (
    DEFAULT_KEEP_OUTPUT_BYTES,
    DEFAULT_MAX_CHANNEL_BYTES,
    DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_RECORDS,
    IsolationLevel,
    Limits,
)
from rlvr.sandboxes.jobenv import JobEnvironment

__all__ = [
    "DEFAULT_COMPILE_MEMORY_MB",
    "DEFAULT_COMPILE_TIMEOUT_S",
    "DEFAULT_DOCKER_CPUS",
    "DEFAULT_DOCKER_IMAGE",
    "DEFAULT_DOCKER_MEMORY_MB",
    "DEFAULT_DOCKER_PIDS",
    "DEFAULT_DOCKER_POOL_SIZE",
    "DEFAULT_DOCKER_RUNTIME",
    "DEFAULT_DOCKER_START_TIMEOUT_S",
    "DEFAULT_DOCKER_TMP_MB",
    "DEFAULT_DOCKER_URL",
    "DEFAULT_DOCKER_USER",
    "DEFAULT_JOB_WALL_S",
    "DEFAULT_KEEP_OUTPUT_BYTES",
    "DEFAULT_MAX_CHANNEL_BYTES",
    "DEFAULT_MAX_JOBS_IN_FLIGHT",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_OUTPUT_PER_TEST_BYTES",
    "DEFAULT_MAX_RECORDS",
    "DEFAULT_MEMORY_IN_FLIGHT_MB",
    "DEFAULT_MIN_ISOLATION",
    "DEFAULT_NODE_MEMORY_MB",
    "DEFAULT_SANDBOX_BACKEND",
    "MAX_JOBS_IN_FLIGHT_LIMIT",
    "NODE_RUNTIME_MB",
    "DockerConfig",
    "SandboxBackend",
    "SandboxConfig",
]

SandboxBackend = Literal["local", "docker"]
DEFAULT_SANDBOX_BACKEND: SandboxBackend = "local"
DEFAULT_MIN_ISOLATION: IsolationLevel = "namespaces"
DEFAULT_MAX_JOBS_IN_FLIGHT = 64
# The local zygote's job slots (`local.isolate.MAX_SLOTS`): no more jobs can be in flight.
MAX_JOBS_IN_FLIGHT_LIMIT = 256
# The memory limits of a worker's jobs in flight add up to at most this (any one job may
# still run alone): a batch of jobs at their limits must not bring on the host's OOM
# killer, which picks its victims from every job.
DEFAULT_MEMORY_IN_FLIGHT_MB = 8192
# A job is stopped after this long, or after a share of its item's deadline where that
# is longer, so that a slow program is graded instead of taking its worker down.
DEFAULT_JOB_WALL_S = 24.0
DEFAULT_COMPILE_TIMEOUT_S = 15.0
DEFAULT_COMPILE_MEMORY_MB = 2048
DEFAULT_NODE_MEMORY_MB = 4096
# A node job's memory (its cgroup) is its program's limit and this much more: node's
# own footprint beside the heap and buffers, the runner's, and the job's small files.
NODE_RUNTIME_MB = 128
DEFAULT_MAX_OUTPUT_PER_TEST_BYTES = 1024 * 1024


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


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """Where programs run, the least isolation they may run under, and every limit of
    the sandboxes (the table in this module's notes)."""

    backend: SandboxBackend = DEFAULT_SANDBOX_BACKEND
    min_isolation: IsolationLevel = DEFAULT_MIN_ISOLATION
    allow_weak_isolation: bool = False
    max_jobs_in_flight: int = DEFAULT_MAX_JOBS_IN_FLIGHT
    memory_in_flight_mb: int = DEFAULT_MEMORY_IN_FLIGHT_MB
    job_wall_s: float = DEFAULT_JOB_WALL_S
    compile_timeout_s: float = DEFAULT_COMPILE_TIMEOUT_S
    compile_memory_mb: int = DEFAULT_COMPILE_MEMORY_MB
    node_memory_mb: int = DEFAULT_NODE_MEMORY_MB
    max_output_per_test_bytes: int = DEFAULT_MAX_OUTPUT_PER_TEST_BYTES
    keep_output_bytes: int = DEFAULT_KEEP_OUTPUT_BYTES
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    max_channel_bytes: int = DEFAULT_MAX_CHANNEL_BYTES
    max_records: int = DEFAULT_MAX_RECORDS
    job_env: JobEnvironment = field(default_factory=JobEnvironment)
    docker: DockerConfig = field(default_factory=DockerConfig)

    def limits(self, **job: Any) -> Limits:
        """A job's `Limits`: its own time, memory and file limits (`job`), under this
        config's output caps."""
        caps = {
            "keep_output_bytes": self.keep_output_bytes,
            "max_output_bytes": self.max_output_bytes,
            "max_channel_bytes": self.max_channel_bytes,
            "max_records": self.max_records,
        }
        return Limits(**(caps | job))
