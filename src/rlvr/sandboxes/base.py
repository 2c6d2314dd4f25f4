"""The sandbox seam: a program spec in, a status, outputs and per-test records out."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from rlvr.errors import RLVRError

if TYPE_CHECKING:
    from rlvr.sandboxes.jobs import Job, TestSuite
    from rlvr.sandboxes.runner.core import Record

# What a sandbox reports of itself (its `isolation` level, and what that is made of):
# free-form by backend, shown as it is by /readyz and /v1/verifiers.
IsolationReport = dict[str, Any]

IsolationLevel = Literal["none", "rlimits", "namespaces", "full"]
# From weakest to strongest; what each means is in `rlvr.sandboxes.local.isolate`.
ISOLATION_LEVELS: tuple[IsolationLevel, ...] = ("none", "rlimits", "namespaces", "full")


def meets_isolation(level: str, minimum: str) -> bool:
    """Whether a sandbox at `level` is at least as isolated as `minimum`; an unknown
    level (a report from a broken probe) meets nothing above `none`."""
    rank: dict[str, int] = {name: i for i, name in enumerate(ISOLATION_LEVELS)}
    return rank.get(level, 0) >= rank[minimum]


class Status(enum.StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    CRASHED = "crashed"


# A job's output caps (`Limits`; configurable as `SandboxConfig` fields).
DEFAULT_KEEP_OUTPUT_BYTES = 64 * 1024
DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_CHANNEL_BYTES = 32 * 1024 * 1024
# A grader's cost per item is bounded by the records it parses, and a tiny record costs
# the job nothing to write.
DEFAULT_MAX_RECORDS = 10_000


@dataclass(frozen=True, slots=True)
class Limits:
    """What one run may use. The client enforces the wall deadline and the output caps;
    the rest go to the job's process, as the fields of
    `rlvr.sandboxes.local.control.JobLimits` (read off this class by name)."""

    wall_s: float = 10.0
    cpu_s: int = 10
    # What the job's processes use together (its cgroup, where there is one), and each
    # process's address space (RLIMIT_AS; 0: `memory_mb`). Apart for node, whose V8
    # reserves gigabytes of address space it never uses.
    memory_mb: int = 512
    address_space_mb: int = 0
    nproc: int = 64
    fsize_mb: int = 16
    nofile: int = 256
    tmp_mb: int = 64
    # Kept of stdout/stderr, and past what the job is killed (output_limit).
    keep_output_bytes: int = DEFAULT_KEEP_OUTPUT_BYTES
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    max_channel_bytes: int = DEFAULT_MAX_CHANNEL_BYTES
    # Records past this many kill the job (output_limit).
    max_records: int = DEFAULT_MAX_RECORDS


@dataclass(slots=True)
class RunSpec:
    """`job` is what to run (`rlvr.sandboxes.jobs`: the program and its inputs, never
    expected outputs), sent as the runner's first frame. `tests`, for a `SplitJob`, is a
    second frame the runner reads only after it has forked off the program's process."""

    job: Job
    limits: Limits = field(default_factory=Limits)
    tests: TestSuite | None = None


@dataclass(slots=True)
class RunResult:
    status: Status
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    # From when the runner took the job (`core.ACCEPTED`; from its start where it never did) to its end.
    wall_s: float = 0.0
    cpu_s: float = 0.0
    records: list[Record] = field(default_factory=list)
    # What the runner's audit hook saw the program do (`runner.audit`), taken out of the
    # records: telemetry for the grader's signals, never part of a verdict.
    evidence: frozenset[str] = frozenset()
    # Set when the sandbox itself failed (could not start, zygote died, the runner
    # never took the job): the grader must mask the item, not score it. Never set by
    # anything the program does (see `rlvr.sandboxes.runner.core.ACCEPTED`).
    infra_error: str | None = None


class SandboxUnavailable(RLVRError):
    """The backend cannot run anything on this host."""


OnResult = Callable[[int, RunResult], None]


class Sandbox(Protocol):
    backend: str

    def run(self, spec: RunSpec) -> RunResult: ...

    def run_many(self, specs: list[RunSpec], on_result: OnResult | None = None) -> list[RunResult]:
        """Every spec's result, in order; `on_result(i, result)` as each is known, in the
        order jobs end (once per job), for a caller that answers each job on its own."""
        ...

    def isolation(self) -> IsolationReport:
        """What this sandbox instance actually achieves: `isolation` (one of
        `ISOLATION_LEVELS`) and what it is made of."""
        ...

    def close(self) -> None: ...
