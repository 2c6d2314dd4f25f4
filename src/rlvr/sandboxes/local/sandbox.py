"""Client of the local backend: starts this process's zygote, sends it jobs, drains
each job's pipes concurrently and with caps, enforces the wall deadline.

Each verifier worker process has its own zygote, started on first use by exec (never
fork) of a fresh interpreter (`zygote_command`), so it is single-threaded and inherits
nothing from the service. It dies with its worker (PR_SET_PDEATHSIG, and EOF on the
control socket), and the worker starts a fresh one if it finds it dead.

Each job has three fds: a socket that carries the job in and its records out (the
channel), and pipes for stdout and stderr.
"""

from __future__ import annotations

# `_socket` for the channels: `socket.socket`'s Python layer costs the worker a few
# percent of its time per job for nothing a channel uses.
import _socket
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from rlvr.sandboxes.base import (
    IsolationReport,
    Limits,
    OnResult,
    RunResult,
    RunSpec,
    SandboxUnavailable,
    Status,
)
from rlvr.sandboxes.config import SandboxConfig
from rlvr.sandboxes.jobenv import JobEnvironment
from rlvr.sandboxes.local import control, pacing
from rlvr.sandboxes.local.wiring import control_limits, wire_data, zygote_command, zygote_env
from rlvr.sandboxes.runner import audit, core, python

START_TIMEOUT_S = 60.0
# A job's wall time counts from when its runner takes it (`core.ACCEPTED`): its fork,
# and reading a large frame, must not eat into the program's own time. It has this
# long on top to be taken at all.
ACCEPT_GRACE_S = 2.0
EXIT_GRACE_S = 1.0
CLOSE_GRACE_S = 2.0


@dataclass
class _JobState:
    """One `RunSpec` on its way through the zygote: what is left to send, its fds and
    what came out of them, its exit and deadlines."""

    spec: RunSpec
    id: int
    data: memoryview
    fds: dict[str, int] = field(default_factory=dict)
    channel: _socket.socket | None = None
    out: dict[str, bytearray] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    accepted_at: float = 0.0
    deadline: float = 0.0
    exit: dict[str, Any] | None = None
    exited_at: float = 0.0
    killed: Status | None = None
    # A result known without running (a Python program that does not compile).
    early: core.Record | None = None
    infra: str | None = None
    done: bool = False
    lines: int = 0  # on the channel so far
    # The tests' clock, for a job whose tests run in its program's process (`pacing`),
    # and their inputs, which go as each test's clock starts.
    clock: pacing.TestClock | None = None
    lockstep: pacing.Lockstep | None = None


