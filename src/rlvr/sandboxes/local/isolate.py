"""Process isolation of the local backend: what the zygote sets up once, and what each
job's process does between fork and running untrusted code.

Isolation levels (the `min_isolation` setting), from weakest:

- ``none``: no sandbox at all.
- ``rlimits``: own session, killed as a process group at its deadline, rlimits on CPU,
  address space, processes, file size and open files; but the host's filesystem,
  network and uid.
- ``namespaces``: rlimits, plus PID, mount, IPC, UTS and network namespaces apart
  from the host's, a read-only filesystem (/dev/shm and /var/tmp included) with a
  private tmpfs at /tmp as the only writable place, private home directories hidden,
  and a per-job unprivileged uid (so RLIMIT_NPROC is per job: a fork bomb cannot
  starve a concurrent job).
- ``full``: namespaces, plus a seccomp allow list and no_new_privs; memory and
  processes accounted per job (a cgroup per slot, see `rlvr.sandboxes.local.cgroups`):
  what all of a job's processes and its /tmp use together is bounded, not only each
  process's address space; a minimal root built for jobs instead of the host's
  filesystem (`rlvr.sandboxes.local.jobroot`: no /run, /sys or host directories); and
  a zygote that is pid 1 of its own PID namespace, so /proc shows no host pid. A host
  where any of these cannot be had stays at ``namespaces``.

The zygote probes once at start-up what the kernel allows and reports the level reached.

What is per job and what is reused, and why that is safe: every job is pid 1 of a new
PID namespace, so all its processes die with it. Creating and destroying the other
namespaces costs more than the fork itself, so they are made once per *slot* (the
zygote runs at most one job per slot at a time) and joined with setns: an empty network
namespace, and a mount namespace whose /tmp is a tmpfs of its own. A slot's /tmp is
checked after every job and the namespace is thrown away if the job left anything in
it, so the next job (which gets the same uid) starts from an empty /tmp. Jobs share the
zygote's own IPC and UTS namespaces, which the host does not see into: after the uid
drop a job cannot set the hostname, and the seccomp filter refuses to create SysV or
POSIX message-queue objects, so nothing can be left there for a later job. Without
seccomp, each job gets a new IPC namespace instead.

The trusted half of a split job (`rlvr.sandboxes.runner.split`) joins one more mount
namespace, made once by the zygote and shared by all: the same read-only view with an
empty, read-only /tmp, so it has no writable directory in common with the program.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Callable
from typing import Any

from rlvr.sandboxes.local import cgroups, jobroot, linux, seccomp
from rlvr.sandboxes.local.control import JobLimits

# Jobs get uids from here up: a range of UIDS_PER_ZYGOTE per zygote (see
# `zygote.uid_base`: by its pid on a host, so concurrent zygotes' ranges are disjoint),
# 2 * slot number into it (+1 for the trusted half of a split job); a uid is reused only
# once its job, and so every process and file it owned, is gone.
UID_BASE = 1_000_000
UIDS_PER_ZYGOTE = 512
MAX_SLOTS = UIDS_PER_ZYGOTE // 2

# Directories whose contents a job never sees (credentials, caches, data sets, the
# service's own checkout); anything the interpreter needs under them is bound back.
# (Only where the minimal root cannot be built.)
MASKED_DIRS = ("/root", "/home", "/work", "/srv", "/mnt", "/media", "/run/secrets")
# Where the zygote builds the jobs' root before it pivots into it: its own tmpfs, over
# the host's /tmp in the zygote's mount namespace only.
ROOT_STAGING = "/tmp"
OOM_JOB, OOM_ZYGOTE = b"1000", b"-1000"
# Fds the zygote keeps for jobs to use after fork are moved at or above this, clear of
# the fds 0-3 a job's process sets up first.
MIN_KEPT_FD = 10
MAX_FD = 1 << 16
# What the zygote unshares for itself at start-up (beyond its mount namespace): jobs
# share these, apart from the host's.
ZYGOTE_FLAGS = linux.CLONE_NEWIPC | linux.CLONE_NEWUTS


class Capabilities:
    """What the zygote achieved; sent to clients and shown by `isolation_report`."""

    def __init__(self, root: bool = False) -> None:
        self.root = root
        self.mount_ns = False
        self.readonly_root = False
        self.masked: list[str] = []
        self.pid_ns = False
        self.net_ns = False
        self.ipc_ns = False
        self.uts_ns = False
        self.uid_drop = False
        self.seccomp = False
        self.cgroups = ""  # "v1" or "v2" when each slot has its memory and pids cgroup
        self.minimal_root = False  # jobs see `jobroot`'s filesystem, not the host's
        self.own_pid_ns = False  # the zygote is pid 1 of its own PID namespace: /proc shows no host pid
        # An fd (>= MIN_KEPT_FD) of the mount namespace the trusted half of split jobs
        # joins: the jobs' view with an empty, read-only /tmp; -1 if there is none.
        self.tests_mnt = -1
        # An fd (>= MIN_KEPT_FD) of a detached, writable copy of the zygote's /proc,
        # where a job's process, still root, sets its own oom_score_adj: the /proc jobs
        # see is read-only. -1 if there is none (a job then keeps the zygote's).
        self.writable_proc = -1
        # A job's first steps are taken by `_jobstart` (C), not in Python (`jobstart`).
        self.native_start = False
        self.errors: list[str] = []
        # Import path entries jobs do not get (`zygote.hidden_paths`).
        self.hidden_import_paths: list[str] = []

    def job_flags(self) -> int:
        """Namespaces each job's clone creates."""
        flags = linux.CLONE_NEWPID if self.pid_ns else 0
        if self.pid_ns and not self.seccomp:
            flags |= linux.CLONE_NEWIPC  # nothing else stops IPC objects outliving a job
        return flags

    @property
    def level(self) -> str:
        if not (self.root and self.mount_ns and self.readonly_root and self.pid_ns and self.net_ns):
            return "rlimits"
        if self.tests_mnt < 0:
            return "rlimits"  # the tests of split jobs would share /tmp with the program
        if not (self.ipc_ns and self.uid_drop):
            return "rlimits"
        return "full" if self.seccomp and self.cgroups and self.minimal_root and self.own_pid_ns else "namespaces"

    def to_dict(self) -> dict[str, Any]:
        namespaces = [
            n
            for n, ok in (
                ("pid", self.pid_ns),
                ("mount", self.mount_ns),
                ("ipc", self.ipc_ns),
                ("net", self.net_ns),
                ("uts", self.uts_ns),
            )
            if ok
        ]
        return {
            "isolation": self.level,
            "namespaces": namespaces,
            "readonly_root": self.readonly_root,
            "private_tmp": self.mount_ns,
            "tests_private_tmp": self.tests_mnt >= 0,
            "masked_dirs": self.masked,
            "uid_drop": self.uid_drop,
            "per_job_uid": self.uid_drop,
            "seccomp": self.seccomp,
            "seccomp_policy": "allow-list" if self.seccomp else None,
            "cgroups": self.cgroups or None,
            "per_job_memory": bool(self.cgroups),
            "minimal_root": self.minimal_root,
            "host_pids_hidden": self.own_pid_ns,
            "hidden_import_paths": self.hidden_import_paths,
            "job_start": "native" if self.native_start else "python",
            "errors": self.errors,
        }


