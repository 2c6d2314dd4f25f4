"""All configuration: `rlvr serve`/`rlvr worker` flags over `RLVR_*` environment
variables over the defaults here, read once at start (see `cli.settings_from`); each
component is then given what it needs.

Every limit is a named default here; `rlvr serve --help` lists these fields.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from rlvr.sandboxes import config as sandbox_defaults
from rlvr.sandboxes import sessions as session_defaults
from rlvr.sandboxes.base import IsolationLevel
from rlvr.sandboxes.config import DockerConfig, SandboxBackend, SandboxConfig
from rlvr.sandboxes.jobenv import JobEnvironment
from rlvr.verifiers.config import BuiltinConfig

DEFAULT_MAX_ITEMS = 10_000
DEFAULT_MAX_REQUEST_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_BODIES_HELD_MB = 256
DEFAULT_MAX_VERIFIER_REFS = 50_000
DEFAULT_MAX_PLANNING_CHARS = 256 * 1024 * 1024
DEFAULT_MAX_PARSE_EXPANSION = 6.0
DEFAULT_PARSE_FLOOR_MB = 1
DEFAULT_MAX_OBJECT_KEYS = 1_000
DEFAULT_PLANNING_CONCURRENCY = 2
DEFAULT_DEADLINE_S = 10.0
DEFAULT_MAX_DEADLINE_S = 120.0
# Below this a worker cannot be handed a chunk in time (it gets three deadlines to start
# one), and items would be masked for the server's own latency.
DEFAULT_MIN_DEADLINE_S = 0.05
DEFAULT_CACHE_ENTRIES = 100_000
DEFAULT_CHUNK_SIZE = 32
# As many as a trainer's concurrent tool calls usually are: enough to start them in one
# burst, few enough that a quick program rarely waits on a slow one of its batch.
DEFAULT_RUN_CODE_BATCH = 16
DEFAULT_MAX_IN_FLIGHT = 200_000
DEFAULT_WORKER_MAX_RSS_MB = 2048
DEFAULT_STALL_WALL_FACTOR = 3.0
DEFAULT_STALL_RETRIES = 1
DEFAULT_REDIS_RECLAIM_IDLE_S = 60.0
DEFAULT_REDIS_MAX_DELIVERIES = 3
DEFAULT_REDIS_MAX_QUEUE = 20_000
DEFAULT_REDIS_RESULT_TIMEOUT_S = 600.0
DEFAULT_REDIS_OP_TIMEOUT_S = 3.0
DEFAULT_REDIS_DEAD_LETTER_MAX = 10_000
DEFAULT_REDIS_DEAD_CONSUMER_IDLE_S = 3600.0
DEFAULT_DRAIN_GRACE_S = 30.0
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 120.0
DEFAULT_MAX_CONNECTIONS = 1024
# Live tool sessions (`/v1/sessions`): an idle one holds a forked interpreter, about
# 2 MB of its own memory.
DEFAULT_MAX_SESSIONS = 2048
DEFAULT_SESSION_MAX_MEMORY_MB = 4096


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RLVR_", extra="ignore")

    host: str = Field("127.0.0.1", description="Address to bind.")
    port: int = Field(8000, ge=0, le=65535, description="Port to bind.")
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="Log level.")

    workers: int = Field(
        default_factory=lambda: os.cpu_count() or 1,
        ge=1,
        le=512,
        description="Verifier worker processes (default: one per core).",
    )
    chunk_size: int = Field(
        DEFAULT_CHUNK_SIZE, ge=1, le=10_000, description="Items sent to a worker (or a stream entry) at once."
    )
    run_code_batch: int = Field(
        DEFAULT_RUN_CODE_BATCH,
        ge=1,
        le=1_000,
        description="/run_code programs that wait together started at once by one pool process; each keeps its "
        "own limits, and its answer comes when the last of its batch is done.",
    )
    max_items: int = Field(DEFAULT_MAX_ITEMS, ge=1, description="Items allowed per request.")
    max_request_bytes: int = Field(DEFAULT_MAX_REQUEST_BYTES, ge=1024, description="Bytes allowed per request body.")
    max_bodies_held_mb: int = Field(
        DEFAULT_MAX_BODIES_HELD_MB,
        ge=1,
        description="MiB of request bodies held at once by requests in progress (at least one body of "
        "max_request_bytes); a body that would pass it gets 429 with Retry-After.",
    )
    max_verifier_refs: int = Field(
        DEFAULT_MAX_VERIFIER_REFS, ge=1, description="Verifier references per request (each item names one or more)."
    )
    max_parse_expansion: float = Field(
        DEFAULT_MAX_PARSE_EXPANSION,
        ge=1.0,
        description="Python objects a body's free-form JSON (ground truths, params, metadata; the whole body of "
        "the trainer and /run_code routes) may decode to, as a multiple of the body's size, estimated before "
        "decoding; past it (plus parse_floor_mb) the request gets 413.",
    )
    parse_floor_mb: int = Field(
        DEFAULT_PARSE_FLOOR_MB, ge=0, description="MiB of decoded objects any body may reach whatever its size."
    )
    max_object_keys: int = Field(
        DEFAULT_MAX_OBJECT_KEYS,
        ge=16,
        description="Keys allowed in any one JSON object of a request body (a ground truth, params, metadata, "
        "/run_code's files); more gets 422. A verifier's model builds an error for each key it does not know, "
        "so this bounds what refusing a ground truth costs; send a list of pairs for a larger table.",
    )
    max_planning_chars: int = Field(
        DEFAULT_MAX_PLANNING_CHARS,
        ge=1,
        description="Work allowed to turn a request into units: the sum over items of verifier references "
        "times (response + ground truth JSON) characters.",
    )
    planning_concurrency: int = Field(
        DEFAULT_PLANNING_CONCURRENCY,
        ge=1,
        description="Requests parsed and planned at once, off the event loop; others wait their turn.",
    )
    default_deadline_s: float = Field(
        DEFAULT_DEADLINE_S, gt=0, description="Per-item deadline when neither request nor verifier sets one."
    )
    max_deadline_s: float = Field(
        DEFAULT_MAX_DEADLINE_S, gt=0, description="Largest per-item deadline a request may ask for."
    )
    min_deadline_s: float = Field(
        DEFAULT_MIN_DEADLINE_S,
        gt=0,
        description="Smallest per-item deadline a request may ask for; below it the request gets 422.",
    )
    worker_max_rss_mb: int = Field(
        DEFAULT_WORKER_MAX_RSS_MB, ge=64, description="Address-space limit of a verifier worker process, MiB."
    )
    stall_wall_factor: float = Field(
        DEFAULT_STALL_WALL_FACTOR,
        ge=1.0,
        description="A unit's deadline is CPU time; one still short of it after this many times its deadline "
        "in wall time was stalled by the grader and is masked, not timed out.",
    )
    stall_retries: int = Field(
        DEFAULT_STALL_RETRIES, ge=0, description="Times a unit stalled by the grader runs again on a fresh worker."
    )
    max_in_flight: int = Field(
        DEFAULT_MAX_IN_FLIGHT, ge=1, description="Items being graded at once; past it requests get 429."
    )

    header_timeout_s: float = Field(
        DEFAULT_HEADER_TIMEOUT_S, gt=0, description="Time a client has to send a request's headers (408 after)."
    )
    body_timeout_s: float = Field(
        DEFAULT_BODY_TIMEOUT_S, gt=0, description="Time a client has to send a request's whole body (408 after)."
    )
    max_connections: int = Field(
        DEFAULT_MAX_CONNECTIONS, ge=1, description="Open connections and requests at once; past it requests get 503."
    )
    max_sessions: int = Field(
        DEFAULT_MAX_SESSIONS, ge=0, description="Live /v1/sessions at once; past it a new one gets 429."
    )
    session_max_memory_mb: int = Field(
        DEFAULT_SESSION_MAX_MEMORY_MB, ge=32, description="The most memory a session may ask for."
    )
    session_max_idle_ttl_s: float = Field(
        session_defaults.MAX_SESSION_IDLE_TTL_S, gt=0, description="The longest idle TTL a session may ask for."
    )
    drain_grace_s: float = Field(
        DEFAULT_DRAIN_GRACE_S,
        ge=0,
        description="On SIGTERM, how long requests in flight get to finish before they answer a retryable 503.",
    )

    cache_entries: int = Field(DEFAULT_CACHE_ENTRIES, ge=0, description="In-memory verdict cache size (0 = off).")
    cache_ttl_s: int = Field(7 * 24 * 3600, ge=1, description="Verdict TTL in the Redis cache.")

    redis_url: str | None = Field(None, description="Switch the dispatcher and cache to Redis (redis://...).")
    redis_fallback: Literal["fail", "embedded"] = Field(
        "fail", description="When Redis is down: answer 503 (fail) or grade in this process (embedded)."
    )
    redis_reclaim_idle_s: float = Field(
        DEFAULT_REDIS_RECLAIM_IDLE_S,
        gt=0,
        description="Stream entries idle this long (a dead worker's) are reclaimed; keep it above the item deadline.",
    )
    redis_max_deliveries: int = Field(
        DEFAULT_REDIS_MAX_DELIVERIES, ge=1, description="Deliveries before an entry goes to the dead-letter stream."
    )
    redis_dead_letter_max: int = Field(
        DEFAULT_REDIS_DEAD_LETTER_MAX, ge=1, description="Entries kept in the dead-letter stream (the oldest go)."
    )
    redis_dead_consumer_idle_s: float = Field(
        DEFAULT_REDIS_DEAD_CONSUMER_IDLE_S,
        gt=0,
        description="A consumer of the job stream idle this long with nothing pending (a dead worker's) is deleted.",
    )
    redis_max_queue: int = Field(
        DEFAULT_REDIS_MAX_QUEUE, ge=1, description="Stream entries waiting or in progress; past it requests get 429."
    )
    redis_window_chunks: int | None = Field(
        None,
        ge=1,
        description=(
            "Chunks one API replica keeps on the stream at once, the rest waiting their turn round-robin between "
            "requests (default: what the live workers can hold together)."
        ),
    )
    redis_result_timeout_s: float = Field(
        DEFAULT_REDIS_RESULT_TIMEOUT_S, gt=0, description="How long a request waits for workers before masking."
    )
    redis_op_timeout_s: float = Field(
        DEFAULT_REDIS_OP_TIMEOUT_S, gt=0, description="Socket timeout of one Redis command."
    )

    # Every sandbox limit is a field of rlvr.sandboxes.config.SandboxConfig (its table).
    sandbox: SandboxBackend = Field(
        sandbox_defaults.DEFAULT_SANDBOX_BACKEND, description="Sandbox backend for untrusted code."
    )
    min_isolation: IsolationLevel = Field(
        sandbox_defaults.DEFAULT_MIN_ISOLATION, description="Least sandbox isolation the code verifier accepts."
    )
    allow_weak_isolation: bool = Field(
        False, description="Run code even when the sandbox is below min_isolation (operator opt-out)."
    )
    sandbox_max_jobs_in_flight: int = Field(
        sandbox_defaults.DEFAULT_MAX_JOBS_IN_FLIGHT,
        ge=1,
        le=sandbox_defaults.MAX_JOBS_IN_FLIGHT_LIMIT,
        description="Local sandbox jobs a worker runs at once.",
    )
    sandbox_memory_in_flight_mb: int = Field(
        sandbox_defaults.DEFAULT_MEMORY_IN_FLIGHT_MB,
        ge=64,
        description="The memory limits of a worker's local jobs in flight, added up (MiB).",
    )
    sandbox_job_wall_s: float = Field(
        sandbox_defaults.DEFAULT_JOB_WALL_S,
        gt=0,
        description="Wall time of one graded job (or 0.8 of its item's deadline, where longer).",
    )
    sandbox_compile_timeout_s: float = Field(
        sandbox_defaults.DEFAULT_COMPILE_TIMEOUT_S, gt=0, description="Time to compile one C++ program."
    )
    sandbox_compile_memory_mb: int = Field(
        sandbox_defaults.DEFAULT_COMPILE_MEMORY_MB, ge=64, description="Memory of a C++ job while it compiles (MiB)."
    )
    sandbox_node_memory_mb: int = Field(
        sandbox_defaults.DEFAULT_NODE_MEMORY_MB, ge=256, description="Memory of a JavaScript job (MiB)."
    )
    sandbox_max_output_per_test_bytes: int = Field(
        sandbox_defaults.DEFAULT_MAX_OUTPUT_PER_TEST_BYTES, ge=1024, description="Output of one test, at most."
    )
    sandbox_keep_output_bytes: int = Field(
        sandbox_defaults.DEFAULT_KEEP_OUTPUT_BYTES, ge=1024, description="Stdout/stderr kept of a job."
    )
    sandbox_max_output_bytes: int = Field(
        sandbox_defaults.DEFAULT_MAX_OUTPUT_BYTES, ge=1024, description="Stdout/stderr past which a job is killed."
    )
    sandbox_max_channel_bytes: int = Field(
        sandbox_defaults.DEFAULT_MAX_CHANNEL_BYTES, ge=1024, description="Runner records past which a job is killed."
    )
    sandbox_max_records: int = Field(
        sandbox_defaults.DEFAULT_MAX_RECORDS, ge=16, description="Records (tests, steps) past which a job is killed."
    )
    job_python_path: str | None = Field(
        None,
        description="Directories (separated by ':') of the Python packages programs may import, apart from the "
        "service's own (default: the checkout's .venv-jobs/python that `make` builds, or the images' "
        "/opt/rlvr-jobs/python; empty: none).",
    )
    job_node_path: str | None = Field(
        None,
        description="Directories (separated by ':') node programs may require packages from, as NODE_PATH "
        "(default: /usr/share/nodejs, where Debian's node-lodash is; empty: none).",
    )

    @model_validator(mode="after")
    def _deadlines_in_order(self) -> Settings:
        # Past either bound every request asking for a deadline would be refused, or every
        # item left to the default would be masked for the server's own latency. A default
        # over max_deadline_s is clamped to it, as documented.
        for name in ("max_deadline_s", "default_deadline_s"):
            if getattr(self, name) < self.min_deadline_s:
                raise ValueError(f"{name} ({getattr(self, name):g}) is below min_deadline_s ({self.min_deadline_s:g})")
        return self

    @field_validator("job_python_path", "job_node_path")
    @classmethod
    def _existing_dirs(cls, value: str | None) -> str | None:
        # A folder that is not there would leave every program that imports from it a
        # silent 0: refused at start, named.
        for entry in (value or "").split(os.pathsep):
            if entry and not (os.path.isabs(entry) and os.path.isdir(entry)):
                raise ValueError(f"{entry!r} is not an absolute path to an existing directory")
        return value

    # RLVR_SANDBOX=docker: one hardened container per job (rlvr.sandboxes.docker).
    docker_url: str = Field(sandbox_defaults.DEFAULT_DOCKER_URL, description="Docker daemon of the docker sandbox.")
    docker_image: str = Field(
        sandbox_defaults.DEFAULT_DOCKER_IMAGE,
        description="Image of the sandbox containers (docker/sandbox.Dockerfile).",
    )
    docker_runtime: str = Field(
        sandbox_defaults.DEFAULT_DOCKER_RUNTIME,
        description="OCI runtime of the sandbox containers: runc, or runsc for gVisor where installed.",
    )
    docker_pool_size: int = Field(
        sandbox_defaults.DEFAULT_DOCKER_POOL_SIZE, ge=0, description="Idle started sandbox containers per worker."
    )
    docker_memory_mb: int = Field(
        sandbox_defaults.DEFAULT_DOCKER_MEMORY_MB, ge=64, description="Memory limit of one sandbox container (MiB)."
    )
    docker_cpus: float = Field(sandbox_defaults.DEFAULT_DOCKER_CPUS, gt=0, description="CPUs of one sandbox container.")
    docker_pids: int = Field(sandbox_defaults.DEFAULT_DOCKER_PIDS, ge=8, description="Process limit of one container.")
    docker_tmp_mb: int = Field(
        sandbox_defaults.DEFAULT_DOCKER_TMP_MB, ge=1, description="Size of a sandbox container's /tmp (MiB)."
    )
    default_verifier: str | None = Field(
        None,
        description="Verifier of /get_reward (OpenRLHF) and /v1/reward (slime) requests whose URL names none "
        "with ?verifier=NAME.",
    )


def builtin_config(settings: Settings) -> BuiltinConfig:
    """What the built-in verifiers are constructed with: the one place where settings
    reach them. The API process builds its registry from it and hands it to every
    worker process, which builds its own."""
    return BuiltinConfig(
        sandbox=SandboxConfig(
            backend=settings.sandbox,
            min_isolation=settings.min_isolation,
            allow_weak_isolation=settings.allow_weak_isolation,
            max_jobs_in_flight=settings.sandbox_max_jobs_in_flight,
            memory_in_flight_mb=settings.sandbox_memory_in_flight_mb,
            job_wall_s=settings.sandbox_job_wall_s,
            compile_timeout_s=settings.sandbox_compile_timeout_s,
            compile_memory_mb=settings.sandbox_compile_memory_mb,
            node_memory_mb=settings.sandbox_node_memory_mb,
            max_output_per_test_bytes=settings.sandbox_max_output_per_test_bytes,
            keep_output_bytes=settings.sandbox_keep_output_bytes,
            max_output_bytes=settings.sandbox_max_output_bytes,
            max_channel_bytes=settings.sandbox_max_channel_bytes,
            max_records=settings.sandbox_max_records,
            job_env=JobEnvironment.from_settings(settings.job_python_path, settings.job_node_path),
            docker=DockerConfig(
                url=settings.docker_url,
                image=settings.docker_image,
                runtime=settings.docker_runtime,
                pool_size=settings.docker_pool_size,
                memory_mb=settings.docker_memory_mb,
                cpus=settings.docker_cpus,
                pids=settings.docker_pids,
                tmp_mb=settings.docker_tmp_mb,
            ),
        )
    )
