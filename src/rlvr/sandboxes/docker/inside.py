"""The sandbox container's command: take one job on stdin, run it with the ordinary
runner, relay what comes out to stdout (`protocol`), exit. The container is then gone.

This process is the container's pid 1, which is what keeps it standing: signals from
inside the container reach pid 1 only if it handles them, and SIGKILL never does; it
is not dumpable, so the job (same uid, no capabilities) can neither ptrace it nor read
its memory or environment. The job runs in a child with rlimits, first in line for
the OOM killer, under seccomp filters (`DockerPrivileges`).

One uid for everything (the container has no capability to change it), so the split
runner's two halves are kept apart otherwise: the test half is not dumpable, and the
program half may not signal it, change its limits or open a pidfd on it.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import select
import struct
import sys
import time
from typing import Any

from rlvr.sandboxes.docker import protocol
from rlvr.sandboxes.local import linux, seccomp
from rlvr.sandboxes.runner import core, entry

EXIT_GRACE_S = 1.0
OOM_JOB = b"1000"
EXIT_INTERNAL = 70

# Syscalls whose first argument names a process; the program half may not aim them at
# the test half (its parent). kill also takes groups and everyone: 0, -pgid, -1.
_AIMED = {
    "kill": 62,
    "tkill": 200,
    "tgkill": 234,
    "rt_sigqueueinfo": 129,
    "rt_tgsigqueueinfo": 297,
    "prlimit64": 302,
    "sched_setaffinity": 203,
    "pidfd_open": 434,
}
_SYS_KILL = _AIMED["kill"]


def guard_filter(protected: int) -> bytes:
    """BPF: refuse (EPERM) the calls above when their first argument is `protected`,
    and kill() aimed at its group (`protected` leads it), at our own group or at all.
    Laid out with labels; a jump names the label it goes to, or None (the next line)."""
    mask = 0xFFFFFFFF
    ld, jeq, ret = 0x20, 0x15, 0x06
    lines: list[tuple[int, str | None, str | None, int, str | None]] = [  # op, jt, jf, k, label
        (ld, None, None, 4, None),
        (jeq, "nr", None, seccomp.AUDIT_ARCH_X86_64, None),
        (ret, None, None, seccomp.SECCOMP_RET_KILL_PROCESS, None),
        (ld, None, None, 0, "nr"),
        *[(jeq, "aimed", None, nr, None) for nr in sorted(_AIMED.values())],
        (ret, None, None, seccomp.SECCOMP_RET_ALLOW, "allow"),
        (jeq, None, "arg", _SYS_KILL, "aimed"),
        (ld, None, None, 16, None),
        (jeq, "deny", None, 0, None),
        (jeq, "deny", None, mask, None),
        (ld, None, None, 16, "arg"),
        (jeq, "deny", None, protected & mask, None),
        (jeq, "deny", "allow_end", (-protected) & mask, None),
        (ret, None, None, seccomp.SECCOMP_RET_ALLOW, "allow_end"),
        (ret, None, None, seccomp.SECCOMP_RET_ERRNO | errno.EPERM, "deny"),
    ]
    where = {label: i for i, (*_, label) in enumerate(lines) if label}

    def jump(frm: int, label: str | None) -> int:
        return 0 if label is None else where[label] - frm - 1

    return b"".join(struct.pack("=HBBI", op, jump(i, jt), jump(i, jf), k) for i, (op, jt, jf, k, _) in enumerate(lines))


class DockerPrivileges:
    """`core.Privileges` in a container: the uid is already unprivileged and cannot
    change; what is left is seccomp and dumpability."""

    def drop_untrusted(self) -> None:
        _filters()
        # The parent is the runner (the split job's test half) or pid 1, itself guarded.
        _install(guard_filter(os.getppid()))

    def drop_trusted(self) -> None:
        linux.prctl(linux.PR_SET_DUMPABLE, 0)
        os.chdir("/")  # out of the /tmp the program writes to
        _filters()


def _filters() -> None:
    seccomp.install("zygote")
    seccomp.install("job")


def _install(code: bytes) -> None:
    """Install one more seccomp filter (struct sock_fprog: length, padding, pointer)."""
    buf = ctypes.create_string_buffer(code, len(code))
    prog = struct.pack("=HxxxxxxQ", len(code) // 8, ctypes.addressof(buf))
    holder = ctypes.create_string_buffer(prog, len(prog))
    linux.prctl_ptr(linux.PR_SET_SECCOMP, seccomp.SECCOMP_MODE_FILTER, ctypes.addressof(holder))


def set_limits(limits: dict[str, Any]) -> None:
    """The job's rlimits. No RLIMIT_NPROC: it counts the uid's processes across every
    container on the host; the container's pids limit bounds the job instead."""
    mib = 1024 * 1024
    for which, value in (
        (resource.RLIMIT_CPU, int(limits["cpu_s"])),
        (resource.RLIMIT_AS, int(limits["memory_mb"]) * mib),
        (resource.RLIMIT_FSIZE, int(limits["fsize_mb"]) * mib),
        (resource.RLIMIT_NOFILE, int(limits["nofile"])),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(which, (value, value))


def _child(limits: dict[str, Any], fds: tuple[int, int, int, int]) -> None:
    code = EXIT_INTERNAL
    try:
        os.setsid()
        # Undo what pid 1 set for itself: a non-dumpable process cannot even open its own
        # /proc files (they turn root's).
        linux.prctl(linux.PR_SET_DUMPABLE, 1)
        with open("/proc/self/oom_score_adj", "wb") as f:
            f.write(OOM_JOB)  # raising it needs no privilege; the job goes first, never pid 1
        os.chdir("/tmp")
        for target, fd in zip((0, 1, 2, core.CHANNEL_FD), fds, strict=True):
            os.dup2(fd, target)
        core.close_fds_except(0, 1, 2, core.CHANNEL_FD)
        set_limits(limits)
        code = entry.main(DockerPrivileges())
        sys.stdout.flush()
        sys.stderr.flush()
    except MemoryError:
        code = core.EXIT_MEMORY
    except BaseException as exc:
        os.write(2, f"sandbox: {type(exc).__name__}: {exc}\n".encode()[:2000])
    os._exit(code)


class Relay:
    """Feeds the job's data in and relays its outputs, until the runner has exited and
    its outputs are closed (or a grace period after its exit has passed)."""

    def __init__(self, pid: int, data: bytes, data_w: int, readers: dict[int, bytes]) -> None:
        self.pid, self.data, self.data_w, self.readers = pid, memoryview(data), data_w, readers
        self.status: tuple[int, float] | None = None
        self.exited_at = 0.0
        os.set_blocking(data_w, False)

    def send(self, tag: bytes, payload: bytes) -> None:
        out = memoryview(protocol.message(tag, payload))
        while out:
            out = out[os.write(1, out) :]

    def run(self) -> tuple[int, float]:
        while self.status is None or (self.readers and time.monotonic() < self.exited_at + EXIT_GRACE_S):
            writers = [self.data_w] if self.data else []
            timeout = 0.05 if self.status is None else max(0.0, self.exited_at + EXIT_GRACE_S - time.monotonic())
            readable, writable, _ = select.select(list(self.readers), writers, [], timeout)
            if writable:
                self._feed()
            for fd in readable:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    self.send(self.readers[fd], chunk)
                else:
                    del self.readers[fd]
                    os.close(fd)
            self._reap()
        assert self.status is not None
        return self.status

    def _feed(self) -> None:
        try:
            self.data = self.data[os.write(self.data_w, self.data[: 1 << 16]) :]
        except BrokenPipeError:
            self.data = memoryview(b"")  # the job stopped reading: its business
        if not self.data:
            os.close(self.data_w)

    def _reap(self) -> None:
        """Reap every child (pid 1 inherits the job's orphans); note the runner's end."""
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                self.status = (status, usage.ru_utime + usage.ru_stime)
                self.exited_at = time.monotonic()


def main() -> int:
    linux.prctl(linux.PR_SET_DUMPABLE, 0)
    try:
        limits, data = protocol.read_request(0)
    except (EOFError, ValueError, OSError) as exc:
        # No job came (the host went away while this container waited in its pool).
        print(f"sandbox: no job: {exc}", file=sys.stderr)
        return 0
    data_r, data_w = os.pipe()
    pipes = [os.pipe() for _ in range(3)]
    pid = os.fork()
    if pid == 0:
        os.close(data_w)
        for r, _ in pipes:
            os.close(r)
        _child(limits, (data_r, pipes[0][1], pipes[1][1], pipes[2][1]))
    os.close(data_r)
    for _, w in pipes:
        os.close(w)
    tags = (protocol.STDOUT, protocol.STDERR, protocol.CHANNEL)
    relay = Relay(pid, data, data_w, {r: tag for (r, _), tag in zip(pipes, tags, strict=True)})
    status, cpu_s = relay.run()
    exit_: dict[str, Any] = {"code": None, "signal": None, "cpu_s": cpu_s}
    if os.WIFEXITED(status):
        exit_["code"] = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        exit_["signal"] = os.WTERMSIG(status)
    relay.send(protocol.EXIT, json.dumps(exit_).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
