# The C extension `_jobstart.c` (see `rlvr.sandboxes.local.jobstart`).
from collections.abc import Sequence

def start_job(
    flags: int,
    cgroup_procs: Sequence[int],
    cgroup_ns: bool,
    new_session: bool,
    proc_fd: int,
    oom_score_adj: bytes,
    net_fd: int,
    mnt_fd: int,
    rlimits: Sequence[int],
    fds: Sequence[int],
    keep: Sequence[int],
) -> tuple[int, int]: ...
def drop(uid: int, dumpable: bool, filter: int) -> None: ...
