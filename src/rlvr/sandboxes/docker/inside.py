"""The sandbox container's command: take one job on stdin, run it with the ordinary
runner, relay what comes out to stdout (`protocol`), exit. The container is then gone.

This process is the container's pid 1, which is what keeps it standing: signals from
inside the container reach pid 1 only if it handles them, and SIGKILL never does. It
starts as root with CAP_SETUID, CAP_SETGID and CAP_SETPCAP only (`containers`), forks
the job's runner, and drops to a uid of its own. The runner then drops as the local
backend's does (`DockerPrivileges`): every process that runs the program to the job's
uid, the test half of a split job to the next uid, each with no capability left (none
even in its bounding set) and no_new_privs. So the program half and the test half are
apart by the kernel's own permission checks: the program can signal, trace, limit or
read the /proc files of no process but its own uid's, by any route (kill, pidfd, SIGIO,
prlimit, ptrace...), and it runs no line before its own drop, when the test half is
still root or already on its own uid.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import select
import sys
import time
from dataclasses import dataclass
from typing import Any

from rlvr.sandboxes.docker import protocol
from rlvr.sandboxes.local import linux, pacing, seccomp
from rlvr.sandboxes.runner import core, entry

EXIT_GRACE_S = 1.0
OOM_JOB = b"1000"
EXIT_INTERNAL = 70
# The uids (and gids) a container's processes take, above the program's, which the
# host names in its request (`containers.job_ids`): the test half of a split job, pid 1.
TESTS_ID_OFFSET = 1
RELAY_ID_OFFSET = 2
PR_CAPBSET_DROP = 24
# Capability numbers to drop from the bounding set: past the kernel's last one,
# PR_CAPBSET_DROP says EINVAL.
MAX_CAPABILITIES = 64


@dataclass(frozen=True)
class Ids:
    """A uid and gid pair a process drops to."""

    uid: int
    gid: int

    def plus(self, offset: int) -> Ids:
        return Ids(self.uid + offset, self.gid + offset)


def drop_to(ids: Ids) -> None:
    """Become `ids` for good: no supplementary groups, no capability in any set (the
    bounding set first, while CAP_SETPCAP is still held). Checked, so that a container
    started without the capabilities fails its job instead of running it as root."""
    if ids.uid <= 0 or ids.gid <= 0:
        raise PermissionError(f"refusing to run a job as {ids}")
    for cap in range(MAX_CAPABILITIES):
        try:
            linux.prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            break
    os.setgroups([])
    os.setresgid(ids.gid, ids.gid, ids.gid)
    os.setresuid(ids.uid, ids.uid, ids.uid)
    if os.getresuid() != (ids.uid,) * 3 or os.getresgid() != (ids.gid,) * 3 or os.getgroups():
        raise PermissionError(f"could not drop to {ids}")


class DockerPrivileges:
    """`core.Privileges` in a container: the runner starts as root with only the
    capabilities to change uid, and each half drops to its own uid."""

    def __init__(self, program: Ids) -> None:
        self.program = program

    def drop_untrusted(self) -> None:
        # Before the drop, while the file is still root's: the program's processes go
        # first to the OOM killer, never the test half or pid 1 (raising it needs no
        # privilege; lowering it would).
        with open("/proc/self/oom_score_adj", "wb") as f:
            f.write(OOM_JOB)
        drop_to(self.program)
        # The uid change left the process non-dumpable, which makes its own /proc files
        # root's, out of the program's reach (programs read /proc/self). Dumpable, they
        # are its uid's, which no other process of the container has.
        linux.prctl(linux.PR_SET_DUMPABLE, 1)
        _filters()

    def drop_trusted(self) -> None:
        drop_to(self.program.plus(TESTS_ID_OFFSET))
        linux.prctl(linux.PR_SET_DUMPABLE, 0)
        os.chdir("/")  # out of the /tmp the program writes to
        _filters()


def _filters() -> None:
    seccomp.install("zygote")
    seccomp.install("job")


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


def _child(program: Ids, limits: dict[str, Any], fds: tuple[int, int, int, int]) -> None:
    code = EXIT_INTERNAL
    try:
        os.setsid()
        os.chdir("/tmp")
        for target, fd in zip((0, 1, 2, core.CHANNEL_FD), fds, strict=True):
            os.dup2(fd, target)
        core.close_fds_except(0, 1, 2, core.CHANNEL_FD)
        set_limits(limits)
        code = entry.main(DockerPrivileges(program))
        sys.stdout.flush()
        sys.stderr.flush()
    except MemoryError:
        code = core.EXIT_MEMORY
    except BaseException as exc:
        os.write(2, f"sandbox: {type(exc).__name__}: {exc}\n".encode()[:2000])
    os._exit(code)


def send(tag: bytes, payload: bytes) -> None:
    """One message to the host, on this container's stdout."""
    out = memoryview(protocol.message(tag, payload))
    while out:
        out = out[os.write(1, out) :]