class LocalSandbox:
    backend = "local"

    def __init__(self, config: SandboxConfig | None = None, *, native_start: bool = True) -> None:
        """`config`: how many jobs, and how much of their memory limits, may be in flight
        at once. `native_start`: jobs start through the `_jobstart` extension where it was
        built (False: always the same steps in Python; see `rlvr.sandboxes.local.jobstart`)."""
        config = config or SandboxConfig()
        self.max_jobs_in_flight = config.max_jobs_in_flight
        self.memory_in_flight_mb = config.memory_in_flight_mb
        self.job_env = config.job_env
        self._native_start = native_start
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._hello: dict[str, Any] = {}
        self._owner = os.getpid()
        self._next_id = 0
        # When `_pump` must next look at every job in flight (None: to be worked out).
        self._due: float | None = None
        self._committed_mb = 0  # the memory limits of the jobs in flight, added up

    # ------------------------------------------------------------ zygote lifecycle

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._owner == os.getpid()

    def _start(self) -> None:
        self.close()
        self._owner = os.getpid()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                zygote_command(
                    "--fd",
                    str(theirs.fileno()),
                    "--parent",
                    str(os.getpid()),
                    *(() if self._native_start else ("--python-start",)),
                    job_env=self.job_env,
                ),
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                env=zygote_env(self.job_env),
                cwd="/",
            )
        except OSError as exc:
            ours.close()
            raise SandboxUnavailable(f"could not start the zygote: {exc}") from exc
        finally:
            theirs.close()
        self._sock = ours
        ours.settimeout(START_TIMEOUT_S)
        try:
            packet = ours.recv(65536)
            hello = json.loads(packet[1:]) if packet[:1] == control.HELLO_TAG else None
        except (OSError, ValueError) as exc:
            self.close()
            raise SandboxUnavailable(f"zygote did not start: {exc}") from exc
        if type(hello) is not dict:
            self.close()
            raise SandboxUnavailable("zygote did not start (no hello)")
        ours.settimeout(None)
        ours.setblocking(False)
        self._hello = hello

    def _ensure(self) -> socket.socket:
        if not self._alive() or self._sock is None:
            self._start()
        assert self._sock is not None
        return self._sock

    def control_socket(self) -> socket.socket:
        """The zygote's control socket (started if it is not): for a client that runs
        its own jobs on it (`rlvr.sandboxes.local.sessions`), and so not `run_many`."""
        return self._ensure()

    def isolation(self) -> IsolationReport:
        self._ensure()
        return {"backend": self.backend, **self._hello.get("caps", {})}

    def close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
        if self._proc is not None and self._owner == os.getpid():
            # EOF on its socket lets the zygote end its jobs and remove its cgroups;
            # one that does not leave in time is killed (its cgroups are then removed by
            # the next zygote to start).
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=CLOSE_GRACE_S)
            if self._proc.poll() is None:
                self._proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
        self._proc = None

    # ------------------------------------------------------------ running jobs

    def run(self, spec: RunSpec) -> RunResult:
        return self.run_many([spec])[0]

    def run_many(self, specs: list[RunSpec], on_result: OnResult | None = None) -> list[RunResult]:
        try:
            sock = self._ensure()
        except SandboxUnavailable as exc:
            return _reported([RunResult(Status.CRASHED, infra_error=str(exc)) for _ in specs], on_result)
        jobs = [self._make(spec) for spec in specs]
        position = {job.id: index for index, job in enumerate(jobs)}
        told: dict[int, RunResult] = {}  # by position: the results given to on_result
        waiting = [job for job in reversed(jobs) if job.early is None]
        active: dict[int, _JobState] = {}
        self._due, self._committed_mb = None, 0
        sel = selectors.DefaultSelector()
        sel.register(sock, selectors.EVENT_READ, None)
        try:
            while waiting or active:
                while waiting and self._room(active, waiting[-1]):
                    job = waiting.pop()
                    if self._submit(job, sock, sel):
                        active[job.id] = job
                        self._committed_mb += job.spec.limits.memory_mb
                        if self._due is not None:
                            self._due = min(self._due, job.deadline)
                # Only a caller that listens pays for the look at every job in flight.
                in_flight = list(active.values()) if on_result is not None else []
                self._pump(sel, active)
                if on_result is not None:
                    for job in in_flight:
                        if job.id not in active:
                            told[position[job.id]] = self._result(job)
                            on_result(position[job.id], told[position[job.id]])
        finally:
            for job in jobs:
                self._close_fds(job, sel)
            sel.close()
        return _reported([told.get(i) or self._result(job) for i, job in enumerate(jobs)], on_result, set(told))

    def _make(self, spec: RunSpec) -> _JobState:
        self._next_id += 1
        job = spec.job.frame()
        code = job.get("code")
        too_long = type(code) is str and len(code) > core.MAX_PROGRAM_CHARS
        early = _too_long() if too_long else python.precompile(job)
        if early is not None:
            return _JobState(spec, self._next_id, memoryview(b""), early=early)
        data, steps = wire_data(job, spec)
        state = _JobState(spec, self._next_id, memoryview(data), clock=pacing.TestClock.of(spec.job))
        if steps and state.clock is not None:
            state.lockstep = pacing.Lockstep(steps, state.clock)
        return state

    def _room(self, active: dict[int, _JobState], job: _JobState) -> bool:
        if not active:
            return True
        if len(active) >= self.max_jobs_in_flight:
            return False
        return self._committed_mb + job.spec.limits.memory_mb <= self.memory_in_flight_mb

    def _submit(self, job: _JobState, sock: socket.socket, sel: selectors.BaseSelector) -> bool:
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        ours.setblocking(False)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        os.set_blocking(out_r, False)
        os.set_blocking(err_r, False)
        # Most jobs fit in the socket's buffer: written now, they need no feeding later.
        self._feed(job, ours)
        try:
            socket.send_fds(sock, [control.run(job.id, control_limits(job.spec))], [theirs.fileno(), out_w, err_w])
        except OSError as exc:
            job.infra, job.done = f"zygote unreachable: {exc}", True
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
            ours.close()
            return False
        finally:
            theirs.close()
        os.close(out_w)
        os.close(err_w)
        job.channel = ours
        job.fds = {"channel": ours.fileno(), "stdout": out_r, "stderr": err_r}
        for name in ("channel", "stdout", "stderr"):
            job.out[name], job.seen[name] = bytearray(), 0
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if name == "channel" and job.data else 0)
            sel.register(job.fds[name], events, (job, name))
        job.started = time.monotonic()
        job.deadline = job.started + job.spec.limits.wall_s + ACCEPT_GRACE_S
        return True

    def _pump(self, sel: selectors.BaseSelector, active: dict[int, _JobState]) -> None:
        """Wait for the next events and act on them. Only the jobs they touched are
        looked at again, and every job once its deadline or exit grace is due: a scan of
        all jobs in flight per wake-up cost the worker more than its own reading."""
        now = time.monotonic()
        if self._due is None:
            self._due = min((_wake(job) for job in active.values()), default=now)
        touched: dict[int, _JobState] = {}
        for key, mask in sel.select(timeout=max(0.0, min(self._due - now, 1.0))):
            if key.data is None:
                touched.update((job.id, job) for job in self._on_control(active))
                continue
            job, name = key.data
            touched[job.id] = job
            if mask & selectors.EVENT_WRITE and job.channel is not None:
                self._feed(job, job.channel)
                if not job.data:
                    sel.modify(job.fds["channel"], selectors.EVENT_READ, (job, name))
            if mask & selectors.EVENT_READ:
                self._drain(job, name, sel)
        now = time.monotonic()
        if now >= self._due:
            touched = dict(active)
            self._due = None
        for job in touched.values():
            if job.id not in active:
                continue
            if job.exit is None and job.killed is None and now >= min(job.deadline, _test_deadline(job)):
                self._kill(job, Status.TIMEOUT)
            if job.exit is not None and (not job.fds or now >= job.exited_at + EXIT_GRACE_S):
                job.done = True
            if job.done:
                self._close_fds(job, sel)
                del active[job.id]
                self._committed_mb -= job.spec.limits.memory_mb
            elif self._due is not None:
                self._due = min(self._due, _wake(job))

    def _on_control(self, active: dict[int, _JobState]) -> list[_JobState]:
        """Take in everything the zygote has sent: jobs' exits and errors. The jobs
        whose state it changed."""
        assert self._sock is not None
        changed: list[_JobState] = []
        while True:
            try:
                data = self._sock.recv(65536)
            except BlockingIOError:
                return changed
            except OSError:
                data = b""
            if not data:
                self._zygote_died(active)
                return list(active.values())
            if data[:1] == control.EXIT_TAG:
                for job_id, code, sig, cpu_s, oom in control.parse_exits(data):
                    job = active.get(job_id)
                    if job is not None:
                        job.exit = {"code": code if code >= 0 else None, "signal": sig or None, "cpu_s": cpu_s}
                        job.exit["oom"] = oom
                        job.exited_at = time.monotonic()
                        changed.append(job)
            elif data[:1] == control.ERROR_TAG and len(data) >= control.ERROR.size:
                job_id, message = control.parse_error(data)
                job = active.get(job_id)
                if job is not None:
                    # The job never started: done without waiting out a grace period.
                    job.infra, job.exit, job.exited_at = message, {"code": None}, time.monotonic() - EXIT_GRACE_S
                    changed.append(job)

    def _zygote_died(self, active: dict[int, _JobState]) -> None:
        # Every job in flight is an infrastructure failure, done without a grace period.
        for job in active.values():
            job.infra = job.infra or "sandbox zygote died"
            job.exit = job.exit or {"code": None}
            job.exited_at = time.monotonic() - EXIT_GRACE_S
        self.close()

    def _feed(self, job: _JobState, channel: _socket.socket) -> None:
        try:
            while job.data:
                job.data = job.data[channel.send(job.data[: 1 << 16]) :]
        except BlockingIOError:
            return
        except OSError:
            job.data = memoryview(b"")  # the job stopped reading: its business
            job.lockstep = None
        if job.lockstep is None or job.lockstep.done:
            with contextlib.suppress(OSError):
                channel.shutdown(_socket.SHUT_WR)

    def _release(self, job: _JobState, sel: selectors.BaseSelector) -> None:
        """Send the inputs of the tests whose clocks have started (`pacing.Lockstep`),
        right away: the runner waits for them."""
        assert job.lockstep is not None
        more = job.lockstep.take()
        if not more or job.channel is None:
            return
        job.data = memoryview(bytes(job.data) + more) if job.data else memoryview(more)
        self._feed(job, job.channel)
        if job.data and "channel" in job.fds:
            sel.modify(job.fds["channel"], selectors.EVENT_READ | selectors.EVENT_WRITE, (job, "channel"))

    def _drain(self, job: _JobState, name: str, sel: selectors.BaseSelector) -> None:
        limits: Limits = job.spec.limits
        try:
            chunk = os.read(job.fds[name], 1 << 16)
        except BlockingIOError:
            return
        except ConnectionResetError:
            chunk = b""  # the job ended without reading all of its input
        if not chunk:
            self._close_one(job, name, sel)
            return
        job.seen[name] += len(chunk)
        if name == "channel":
            # Kept up to the cap even past it: the first bytes say whether the runner
            # took the job (`core.ACCEPTED`).
            job.out[name] += chunk[: max(0, limits.max_channel_bytes - len(job.out[name]))]
            job.lines += chunk.count(b"\n")
            if not job.accepted_at and job.out[name].startswith(core.ACCEPTED):
                job.accepted_at = time.monotonic()
                job.deadline = job.accepted_at + limits.wall_s
            if job.clock is not None:
                job.clock.feed(chunk, time.monotonic() - job.started)
                if self._due is not None:
                    self._due = min(self._due, _test_deadline(job))
                if job.lockstep is not None:
                    self._release(job, sel)
            if job.seen[name] > limits.max_channel_bytes or job.lines > limits.max_records + 1:
                self._kill(job, Status.OUTPUT_LIMIT)
                self._close_one(job, name, sel)
            return
        room = limits.keep_output_bytes - len(job.out[name])
        if room > 0:
            job.out[name] += chunk[:room]
        if job.seen[name] > limits.max_output_bytes:
            self._kill(job, Status.OUTPUT_LIMIT)
            self._close_one(job, name, sel)

    def _kill(self, job: _JobState, why: Status) -> None:
        if job.killed is None:
            job.killed = why
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.send(control.kill(job.id))

    def _close_one(self, job: _JobState, name: str, sel: selectors.BaseSelector) -> None:
        fd = job.fds.pop(name, None)
        if fd is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(fd)
        if name == "channel" and job.channel is not None:
            job.channel.close()
            job.channel = None
        else:
            os.close(fd)

    def _close_fds(self, job: _JobState, sel: selectors.BaseSelector) -> None:
        for name in list(job.fds):
            self._close_one(job, name, sel)

    def _result(self, job: _JobState) -> RunResult:
        if job.early is not None:
            return RunResult(Status.OK, exit_code=0, records=[job.early])
        exit_ = job.exit or {}
        ended = job.exited_at or time.monotonic()
        wall = ended - job.started if job.started else 0.0
        result = RunResult(
            Status.OK,
            exit_code=exit_.get("code"),
            signal=exit_.get("signal"),
            stdout=bytes(job.out.get("stdout", b"")).decode("utf-8", "replace"),
            stderr=bytes(job.out.get("stderr", b"")).decode("utf-8", "replace"),
            wall_s=max(0.0, ended - job.accepted_at if job.accepted_at else wall),
            cpu_s=float(exit_.get("cpu_s") or 0.0),
        )
        channel = bytes(job.out.get("channel", b""))
        accepted = channel.startswith(core.ACCEPTED)
        if accepted:
            result.records, result.evidence = audit.take(
                [record for record, _ in _records(channel, len(core.ACCEPTED), job.spec.limits.max_records)]
            )
            if job.clock is not None:
                job.clock.mark(result.records, wall)
        result.status, result.infra_error = _outcome(job, result, accepted)
        return result


