"""Process isolation of the local backend: what the zygote sets up once, and what each
job's process does between fork and running untrusted code.

Isolation levels (the `min_isolation` setting), from weakest:

- ``none``: no sandbox at all.
- ``rlimits``: own session, killed as a process group at its deadline, rlimits on CPU,
  address space, processes, file size and open files; but the host's filesystem,
  network and uid.
- ``namespaces``: rlimits, plus new PID, mount, IPC, UTS and network namespaces, a
  read-only filesystem (/dev/shm and /var/tmp included) with a private tmpfs at /tmp
  as the only writable place, private home directories hidden, and a per-job unprivileged
  uid (so RLIMIT_NPROC is per job: a fork bomb cannot starve a concurrent job).
- ``full``: namespaces, plus a seccomp filter and no_new_privs.

The zygote probes once at start-up what the kernel allows and reports the level reached.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
from dataclasses import dataclass, field
from typing import Any

from sandboxes.local import linux, seccomp

LEVELS = ("none", "rlimits", "namespaces", "full")

# Jobs get uids from here up: base + zygote pid * UIDS_PER_ZYGOTE + 2 * slot (+1 for
# the trusted half of a split job). The zygote's pid makes ranges of concurrent zygotes
# disjoint; a uid is reused only once its job, and so every process and file it
# owned, is gone.
UID_BASE = 1_000_000
UIDS_PER_ZYGOTE = 512
MAX_SLOTS = UIDS_PER_ZYGOTE // 2

# Directories whose contents a job never sees (credentials, caches, data sets, the
# service's own checkout); anything the interpreter needs under them is bound back.
MASKED_DIRS = ("/root", "/home", "/work", "/srv", "/mnt", "/media", "/run/secrets")
JOB_FLAGS = linux.CLONE_NEWPID | linux.CLONE_NEWNS | linux.CLONE_NEWIPC | linux.CLONE_NEWUTS


def level_index(level: str) -> int:
    return LEVELS.index(level)


@dataclass
class Capabilities:
    """What the zygote achieved; sent to clients and shown by `isolation_report`."""

    root: bool = False
    mount_ns: bool = False
    readonly_root: bool = False
    masked: list[str] = field(default_factory=list)
    pid_ns: bool = False
    net_ns: bool = False
    ipc_ns: bool = False
    uid_drop: bool = False
    seccomp: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def level(self) -> str:
        if not (self.root and self.mount_ns and self.readonly_root and self.pid_ns and self.net_ns):
            return "rlimits"
        if not (self.ipc_ns and self.uid_drop):
            return "rlimits"
        return "full" if self.seccomp else "namespaces"

    def to_dict(self) -> dict[str, Any]:
        namespaces = [
            n
            for n, ok in (
                ("pid", self.pid_ns),
                ("mount", self.mount_ns),
                ("ipc", self.ipc_ns),
                ("net", self.net_ns),
                ("uts", self.pid_ns),
            )
            if ok
        ]
        return {
            "isolation": self.level,
            "namespaces": namespaces,
            "readonly_root": self.readonly_root,
            "private_tmp": self.mount_ns,
            "masked_dirs": self.masked,
            "uid_drop": self.uid_drop,
            "per_job_uid": self.uid_drop,
            "seccomp": self.seccomp,
            "errors": self.errors,
        }


def _needed_paths() -> list[str]:
    """What the in-sandbox interpreter must still read: its prefix and import path."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted(os.path.realpath(p) for p in paths)