class Relay:
    """Feeds the job's data in and relays its outputs, until the runner has exited and
    its outputs are closed (or a grace period after its exit has passed). A call or
    values job's tests' inputs (`steps`) go in one at a time, each once the record
    before it has passed here (`pacing.Lockstep`); until then they are in this
    process alone, out of the job's reach."""

    def __init__(self, pid: int, data: bytes, data_w: int, readers: dict[int, bytes], steps: list[bytes]) -> None:
        self.pid, self.data, self.data_w, self.readers = pid, memoryview(data), data_w, readers
        self.status: tuple[int, float] | None = None
        self.exited_at = 0.0
        # Only the tests' order matters here: the host keeps their time.
        clock = pacing.TestClock(float("inf"), len(steps))
        self.lockstep = pacing.Lockstep(steps, clock) if steps else None
        os.set_blocking(data_w, False)
        if not self.data:
            self._feed()  # no data: the runner sees its end at once

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
                    send(self.readers[fd], chunk)
                    if self.readers[fd] == protocol.CHANNEL:
                        self._release(chunk)
                else:
                    del self.readers[fd]
                    os.close(fd)
            self._reap()
        assert self.status is not None
        return self.status

    def _feed(self) -> None:
        try:
            self.data = self.data[os.write(self.data_w, self.data[: 1 << 16]) :]
        except BlockingIOError:
            return
        except BrokenPipeError:
            self.data = memoryview(b"")  # the job stopped reading: its business
            self.lockstep = None
        if not self.data and (self.lockstep is None or self.lockstep.done) and self.data_w >= 0:
            os.close(self.data_w)
            self.data_w = -1

    def _release(self, chunk: bytes) -> None:
        """Send the inputs of the tests that the records so far have made due, right
        away: the runner waits for them."""
        if self.lockstep is None or self.data_w < 0:
            return
        self.lockstep.clock.feed(chunk, 0.0)
        more = self.lockstep.take()
        if more:
            self.data = memoryview(bytes(self.data) + more)
            self._feed()

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
    # First, so that the host knows this image drops uids (`protocol.HELLO`).
    send(protocol.HELLO, protocol.VERSION)
    try:
        limits = protocol.read_header(0)
        program = Ids(int(limits["uid"]), int(limits["gid"]))
    except (EOFError, ValueError, OSError, KeyError, TypeError) as exc:
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
        _child(program, limits, (data_r, pipes[0][1], pipes[1][1], pipes[2][1]))
    # Nothing here needs root any more; a uid of its own keeps the job from it.
    drop_to(program.plus(RELAY_ID_OFFSET))
    linux.prctl(linux.PR_SET_DUMPABLE, 0)
    os.close(data_r)
    for _, w in pipes:
        os.close(w)
    # Read only now: the job, forked above, has no copy of it in its memory (a call or
    # values job's tests' inputs go in one at a time, `Relay`). A request cut short
    # gives the job no data, whose runner then refuses it.
    try:
        data, steps = protocol.split_steps(protocol.read_data(0), limits.get("steps"))
    except (EOFError, ValueError, OSError, TypeError) as exc:
        print(f"sandbox: no job data: {exc}", file=sys.stderr)
        data, steps = b"", []
    tags = (protocol.STDOUT, protocol.STDERR, protocol.CHANNEL)
    relay = Relay(pid, data, data_w, {r: tag for (r, _), tag in zip(pipes, tags, strict=True)}, steps)
    status, cpu_s = relay.run()
    exit_: dict[str, Any] = {"code": None, "signal": None, "cpu_s": cpu_s}
    if os.WIFEXITED(status):
        exit_["code"] = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        exit_["signal"] = os.WTERMSIG(status)
    send(protocol.EXIT, json.dumps(exit_).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