def _reported(results: list[RunResult], on_result: OnResult | None, told: set[int] | None = None) -> list[RunResult]:
    """`results`, each told to `on_result` that was not yet (`told`: by position)."""
    if on_result is not None:
        for index, result in enumerate(results):
            if told is None or index not in told:
                on_result(index, result)
    return results


def _wake(job: _JobState) -> float:
    """When a job in flight must be looked at even with no event: its deadline (the
    job's, or its test's), or the end of its exit grace once it has exited."""
    return job.exited_at + EXIT_GRACE_S if job.exit else min(job.deadline, _test_deadline(job))


def _test_deadline(job: _JobState) -> float:
    """When the job is killed for a record that is due and has not come (`pacing`);
    inf if there is no such deadline."""
    due = job.clock.deadline() if job.clock is not None else None
    return float("inf") if due is None else job.started + due


def _too_long() -> core.Record:
    return {"load": "error", "e": f"the program is longer than {core.MAX_PROGRAM_CHARS} characters"}


def _records(channel: bytes, start: int, limit: int) -> list[tuple[core.Record, int]]:
    """The JSON object lines of the channel from `start`, at most `limit` of them, each
    with the offset its line ends at. Total over whatever the program wrote there: any
    other line is skipped (the grader goes by the records it expects, and a missing one
    fails its test)."""
    records = []
    end = start
    for line in channel[start:].split(b"\n", limit)[:limit]:
        end += len(line) + 1
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if type(record) is dict:
            records.append((record, end))
    return records


