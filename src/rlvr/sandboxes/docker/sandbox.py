"""Host side of the Docker backend: each job in a fresh hardened container from a warm
pool, its results read off the container's attach stream.

A container runs exactly one job and is gone after it: `inside` exits once the job
has, and the daemon removes it (`AutoRemove`); a job cut off here (deadline, output
caps) has its container killed. Nothing of a job is read from its filesystem.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import socket
import threading
import time
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, cast

from rlvr.sandboxes.base import IsolationReport, Limits, OnResult, RunResult, RunSpec, SandboxUnavailable, Status
from rlvr.sandboxes.config import DockerConfig
from rlvr.sandboxes.docker import containers, protocol
from rlvr.sandboxes.jobs import NativeCallJob, NativeStdioJob, ProgramJob
from rlvr.sandboxes.local import pacing, wiring
from rlvr.sandboxes.local import sandbox as local
from rlvr.sandboxes.runner import audit, core, python

# What `inside` applies to the job's process, read off `Limits` by name.
JOB_LIMITS = ("cpu_s", "memory_mb", "fsize_mb", "nofile")
EXIT_GRACE_S = 2.0
REFILL_BACKOFF_S = 1.0
# Containers made at once: most of a start is the daemon's and the runtime's waiting.
REFILL_THREADS = 3
MAX_DIAGNOSTIC_BYTES = 2000


@dataclass
class _Job:
    """One job on its container's stream: what came out, and how it ended."""

    spec: RunSpec
    out: dict[bytes, bytearray] = field(default_factory=dict)
    seen: dict[bytes, int] = field(default_factory=dict)
    lines: int = 0
    # Bytes come on the channel by each frame, and when (after `started`): `pacing`.
    arrivals: list[tuple[int, float]] = field(default_factory=list)
    exit: dict[str, Any] | None = None
    killed: Status | None = None
    infra: str | None = None
    hello: bool = False
    diagnostics: bytearray = field(default_factory=bytearray)
    started: float = 0.0
    accepted_at: float = 0.0
    ended: float = 0.0


class Pool:
    """Started, idle containers, refilled in the background up to `config.pool_size`.
    `take` hands one out for good; with none ready it makes one there and then."""

    def __init__(self, api: Any, config: DockerConfig, owner: containers.Owner) -> None:
        self.api, self.config, self.owner = api, config, owner
        self._ready: deque[containers.Attached] = deque()
        self._making = 0
        self._changed = threading.Condition()
        self._closed = False
        self.error: str | None = None
        self._threads = [
            threading.Thread(target=self._refill, name="rlvr-docker-pool", daemon=True)
            for _ in range(min(REFILL_THREADS, config.pool_size))
        ]
        for thread in self._threads:
            thread.start()

    def take(self) -> containers.Attached:
        with self._changed:
            attached = self._ready.popleft() if self._ready else None
            self._changed.notify_all()
        return attached if attached is not None else containers.create(self.api, self.config, self.owner)

    def ready(self) -> int:
        return len(self._ready)

    def _refill(self) -> None:
        while True:
            with self._changed:
                while not self._closed and len(self._ready) + self._making >= self.config.pool_size:
                    self._changed.wait()
                if self._closed:
                    return
                self._making += 1
            attached = self._make()
            with self._changed:
                self._making -= 1
                if attached is not None and not self._closed:
                    self._ready.append(attached)
                    attached = None
            if attached is not None:
                containers.discard(self.api, attached)  # made while the pool closed

    def _make(self) -> containers.Attached | None:
        try:
            attached = containers.create(self.api, self.config, self.owner)
        except SandboxUnavailable as exc:
            self.error = str(exc)
            time.sleep(REFILL_BACKOFF_S)  # the daemon is down or the image missing: retry later
            return None
        self.error = None
        return attached

    def close(self) -> None:
        with self._changed:
            self._closed = True
            ready, self._ready = list(self._ready), deque()
            self._changed.notify_all()
        for attached in ready:
            containers.discard(self.api, attached)
        for thread in self._threads:
            thread.join(timeout=self.config.start_timeout_s)


