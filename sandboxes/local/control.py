"""Messages on the control socket between a client and its zygote (SOCK_SEQPACKET).

Fixed-size binary records rather than JSON: the zygote handles one per job, and every
object it touches between two forks sits on a page that the next fork makes it copy
again. Out of the zygote, one packet may carry several `EXIT` records.
"""

from __future__ import annotations

import json
import struct
from typing import Any

# client -> zygote. RUN carries the job's pipes as SCM_RIGHTS: channel, stdout, stderr.
RUN = struct.Struct("=cQ6i")  # b"R", job id, cpu_s, memory_mb, nproc, fsize_mb, nofile, tmp_mb
KILL = struct.Struct("=cQ")  # b"K", job id
# zygote -> client
EXIT = struct.Struct("=cQiidq")  # b"X", job id, exit code (-1: none), signal (0: none), cpu_s, maxrss_kb
ERROR = struct.Struct("=cQ")  # b"E", job id, then the message in UTF-8
HELLO = b"H"  # then JSON: pid and capabilities
JOB_FDS = 3


def hello(info: dict[str, Any]) -> bytes:
    return HELLO + json.dumps(info).encode()


def error(job_id: int, message: str) -> bytes:
    return ERROR.pack(b"E", job_id) + message.encode("utf-8", "replace")[:4000]
