"""Per-job accounting of memory and processes: one cgroup per slot of the zygote.

RLIMIT_AS and RLIMIT_NPROC bound each *process*; a job has several (forked children,
compilers, node's helpers), and memory that no address-space limit sees: tmpfs files
(its /tmp), memfd and shared memory, and off-heap buffers of runtimes run without an
address-space cap (node). A memory cgroup charges all of it to the job, and a pids
cgroup counts every task of the job, threads included.

The zygote makes `rlvr-<pid>` next to its own cgroup (under the memory and pids
hierarchies on cgroup v1; on v2 one directory with both controllers), and in it one
cgroup per slot, made on the slot's first job and reused by every later job of that
slot: making and removing cgroups per job would cost more than the job. A job's
process joins its slot's cgroups right after the fork, by writing "0" (itself) to
fds the zygote keeps open. When a job ends, the zygote reads the slot's OOM-kill
counter: a rise means the kernel killed one of the job's processes for the job's
memory limit (`memory` status). Every process of a job is gone by then (the end of
its PID namespace's init takes them all), so the count belongs to that job alone.

The zygote removes its cgroups when it shuts down; those of a zygote that was killed
first are removed by the next zygote to start (a cgroup with no process left).
"""

from __future__ import annotations

import contextlib
import os

ROOT = "/sys/fs/cgroup"
PREFIX = "rlvr-"
MIB = 1024 * 1024
# A job whose peak memory came this close to its limit reached it (v1): the charge that
# fails may be a huge page's, 2 MiB, over what is left.
LIMIT_MARGIN_BYTES = 4 * MIB


def _own_paths() -> dict[str, str]:
    """This process's cgroup per controller (v1), or under "" (the v2 hierarchy)."""
    paths: dict[str, str] = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                paths[name] = path
    return paths


def _layout() -> tuple[str, list[str]]:
    """The cgroup version and the directories to make the zygote's cgroups under."""
    own = _own_paths()
    if all(os.path.isdir(os.path.join(ROOT, c)) and c in own for c in ("memory", "pids")):
        return "v1", [os.path.join(ROOT, c) + own[c] for c in ("memory", "pids")]
    with open(os.path.join(ROOT, "cgroup.controllers")) as f:
        available = f.read().split()
    if not {"memory", "pids"} <= set(available) or "" not in own:
        raise OSError("no memory and pids cgroup controllers")
    return "v2", [ROOT + own[""]]


def _write(dir_fd: int, path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _remove_stale(parent: str) -> None:
    """Remove what zygotes that are gone left behind (cgroups with no process left)."""
    for name in os.listdir(parent):
        if not name.startswith(PREFIX) or not name[len(PREFIX) :].isdigit():
            continue
        if os.path.exists(f"/proc/{name[len(PREFIX) :]}"):
            continue  # its zygote (or a process that got its pid) is alive
        _remove_tree(os.path.join(parent, name))


def _remove_tree(path: str) -> None:
    with contextlib.suppress(OSError):
        for entry in os.scandir(path):
            if entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)
        os.rmdir(path)