class DockerSandbox:
    backend = "docker"

    def __init__(self, config: DockerConfig) -> None:
        self.config = config
        process = containers.process_id(os.getpid()) or str(os.getpid())
        self.owner = containers.Owner(socket.gethostname(), process, uuid.uuid4().hex)
        self.ids = containers.job_ids(config)
        self.api = _connect(config)
        containers.sweep(self.api, self.owner)
        self.pool = Pool(self.api, config, self.owner)

    def isolation(self) -> IsolationReport:
        return {
            "backend": self.backend,
            "isolation": "full",
            "image": self.config.image,
            "runtime": self.config.runtime,
            "pool_size": self.config.pool_size,
            "pool_ready": self.pool.ready(),
            **({"pool_error": self.pool.error} if self.pool.error else {}),
        }

    def close(self) -> None:
        self.pool.close()
        containers.sweep(self.api, self.owner, everything_of_ours=True)

    def run(self, spec: RunSpec) -> RunResult:
        early, prepared = _prepare(spec)
        if early is not None:
            return early
        try:
            attached = self.pool.take()
        except SandboxUnavailable as exc:
            return RunResult(Status.CRASHED, infra_error=str(exc))
        job = _Job(spec)
        try:
            _exchange(attached, job, _request(spec, prepared, self.ids, self.config), self.config)
        finally:
            # A container that reported its job's exit is exiting itself (and then removed
            # by the daemon); one cut off, or silent, is killed.
            containers.release(self.api, attached, kill=job.exit is None or "lost" in job.exit)
        return _result(job)

    def run_many(self, specs: list[RunSpec], on_result: OnResult | None = None) -> list[RunResult]:
        results: dict[int, RunResult] = {}
        if len(specs) == 1:
            results[0] = self.run(specs[0])
            if on_result is not None:
                on_result(0, results[0])
            return [results[0]]
        with ThreadPoolExecutor(max_workers=max(1, min(len(specs), self.config.pool_size))) as pool:
            started = {pool.submit(self.run, spec): index for index, spec in enumerate(specs)}
            for future in as_completed(started):
                results[started[future]] = future.result()
                if on_result is not None:
                    on_result(started[future], results[started[future]])
        return [results[index] for index in range(len(specs))]


def probe(config: DockerConfig) -> IsolationReport:
    """What a `DockerSandbox` of `config` would achieve, without making one (no pool):
    for /readyz in processes that run no jobs."""
    report: IsolationReport = {"backend": "docker", "image": config.image, "runtime": config.runtime}
    try:
        containers.job_ids(config)
        _connect(config)
    except SandboxUnavailable as exc:
        return {**report, "isolation": "none", "error": str(exc)}
    return {**report, "isolation": "full"}


def _connect(config: DockerConfig) -> Any:
    """A client of the daemon at `config.url`, with the image present."""
    docker = containers.sdk()
    try:
        api = docker.APIClient(base_url=config.url, timeout=int(config.start_timeout_s))
        api.inspect_image(config.image)
    except docker.errors.ImageNotFound as exc:
        raise SandboxUnavailable(f"sandbox image {config.image!r} not found (docker/sandbox.Dockerfile)") from exc
    except (docker.errors.DockerException, OSError) as exc:
        raise SandboxUnavailable(f"docker daemon at {config.url} unreachable: {exc}") from exc
    return api


def _prepare(spec: RunSpec) -> tuple[RunResult | None, core.Frame]:
    """The job to send, with a Python program's code objects compiled here; or the
    result, known without running, of one that does not compile or is too long."""
    job = spec.job.frame()
    code = job.get("code")
    if type(code) is str and len(code) > core.MAX_PROGRAM_CHARS:
        too_long = {"load": "error", "e": f"the program is longer than {core.MAX_PROGRAM_CHARS} characters"}
        return RunResult(Status.OK, exit_code=0, records=[too_long]), job
    record = python.precompile(job)
    if record is not None:
        return RunResult(Status.OK, exit_code=0, records=[record]), job
    return None, job


def _request(spec: RunSpec, job: core.Frame, ids: tuple[int, int], config: DockerConfig) -> bytes:
    # The worker's toolchain paths mean nothing in the image: its own are used.
    if isinstance(spec.job, NativeCallJob | NativeStdioJob | ProgramJob):
        job["gxx"], job["node"] = config.gxx, config.node
    header = {name: getattr(spec.limits, name) for name in JOB_LIMITS}
    header["uid"], header["gid"] = ids
    data, steps = wiring.wire_data(job, spec)
    if steps:
        header["steps"] = [len(step) for step in steps]
    return protocol.request(header, data + b"".join(steps))