def needed_paths() -> list[str]:
    """What the in-sandbox interpreter must still read: its prefix and import path."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    # The interpreter by the path programs see in sys.executable: a virtualenv's (its
    # pyvenv.cfg included), which `python -S` does not take for sys.prefix.
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    paths.add(venv if os.path.exists(os.path.join(venv, "pyvenv.cfg")) else os.path.dirname(sys.executable))
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    # The job environment's node packages (`rlvr.sandboxes.jobenv`), read-only like the rest.
    paths.update(p for p in os.environ.get("NODE_PATH", "").split(os.pathsep) if p and os.path.isdir(p))
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


def setup_zygote(hidden: list[str], uids: range, own_pid_ns: bool, pch: str | None = None) -> Capabilities:
    """Give the zygote (and so every job) a private, read-only view of the filesystem
    (the minimal root of `jobroot`, else the host's with private dirs masked), and IPC
    and UTS namespaces apart from the host's."""
    caps = Capabilities(root=os.geteuid() == 0)
    caps.own_pid_ns = own_pid_ns
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
    try:
        linux.unshare(ZYGOTE_FLAGS)
        caps.uts_ns = True
    except OSError as exc:
        caps.errors.append(f"ipc/uts: {exc}")
    needed = needed_paths()
    try:
        linux.mount("tmpfs", ROOT_STAGING, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=16m,mode=755")
        jobroot.build(ROOT_STAGING, needed, uids, pch)
        jobroot.enter(ROOT_STAGING)
        caps.minimal_root = True
    except OSError as exc:
        caps.errors.append(f"minimal root: {exc}")
        with contextlib.suppress(OSError):
            linux.umount2(ROOT_STAGING, linux.MNT_DETACH)  # what was built of it
        for dir_ in MASKED_DIRS:
            try:
                _mask(dir_, needed, caps)
            except OSError as exc:
                caps.errors.append(f"mask {dir_}: {exc}")
    for path in hidden:
        with contextlib.suppress(OSError):
            _hide(path)
    try:
        jobroot.mount_proc()
    except OSError as exc:
        caps.errors.append(f"proc: {exc}")
    try:
        fd = jobroot.writable_proc() if caps.minimal_root else linux.open_tree_clone("/proc")
        caps.writable_proc = _kept_fd(fd)
    except OSError as exc:
        caps.errors.append(f"oom_score_adj of jobs: {exc}")
    try:
        linux.mount_setattr_recursive("/", linux.MOUNT_ATTR_RDONLY | linux.MOUNT_ATTR_NOSUID)
        caps.readonly_root = True
    except OSError as exc:
        caps.errors.append(str(exc))
        return caps
    try:
        caps.tests_mnt = _tests_namespace()
    except OSError as exc:
        caps.errors.append(f"tests namespace: {exc}")
    return caps


def _tests_namespace() -> int:
    """The mount namespace for the trusted half of split jobs: the zygote's read-only
    view, with an empty read-only tmpfs on /tmp (not the host's /tmp, which it covers)."""

    def empty_tmp() -> None:
        flags = linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC
        linux.mount("tmpfs", "/tmp", "tmpfs", flags, "size=4k,nr_inodes=16,mode=555")

    return _kept_fd(_new_ns(linux.CLONE_NEWNS, "mnt", empty_tmp))


def _kept_fd(fd: int) -> int:
    """`fd` moved to MIN_KEPT_FD or above (and closed where it was)."""
    try:
        return linux.dup_cloexec_above(fd, MIN_KEPT_FD)
    finally:
        os.close(fd)


def enter_tests_namespace(caps: Capabilities) -> None:
    """Move the trusted half of a split job out of the /tmp it shares with the program;
    its working directory goes with it, to the read-only root."""
    if caps.tests_mnt >= 0:
        linux.setns(caps.tests_mnt, linux.CLONE_NEWNS)
        forget_tests_namespace(caps)
    os.chdir("/")


def forget_tests_namespace(caps: Capabilities) -> None:
    """Close the job's copy of the fd: no process that runs the program may hold it."""
    try:
        os.close(caps.tests_mnt)
    except OSError:
        pass  # already closed (a split job's program half closes all its fds)


def _new_ns(flag: int, name: str, inside: Callable[[], None] | None = None) -> int:
    """An fd of a fresh namespace of one kind, set up by `inside()` while the zygote
    is briefly in it; the zygote then returns to its own."""
    own = os.open(f"/proc/self/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        linux.unshare(flag)
        try:
            if inside is not None:
                inside()
            return os.open(f"/proc/self/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            linux.setns(own, flag)
    finally:
        os.close(own)


class Slot:
    """One of the zygote's places for a running job (at most one at a time): the job's
    uids (`uid` for the program, `uid + 1` for the trusted half of a split job) and the
    namespaces it joins, an empty network namespace and a mount namespace with its own
    /tmp (`tmp` is an fd of that /tmp, for checking it is empty after a job)."""

    def __init__(self, caps: Capabilities, number: int, uid: int, cgroup: cgroups.SlotCgroup | None) -> None:
        self.caps, self.number, self.uid, self.cgroup = caps, number, uid, cgroup
        self.net = _new_ns(linux.CLONE_NEWNET, "net") if caps.net_ns else -1
        self.mnt = self.tmp = -1
        self.tmp_mb = 0
        self.empty_size = -1

    def prepare(self, limits: JobLimits) -> None:
        """Set the slot's cgroup limits, and make sure the mount namespace exists, with
        a /tmp of `limits.tmp_mb`."""
        if self.cgroup is not None:
            self.cgroup.configure(limits.memory_mb, limits.nproc)
        tmp_mb = limits.tmp_mb
        if self.mnt >= 0 and self.tmp_mb == tmp_mb:
            return
        self.drop_mount_ns()
        if not self.caps.mount_ns:
            return
        tmp: list[int] = []

        def mount_tmp() -> None:
            _private_tmp(tmp_mb)
            tmp.append(os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))

        self.mnt = _new_ns(linux.CLONE_NEWNS, "mnt", mount_tmp)
        self.tmp, self.tmp_mb = tmp[0], tmp_mb
        self.empty_size = os.fstat(self.tmp).st_size

    def after_job(self) -> None:
        """Keep the mount namespace only if the job left /tmp empty. A tmpfs directory's
        size counts its entries (and drops back as they are removed), so one fstat
        tells, where listing it would cost several calls."""
        if self.tmp < 0:
            return
        try:
            clean = os.fstat(self.tmp).st_size == self.empty_size
        except OSError:
            clean = False
        if not clean:
            self.drop_mount_ns()

    def drop_mount_ns(self) -> None:
        for fd in (self.mnt, self.tmp):
            if fd >= 0:
                os.close(fd)
        self.mnt = self.tmp = -1


def probe(caps: Capabilities) -> None:
    """Try, in a throw-away child, each per-job step, and record which work."""
    seccomp.prepare()
    try:
        os.close(_new_ns(linux.CLONE_NEWNET, "net"))
        caps.net_ns = True
    except OSError as exc:
        caps.errors.append(f"netns: {exc}")
    try:
        pid = linux.clone_fork(linux.CLONE_NEWPID | linux.CLONE_NEWIPC)
    except OSError as exc:
        caps.errors.append(str(exc))
        return
    if pid == 0:
        code = 0
        try:
            code |= 1 if os.getpid() == 1 else 0
            if caps.mount_ns:
                os.close(_new_ns(linux.CLONE_NEWNS, "mnt", lambda: _private_tmp(16)))
            code |= 2
            os.setgroups([])
            os.setresgid(UID_BASE - 1, UID_BASE - 1, UID_BASE - 1)
            os.setresuid(UID_BASE - 1, UID_BASE - 1, UID_BASE - 1)
            code |= 4
            seccomp.install("zygote")
            seccomp.install("job")
            code |= 8
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    bits = os.waitstatus_to_exitcode(status)
    caps.pid_ns, caps.uid_drop, caps.seccomp = bool(bits & 1), bool(bits & 4), bool(bits & 8)
    caps.mount_ns = caps.mount_ns and bool(bits & 2)
    # Jobs reach no IPC object of the host's (the zygote has its own namespace) nor of
    # each other's (seccomp refuses to create one, or each job has a namespace).
    caps.ipc_ns = caps.uts_ns and caps.pid_ns


def own_pid_namespace() -> bool:
    """Become pid 1 of a new PID namespace, so that the /proc jobs see shows no host
    pid. The process the client started stays as the parent, holding nothing but a
    pipe, and exits with the new zygote's status; the zygote dies with it (PDEATHSIG)."""
    try:
        linux.unshare(linux.CLONE_NEWPID)
    except OSError:
        return False
    alive_r, alive_w = os.pipe()
    pid = os.fork()
    if pid != 0:
        os.closerange(3, alive_w)
        os.closerange(alive_w + 1, MAX_FD)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)
    os.close(alive_w)
    linux.prctl(linux.PR_SET_PDEATHSIG, 9)
    if select.select([alive_r], [], [], 0)[0]:
        os._exit(1)  # the parent died before PDEATHSIG was armed
    os.close(alive_r)
    return True


def setup_cgroups() -> tuple[cgroups.JobCgroups | None, str]:
    """The zygote's per-slot cgroups if this host lets it make them, else why not.
    Called while the zygote still sees the host's filesystem."""
    if os.geteuid() != 0 or not linux.SUPPORTED:
        return None, "cgroups: not root on Linux"
    try:
        made = cgroups.JobCgroups()
    except (OSError, ValueError) as exc:
        return None, f"cgroups: {exc}"
    try:
        trial = made.slot(MAX_SLOTS)  # the files a job needs are there and writable
        trial.configure(64, 8)
    except (OSError, ValueError) as exc:
        made.remove()
        return None, f"cgroups: {exc}"
    made.slots.remove(trial)
    trial.close()
    return made, ""


def _private_tmp(size_mb: int) -> None:
    # /dev/shm and /var/tmp stay read-only like the rest of the filesystem.
    linux.mount("tmpfs", "/tmp", "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, f"size={size_mb}m,mode=1777,nr_inodes=8192")


def set_oom_score_adj(value: bytes, proc: int = -1) -> None:
    """Who the kernel's OOM killer takes first: jobs (`OOM_JOB`), never the zygote
    (`OOM_ZYGOTE`), whose death would fail every job in flight as the sandbox's own.
    `proc`: an fd of a writable /proc (`Capabilities.writable_proc`), else /proc."""
    try:
        if proc >= 0:
            fd = os.open("self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC, dir_fd=proc)
        else:
            fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, value)
    except OSError:
        pass  # not root (the zygote), or an old kernel: the default order
    finally:
        os.close(fd)


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
        seccomp.install("job")  # on top of the zygote's, which the job inherited