def _outcome(job: _JobState, result: RunResult, accepted: bool) -> tuple[Status, str | None]:
    """Why the job ended (the first cause that applies), and the sandbox's own failure
    if that was it: only before the runner accepted the job (see `core.ACCEPTED`), when
    none of the program's code had run, can the end of a job be the sandbox's failure."""
    if job.infra:
        return Status.CRASHED, job.infra
    if not accepted:
        how = f"exit code {result.exit_code}, signal {result.signal}, {job.killed or 'not killed'}"
        return Status.CRASHED, f"the sandbox runner did not take the job ({how})"
    if (job.exit or {}).get("oom"):
        # The kernel killed a process of the job for the job's memory limit (what the
        # job's processes and files used together): the program's doing, never masked.
        return Status.MEMORY, None
    if job.killed is not None:
        return job.killed, None
    if result.exit_code == core.EXIT_MEMORY:
        return Status.MEMORY, None
    if result.signal in (signal.SIGXCPU, signal.SIGKILL) and result.cpu_s >= job.spec.limits.cpu_s - 0.5:
        return Status.TIMEOUT, None
    if result.exit_code != 0:
        return Status.CRASHED, None
    return Status.OK, None


_instances: dict[tuple[int, int, int, JobEnvironment], LocalSandbox] = {}


def get_local_sandbox(config: SandboxConfig | None = None) -> LocalSandbox:
    """This process's sandbox for `config`'s limits in flight (a forked child gets its
    own zygote, not its parent's)."""
    config = config or SandboxConfig()
    key = (os.getpid(), config.max_jobs_in_flight, config.memory_in_flight_mb, config.job_env)
    sandbox = _instances.get(key)
    if sandbox is None:
        for stale in [k for k in _instances if k[0] != key[0]]:
            del _instances[stale]
        sandbox = _instances[key] = LocalSandbox(config)
    return sandbox