def _exists(dir_fd: int, path: str) -> bool:
    try:
        os.stat(path, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


class SlotCgroup:
    """One slot's cgroups, `name` in each of the zygote's `rlvr-<pid>` directories (fds):
    their procs files (kept open, for the job to join) and the files that tell whether a
    job was killed for its memory limit (kept open, read once per job)."""

    def __init__(self, version: str, bases: list[int], name: str) -> None:
        self.version, self.bases, self.name = version, bases, name
        self.procs: list[int] = []
        for base in bases:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=base)
            self.procs.append(os.open(f"{name}/cgroup.procs", os.O_WRONLY | os.O_CLOEXEC, dir_fd=base))
        events = "memory.oom_control" if version == "v1" else "memory.events"
        self.events = os.open(f"{name}/{events}", os.O_RDONLY | os.O_CLOEXEC, dir_fd=bases[0])
        # v1's peak usage (reset after a job that reached its limit, and when the limit
        # changes), to tell a kill for the slot's own limit from one for the host's; v2
        # counts those apart (`oom`).
        self.peak = (
            os.open(f"{name}/memory.max_usage_in_bytes", os.O_RDWR | os.O_CLOEXEC, dir_fd=bases[0])
            if version == "v1"
            else -1
        )
        self.memory_mb = self.nproc = -1
        self.ooms, self.limit_ooms = self._events()

    def configure(self, memory_mb: int, nproc: int) -> None:
        """Set the slot's limits for the next job (files written only on a change)."""
        memory, pids, name = self.bases[0], self.bases[-1], self.name
        if memory_mb != self.memory_mb:
            self.memory_mb = -1  # until every write below has gone through
            limit = str(memory_mb * MIB)
            if self.version == "v1":
                # memsw (memory + swap) may not be set below the memory limit, nor the
                # memory limit above it: lift it, set memory, then bound it the same.
                swap = f"{name}/memory.memsw.limit_in_bytes"
                has_swap = _exists(memory, swap)
                if has_swap:
                    _write(memory, swap, "-1")
                _write(memory, f"{name}/memory.limit_in_bytes", limit)
                if has_swap:
                    _write(memory, swap, limit)
                # A peak under the last limit may be over the new one: not this job's.
                os.pwrite(self.peak, b"0", 0)
            else:
                _write(memory, f"{name}/memory.max", limit)
                with contextlib.suppress(OSError):  # no swap accounting on this kernel
                    _write(memory, f"{name}/memory.swap.max", "0")
            self.memory_mb = memory_mb
        if nproc != self.nproc:
            self.nproc = -1
            _write(pids, f"{name}/pids.max", str(nproc))
            self.nproc = nproc

    def join(self) -> None:
        """Move the calling process (a job's first, still as root) into the slot."""
        for fd in self.procs:
            os.write(fd, b"0")

    def _events(self) -> tuple[int, int]:
        """(OOM kills of the slot's processes, OOMs for the slot's own limit (v2; 0 on v1)).
        The kernel counts a kill in the victim's cgroup whoever's limit it was for: the
        host's, a container's, or the slot's own."""
        kills = limit_ooms = 0
        for line in os.pread(self.events, 4096, 0).decode().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                kills = int(value)
            elif key == "oom":
                limit_ooms = int(value)
        return kills, limit_ooms

    def _reached_limit(self, limit_ooms: int) -> bool:
        """Whether the job that just ended reached the slot's memory limit."""
        if self.peak < 0:
            return limit_ooms > self.limit_ooms
        peak = int(os.pread(self.peak, 64, 0))
        reached = peak + LIMIT_MARGIN_BYTES >= self.memory_mb * MIB
        if reached:
            os.pwrite(self.peak, b"0", 0)  # the next job's peak is its own
        return reached

    def after_job(self) -> bool:
        """Whether the job that just ended had a process killed for its own memory
        limit: a kill while the slot was at its limit. A kill without (the host or a
        container short of memory) is not the job's doing, and does not say it is."""
        try:
            kills, limit_ooms = self._events()
            reached = self._reached_limit(limit_ooms)
        except (OSError, ValueError):
            return False
        killed = kills > self.ooms and reached
        self.ooms, self.limit_ooms = kills, limit_ooms
        return killed

    def close(self) -> None:
        for fd in (*self.procs, self.events, *([self.peak] if self.peak >= 0 else [])):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.procs = []
        for base in self.bases:
            with contextlib.suppress(OSError):
                os.rmdir(self.name, dir_fd=base)


class JobCgroups:
    """The zygote's cgroups: `rlvr-<pid>` in each hierarchy, with a cgroup per slot.
    Made, and their directories opened, while the zygote still sees the host's
    filesystem: the fds stay writable after its own view turns read-only."""

    def __init__(self) -> None:
        self.version, parents = _layout()
        for parent in parents:
            with contextlib.suppress(OSError):
                _remove_stale(parent)
        self.name = f"{PREFIX}{os.getpid()}"
        self.parents = [os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) for path in parents]
        self.bases: list[int] = []
        for parent_fd in self.parents:
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.name, 0o755, dir_fd=parent_fd)
            self.bases.append(os.open(self.name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent_fd))
        if self.version == "v2":
            # The controllers reach the slots only if enabled for the children of
            # `rlvr-<pid>`, which holds no process itself.
            _write(self.bases[0], "cgroup.subtree_control", "+memory +pids")
        self.slots: list[SlotCgroup] = []

    def slot(self, number: int) -> SlotCgroup:
        made = SlotCgroup(self.version, self.bases, f"slot{number}")
        self.slots.append(made)
        return made

    def remove(self) -> None:
        """Remove every cgroup made (only the empty ones can go)."""
        for made in self.slots:
            made.close()
        for fd in self.bases:
            os.close(fd)
        for parent_fd in self.parents:
            with contextlib.suppress(OSError):
                os.rmdir(self.name, dir_fd=parent_fd)
            os.close(parent_fd)
        self.slots, self.bases, self.parents = [], [], []