def _exchange(attached: containers.Attached, job: _Job, request: bytes, config: DockerConfig) -> None:
    """Send the request, read until its exit message, the stream's end, the deadline or
    a cap; a container cut off is killed by the caller (`containers.discard`)."""
    pending = memoryview(request)
    docker_frames, messages = protocol.Reader(protocol.ATTACH), protocol.Reader(protocol.MESSAGE)
    sel = selectors.DefaultSelector()
    sel.register(attached.sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
    job.started = time.monotonic()
    try:
        while job.exit is None and job.killed is None and job.infra is None:
            left = _deadline(job, config) - time.monotonic()
            if left <= 0:
                job.killed = Status.TIMEOUT
                break
            for _key, mask in sel.select(timeout=min(left, 1.0)):
                if mask & selectors.EVENT_WRITE and pending:
                    pending = _send(attached.sock, pending, job)
                    if not pending:
                        sel.modify(attached.sock, selectors.EVENT_READ)
                if mask & selectors.EVENT_READ:
                    _receive(attached.sock, docker_frames, messages, job)
    finally:
        sel.close()
        job.ended = time.monotonic()


def _deadline(job: _Job, config: DockerConfig) -> float:
    """The wall limit counts from when the runner took the job: a container slow to get
    there (a loaded host) is the sandbox's time, bounded by `start_timeout_s`."""
    if job.accepted_at:
        return job.accepted_at + job.spec.limits.wall_s
    return job.started + job.spec.limits.wall_s + config.start_timeout_s


def _send(sock: socket.socket, pending: memoryview, job: _Job) -> memoryview:
    try:
        return pending[sock.send(pending[: 1 << 16]) :]
    except BlockingIOError:
        return pending
    except OSError as exc:
        job.infra = f"the sandbox container took no job: {exc}"
        return memoryview(b"")


def _receive(sock: socket.socket, docker_frames: protocol.Reader, messages: protocol.Reader, job: _Job) -> None:
    try:
        data = sock.recv(1 << 16)
    except BlockingIOError:
        return
    except OSError:
        data = b""
    if not data:
        # The container ended without saying how its job did: it died (or was killed).
        job.exit = job.exit or {"code": None, "signal": None, "cpu_s": 0.0, "lost": True}
        return
    for stream, payload in docker_frames.feed(data):
        if stream == protocol.ATTACH_STDERR:
            job.diagnostics += payload[: max(0, MAX_DIAGNOSTIC_BYTES - len(job.diagnostics))]
            continue
        for tag, body in messages.feed(payload):
            _on_message(job, tag, body)


def _on_message(job: _Job, tag: bytes, body: bytes) -> None:
    limits: Limits = job.spec.limits
    if not job.hello:
        job.hello = tag == protocol.HELLO and body == protocol.VERSION
        if not job.hello:
            job.infra = "the sandbox image is older than this worker: rebuild it (docker/sandbox.Dockerfile)"
        return
    if tag == protocol.EXIT:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        job.exit = parsed if type(parsed) is dict else {"code": None}
        return
    out = job.out.setdefault(tag, bytearray())
    job.seen[tag] = job.seen.get(tag, 0) + len(body)
    if tag == protocol.CHANNEL:
        out += body[: max(0, limits.max_channel_bytes - len(out))]
        if not job.accepted_at and out.startswith(core.ACCEPTED):
            job.accepted_at = time.monotonic()
        job.lines += body.count(b"\n")
        job.arrivals.append((job.seen[tag], time.monotonic() - job.started))
        if job.seen[tag] > limits.max_channel_bytes or job.lines > limits.max_records + 1:
            job.killed = Status.OUTPUT_LIMIT
        return
    out += body[: max(0, limits.keep_output_bytes - len(out))]
    if job.seen[tag] > limits.max_output_bytes:
        job.killed = Status.OUTPUT_LIMIT


def _result(job: _Job) -> RunResult:
    exit_: dict[str, Any] = job.exit or {}
    result = RunResult(
        Status.OK,
        exit_code=exit_.get("code") if type(exit_.get("code")) is int else None,
        signal=exit_.get("signal") if type(exit_.get("signal")) is int else None,
        stdout=bytes(job.out.get(protocol.STDOUT, b"")).decode("utf-8", "replace"),
        stderr=bytes(job.out.get(protocol.STDERR, b"")).decode("utf-8", "replace"),
        wall_s=max(0.0, job.ended - (job.accepted_at or job.started)),
        cpu_s=float(exit_.get("cpu_s") or 0.0) if type(exit_.get("cpu_s")) in (int, float) else 0.0,
    )
    channel = bytes(job.out.get(protocol.CHANNEL, b""))
    accepted = channel.startswith(core.ACCEPTED)
    if accepted:
        records = local._records(channel, len(core.ACCEPTED), job.spec.limits.max_records)
        pacing.mark_late_tests(job.spec.job, records, job.arrivals)
        result.records, result.evidence = audit.take([record for record, _ in records])
    result.status, result.infra_error = _outcome(job, result, accepted)
    return result


def _outcome(job: _Job, result: RunResult, accepted: bool) -> tuple[Status, str | None]:
    """Why the job ended, by the local backend's rules (a `_Job` has the fields they
    read): only before the runner accepted the job, when none of the program's code had
    run, can its end be the sandbox's own failure. Ours adds what `inside` said."""
    status, infra = local._outcome(cast(Any, job), result, accepted)
    diagnostics = bytes(job.diagnostics).decode("utf-8", "replace").strip()
    if infra and diagnostics:
        infra = f"{infra}: {diagnostics}"
    return status, infra


_instances: dict[DockerConfig, DockerSandbox] = {}
_instances_pid = os.getpid()
_instances_lock = threading.Lock()


def get_docker_sandbox(config: DockerConfig) -> DockerSandbox:
    """This process's sandbox for `config` (a forked child makes its own: the pool's
    thread and connections stay with the parent)."""
    global _instances_pid
    with _instances_lock:
        if _instances_pid != os.getpid():
            _instances.clear()
            _instances_pid = os.getpid()
        sandbox = _instances.get(config)
        if sandbox is None:
            if not _instances:
                atexit.register(close_all)  # the janitor's pass at shutdown
            sandbox = _instances[config] = DockerSandbox(config)
        return sandbox


def close_all() -> None:
    with _instances_lock:
        for sandbox in _instances.values():
            with contextlib.suppress(Exception):
                sandbox.close()
        _instances.clear()