def _mask(dir_: str, needed: list[str], caps: Capabilities) -> None:
    if not os.path.isdir(dir_) or os.path.islink(dir_):
        return
    inside = [p for p in needed if p == dir_ or p.startswith(dir_ + "/")]
    # Keep the hidden originals reachable through fds: after the tmpfs covers `dir_`,
    # /proc/self/fd/N is the only way back to them.
    keep = [(p, os.open(p, os.O_PATH | os.O_DIRECTORY)) for p in inside if os.path.isdir(p)]
    try:
        linux.mount("tmpfs", dir_, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=1m,mode=755")
        for path, fd in keep:
            os.makedirs(path, mode=0o755, exist_ok=True)
            linux.mount(f"/proc/self/fd/{fd}", path, None, linux.MS_BIND | linux.MS_REC)
        caps.masked.append(dir_)
    finally:
        for _, fd in keep:
            os.close(fd)


def _hide(path: str) -> None:
    """Cover one directory (e.g. a package's bundled answer key) with an empty tmpfs."""
    if os.path.isdir(path):
        linux.mount("tmpfs", path, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=4k,mode=755")


def setup_zygote(hidden: list[str]) -> Capabilities:
    """Give the zygote (and so every job) a private, read-only view of the filesystem."""
    caps = Capabilities(root=os.geteuid() == 0)
    if not linux.SUPPORTED or not caps.root:
        caps.errors.append("not root on x86_64 Linux: namespaces and uid drop unavailable")
        return caps
    try:
        linux.unshare(linux.CLONE_NEWNS)
        linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)
        caps.mount_ns = True
    except OSError as exc:
        caps.errors.append(str(exc))
        return caps
    needed = _needed_paths()
    for dir_ in MASKED_DIRS:
        try:
            _mask(dir_, needed, caps)
        except OSError as exc:
            caps.errors.append(f"mask {dir_}: {exc}")
    for path in hidden:
        with contextlib.suppress(OSError):
            _hide(path)
    try:
        # A proc that shows each job only its own uid's processes.
        linux.mount("proc", "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC, "hidepid=invisible")
    except OSError as exc:
        caps.errors.append(f"proc: {exc}")
    try:
        linux.mount_setattr_recursive("/", linux.MOUNT_ATTR_RDONLY | linux.MOUNT_ATTR_NOSUID)
        caps.readonly_root = True
    except OSError as exc:
        caps.errors.append(str(exc))
    return caps


def new_netns() -> int:
    """An fd of a fresh, empty network namespace (loopback down, no routes)."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        linux.unshare(linux.CLONE_NEWNET)
        try:
            return os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            linux.setns(own, linux.CLONE_NEWNET)
    finally:
        os.close(own)


def probe(caps: Capabilities) -> None:
    """Try, in a throw-away child, each per-job step, and record which work."""
    seccomp.prepare()
    try:
        fd = new_netns()
        os.close(fd)
        caps.net_ns = True
    except OSError as exc:
        caps.errors.append(f"netns: {exc}")
    try:
        pid = linux.clone_fork(JOB_FLAGS)
    except OSError as exc:
        caps.errors.append(str(exc))
        return
    if pid == 0:
        code = 0
        try:
            code |= 1 if os.getpid() == 1 else 0
            _private_tmp(16)
            code |= 2
            os.setgroups([])
            os.setresgid(UID_BASE - 1, UID_BASE - 1, UID_BASE - 1)
            os.setresuid(UID_BASE - 1, UID_BASE - 1, UID_BASE - 1)
            code |= 4
            seccomp.install()
            code |= 8
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    bits = os.waitstatus_to_exitcode(status)
    caps.pid_ns, caps.ipc_ns = bool(bits & 1), bool(bits & 2)
    caps.uid_drop, caps.seccomp = bool(bits & 4), bool(bits & 8)


@dataclass
class JobLimits:
    cpu_s: int
    memory_mb: int
    nproc: int
    fsize_mb: int
    nofile: int
    tmp_mb: int


def _private_tmp(size_mb: int) -> None:
    # One mount per job (each costs a good part of a fork): /dev/shm and /var/tmp stay
    # read-only like the rest of the filesystem.
    linux.mount("tmpfs", "/tmp", "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, f"size={size_mb}m,mode=1777,nr_inodes=8192")


def enter_job(caps: Capabilities, netns_fd: int | None, limits: JobLimits) -> None:
    """First steps of a job's process, still as root: namespaces, private tmp, limits.
    Dropping the uid and the seccomp filter come later (`drop`), once the runner has
    decided which of its processes is which."""
    os.setsid()
    linux.prctl(linux.PR_SET_PDEATHSIG, 9)
    if netns_fd is not None:
        linux.setns(netns_fd, linux.CLONE_NEWNET)
    if caps.mount_ns and caps.root:
        _private_tmp(limits.tmp_mb)
    os.chdir("/tmp")
    set_rlimits(limits)


def set_rlimits(limits: JobLimits) -> None:
    def lim(which: int, value: int) -> None:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (value, value))

    mib = 1024 * 1024
    lim(resource.RLIMIT_CPU, limits.cpu_s)
    lim(resource.RLIMIT_AS, limits.memory_mb * mib)
    lim(resource.RLIMIT_FSIZE, limits.fsize_mb * mib)
    lim(resource.RLIMIT_NOFILE, limits.nofile)
    lim(resource.RLIMIT_CORE, 0)
    lim(resource.RLIMIT_NPROC, limits.nproc)


def drop(caps: Capabilities, uid: int, *, dumpable: bool = True) -> None:
    """Become `uid` for good, then lock the syscall surface."""
    if caps.uid_drop:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if not dumpable:
        # Keeps same-uid processes out of /proc/<pid>/mem of the trusted half.
        linux.prctl(linux.PR_SET_DUMPABLE, 0)
    if caps.seccomp:
        seccomp.install()
