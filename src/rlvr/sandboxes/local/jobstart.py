"""A job's first steps, from the zygote's clone to the runner: join the slot's cgroups
and namespaces, set the job's limits, put its fds in place. Still as root; dropping the
uid and the seccomp filter come later (`drop`), once the runner has decided which of
its processes is which.

Two ways to the same state. `_jobstart` (C, an optional extension built at install)
clones and sets the child up without running Python: each page a freshly forked Python
process writes is a copy of the zygote's, and these steps taken in Python (ctypes
calls, and the objects they touch) cost a job about a tenth of its CPU. Where it was
not built (no C compiler), `start`, `enter_job`, `place_fds` and `drop` take the same
steps in Python.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable, Sequence
from typing import NamedTuple

from rlvr.sandboxes.local import isolate, linux
from rlvr.sandboxes.local.control import JobLimits
from rlvr.sandboxes.runner import core

_MIB = 1024 * 1024


class Native(NamedTuple):
    """The `_jobstart` extension's functions."""

    start_jobs: Callable[[int, list[tuple[object, ...]]], int | list[tuple[int, int]]]
    drop: Callable[[int, bool, int], None]


def load_native(wanted: bool = True) -> Native | None:
    """`_jobstart` if it was built and is `wanted`, else None (the Python steps)."""
    if not wanted:
        return None
    try:
        from rlvr.sandboxes.local import _jobstart
    except ImportError:
        return None
    return Native(_jobstart.start_jobs, _jobstart.drop)


def rlimits(limits: JobLimits) -> tuple[int, ...]:
    """The job's rlimits as (resource, value) pairs, flat: both ways set these."""
    return (
        resource.RLIMIT_CPU, limits.cpu_s,
        resource.RLIMIT_AS, (limits.address_space_mb or limits.memory_mb) * _MIB,
        resource.RLIMIT_FSIZE, limits.fsize_mb * _MIB,
        resource.RLIMIT_NOFILE, limits.nofile,
        resource.RLIMIT_CORE, 0,
        resource.RLIMIT_NPROC, limits.nproc,
    )  # fmt: skip


# A job to start: its slot, its limits and its fds (channel, stdout, stderr).
Job = tuple[isolate.Slot, JobLimits, list[int]]
# In the zygote, per job: its (pid, pidfd or -1), or why it could not be started.
Started = list[tuple[int, int] | OSError]


def start(
    native: Native | None, flags: int, caps: isolate.Capabilities, jobs: Sequence[Job], keep: tuple[int, ...]
) -> int | Started:
    """Clone one process per job with `flags` (its new namespaces), back to back: in a
    child, the index of its job; in the zygote, what `Started` holds. With `native`,
    the children are set up already (as `enter_job` and `place_fds` would) and the
    clones happen in C, with no page of the zygote written between two of them but its
    stack; else each child calls them itself."""
    if native is None:
        started: Started = []
        for index in range(len(jobs)):
            try:
                pid = linux.clone_fork(flags) if flags else os.fork()
            except OSError as exc:
                started.append(exc)
                continue
            if pid == 0:
                return index
            started.append((pid, -1))
        return started
    outcome = native.start_jobs(flags, [_native_job(caps, job, keep) for job in jobs])
    if isinstance(outcome, int):
        return outcome
    return [(pid, pidfd) if pid > 0 else OSError(pidfd, os.strerror(pidfd)) for pid, pidfd in outcome]


def _native_job(caps: isolate.Capabilities, job: Job, keep: tuple[int, ...]) -> tuple[object, ...]:
    """A job's arguments to `_jobstart.start_jobs`."""
    slot, limits, fds = job
    procs = slot.cgroup.procs if slot.cgroup is not None else ()
    return (
        procs,
        slot.cgroup is not None,
        not caps.pid_ns,
        caps.writable_proc,
        isolate.OOM_JOB,
        slot.net,
        slot.mnt,
        rlimits(limits),
        fds,
        keep,
    )


def enter_job(caps: isolate.Capabilities, slot: isolate.Slot, limits: JobLimits) -> None:
    """The job's namespaces, cgroups and limits, in Python."""
    if slot.cgroup is not None:
        slot.cgroup.join()  # first: whatever the job's process does from here is charged
        # Its cgroups are the root of its view: /proc/self/cgroup shows no host path.
        linux.unshare(linux.CLONE_NEWCGROUP)
    if not caps.pid_ns:
        os.setsid()  # in a PID namespace the job is pid 1 and takes everything with it
    linux.prctl(linux.PR_SET_PDEATHSIG, 9)
    isolate.set_oom_score_adj(isolate.OOM_JOB, caps.writable_proc)
    if slot.net >= 0:
        linux.setns(slot.net, linux.CLONE_NEWNET)
    if slot.mnt >= 0:
        linux.setns(slot.mnt, linux.CLONE_NEWNS)
    os.chdir("/tmp")
    pairs = rlimits(limits)
    for index in range(0, len(pairs), 2):
        try:  # not contextlib.suppress: its objects would be more pages to copy per job
            resource.setrlimit(pairs[index], (pairs[index + 1], pairs[index + 1]))
        except (ValueError, OSError):
            pass


def place_fds(fds: list[int], keep: tuple[int, ...]) -> None:
    """The job's fds, in Python: the channel is both its input (fd 0, until the runner
    detaches it) and its record output (fd 3). Received fds are all above 2."""
    channel, stdout, stderr = fds
    os.dup2(channel, 0)
    os.dup2(stdout, 1)
    os.dup2(stderr, 2)
    os.dup2(channel, core.CHANNEL_FD)
    core.close_fds_except(*keep)


def drop(
    native: Native | None, caps: isolate.Capabilities, uid: int, job_filter: int, *, dumpable: bool = True
) -> None:
    """`isolate.drop`: become `uid` for good, then install the jobs' seccomp filter
    (`job_filter`: its address, `seccomp.filter_address`, taken in the zygote so that a
    job touches no ctypes object for it)."""
    if native is None or not caps.uid_drop:
        isolate.drop(caps, uid, dumpable=dumpable)
    else:
        native.drop(uid, dumpable, job_filter if caps.seccomp else 0)
