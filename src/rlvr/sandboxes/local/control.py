"""Messages on the control socket between a client and its zygote (SOCK_SEQPACKET).

Fixed-size binary records rather than JSON: the zygote handles one per job, and every
object it touches between two forks sits on a page that the next fork makes it copy
again. Out of the zygote, one packet may carry several `EXIT` records.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple


class JobLimits(NamedTuple):
    """What the zygote applies to a job's process (rlimits and its /tmp size). The one
    list of these fields: the RUN record is laid out from it, and `run` reads them off
    `rlvr.sandboxes.base.Limits` by name (not imported here: the zygote imports this
    module, and `base` would bring dataclasses into every job)."""

    cpu_s: int
    memory_mb: int
    nproc: int
    fsize_mb: int
    nofile: int
    tmp_mb: int
    # RLIMIT_AS (0: `memory_mb`); `memory_mb` bounds the job's cgroup.
    address_space_mb: int = 0


# client -> zygote. RUN carries the job's JOB_FDS fds as SCM_RIGHTS: channel, stdout, stderr.
RUN_TAG, KILL_TAG = b"R", b"K"
RUN = struct.Struct("=cQ" + "i" * len(JobLimits._fields))  # tag, job id, JobLimits
KILL = struct.Struct("=cQ")  # tag, job id
JOB_FDS = 3
# zygote -> client
EXIT_TAG, ERROR_TAG, HELLO_TAG = b"X", b"E", b"H"
# tag, job id, exit code (-1: none), signal (0: none), cpu_s, and whether the kernel killed
# a process of the job for the job's memory limit (its cgroup's OOM kill).
EXIT = struct.Struct("=cQiid?")
ERROR = struct.Struct("=cQ")  # tag, job id, then the message in UTF-8
# HELLO: the tag, then JSON: pid and capabilities.
MAX_ERROR_BYTES = 4000


def run(job_id: int, limits: Any) -> bytes:
    """The RUN record for a job; `limits` has (at least) the fields of `JobLimits`."""
    return RUN.pack(RUN_TAG, job_id, *[getattr(limits, name) for name in JobLimits._fields])


def parse_run(data: bytes) -> tuple[int, JobLimits]:
    _, job_id, *limits = RUN.unpack(data)
    return job_id, JobLimits(*limits)


def kill(job_id: int) -> bytes:
    return KILL.pack(KILL_TAG, job_id)


def exited(job_id: int, code: int, signal: int, cpu_s: float, oom: bool = False) -> bytes:
    return EXIT.pack(EXIT_TAG, job_id, code, signal, cpu_s, oom)


def parse_exits(data: bytes) -> Iterator[tuple[int, int, int, float, bool]]:
    """The EXIT records of one packet: job id, exit code, signal, cpu_s, oom each."""
    for offset in range(0, len(data) - EXIT.size + 1, EXIT.size):
        _, job_id, code, signal, cpu_s, oom = EXIT.unpack_from(data, offset)
        yield job_id, code, signal, cpu_s, oom


def hello(info: dict[str, Any]) -> bytes:
    return HELLO_TAG + json.dumps(info).encode()


def error(job_id: int, message: str) -> bytes:
    return ERROR.pack(ERROR_TAG, job_id) + message.encode("utf-8", "replace")[:MAX_ERROR_BYTES]


def parse_error(data: bytes) -> tuple[int, str]:
    _, job_id = ERROR.unpack_from(data)
    return job_id, data[ERROR.size :].decode("utf-8", "replace")
