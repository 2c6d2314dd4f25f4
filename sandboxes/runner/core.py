"""Runner entry point, framing, the record channel and per-test child processes.

Job frames are `marshal` data: they come only from the trusted client (never from the
program), and decoding them touches far fewer pages than `json` in a freshly forked
job. Records going out are JSON, since the grader must parse them safely.
"""

from __future__ import annotations

import json
import marshal
import os
import select
import signal
import struct
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol

DATA_FD = 0
CHANNEL_FD = 3
MAX_FRAME = 64 * 1024 * 1024
EXIT_MEMORY = 86
EXIT_BAD_JOB = 87


class Privileges(Protocol):
    """How the backend lowers privileges. The runner calls exactly one of
    `drop_untrusted` (in every process that runs the program) and `drop_trusted` (in
    the test half of a split job, which must get a different uid)."""

    def drop_untrusted(self) -> None: ...

    def drop_trusted(self) -> None: ...


def read_exact(fd: int, n: int) -> bytes:
    first = os.read(fd, n)
    if len(first) == n:
        return first  # nearly always: the client wrote the whole job before the fork
    if not first:
        raise EOFError("job data ended early")
    parts = [first]
    n -= len(first)
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("job data ended early")
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def read_frame(fd: int = DATA_FD) -> Any:
    (size,) = struct.unpack("!I", read_exact(fd, 4))
    if size > MAX_FRAME:
        raise ValueError("job frame too large")
    return marshal.loads(read_exact(fd, size))


def frame(obj: Any) -> bytes:
    body = marshal.dumps(obj)
    return struct.pack("!I", len(body)) + body


def _not_json(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON data")


def _json_encoder() -> Callable[[Any], str]:
    # json.dumps goes through several Python-level layers per call; the C encoder they
    # end in, made once in the zygote, touches a handful of objects in each job. No
    # cycle check (markers=None): records hold wire data, which is depth-limited.
    try:
        from _json import make_encoder

        ascii_ = json.encoder.encode_basestring_ascii
        encode = make_encoder(None, _not_json, ascii_, None, ":", ",", False, False, False)
        encode({"probe": [1, "x"]}, 0)
        return lambda record: "".join(encode(record, 0))
    except (ImportError, TypeError, ValueError):
        return lambda record: json.dumps(record, separators=(",", ":"), allow_nan=False)


_encode_record = _json_encoder()


class Channel:
    """Records out, one JSON line each, on a fd only the runner's trusted code holds."""

    def __init__(self, fd: int = CHANNEL_FD) -> None:
        self.fd = fd

    def write(self, record: dict[str, Any]) -> None:
        data = (_encode_record(record) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]


def close_fds_except(*keep: int) -> None:
    top = 1 << 16
    prev = -1
    for fd in sorted(keep):
        if fd - prev > 1:
            os.closerange(prev + 1, fd)
        prev = fd
    os.closerange(prev + 1, top)


def run_child(
    target: Callable[[], None],
    stdin: bytes,
    timeout_s: float,
    cap: int,
    extra_fd3: bool = False,
) -> dict[str, Any]:
    """Fork a child that runs `target` with `stdin` as fd 0 and a fresh pipe as fd 1
    (and, if asked, another as fd 3), drain both concurrently with caps, kill its
    process group at `timeout_s`. Returns status, exit code and outputs."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    ch_r, ch_w = os.pipe() if extra_fd3 else (-1, -1)
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            if extra_fd3:
                os.dup2(ch_w, 3)
            close_fds_except(0, 1, 2, *((3,) if extra_fd3 else ()))
            target()
        except BaseException:
            os._exit(126)
        os._exit(0)
    os.close(in_r)
    os.close(out_w)
    if extra_fd3:
        os.close(ch_w)
    outs: dict[int, bytearray] = {out_r: bytearray()}
    if extra_fd3:
        outs[ch_r] = bytearray()
    pending = memoryview(stdin)
    os.set_blocking(in_w, False)
    writers = [in_w] if pending else []
    if not pending:
        os.close(in_w)
    deadline = time.monotonic() + timeout_s
    status = "ok"
    readers = list(outs)
    while readers or writers:
        left = deadline - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        r, w, _ = select.select(readers, writers, [], left)
        if w:
            try:
                pending = pending[os.write(in_w, pending[: 1 << 16]) :]
            except BrokenPipeError:
                pending = memoryview(b"")
            if not pending:
                os.close(in_w)
                writers = []
        for fd in r:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                readers.remove(fd)
                continue
            outs[fd] += chunk
            if len(outs[fd]) > cap:
                status = "output_limit"
                readers = writers = []
                break
    if writers:
        os.close(in_w)
    if status != "ok":
        _killpg(pid)
    code = _reap(pid, deadline if status == "ok" else time.monotonic() + 1)
    if code is None:
        _killpg(pid)
        code = _reap(pid, time.monotonic() + 5)
        status = "timeout" if status == "ok" else status
    for fd in outs:
        os.close(fd)
    result: dict[str, Any] = {"s": status, "code": code, "out": bytes(outs[out_r][:cap]).decode("utf-8", "replace")}
    if extra_fd3:
        result["chan"] = bytes(outs[ch_r][:cap]).decode("utf-8", "replace")
    if status == "ok" and code is not None and code != 0:
        result["s"] = "memory" if code == EXIT_MEMORY else "error"
    return result


def _killpg(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _reap(pid: int, deadline: float) -> int | None:
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.001)


def main(priv: Privileges) -> int:
    """Run one job: read its first frame, dispatch on `mode`. The caller exits with
    the returned code; records are on the channel."""
    try:
        job = read_frame()
    except (EOFError, ValueError, OSError):
        return EXIT_BAD_JOB
    channel = Channel()
    mode = job.get("mode")
    try:
        # `import a.b as x`, not `from a import b`: the latter runs importlib's Python
        # code (more pages to copy in a fresh job) even when the module is loaded.
        if mode in ("call", "values", "stdio", "split"):
            import rlvr.sandboxes.runner.python as python_runner

            return python_runner.run(job, priv, channel)
        if mode in ("native_stdio", "native_call"):
            import rlvr.sandboxes.runner.native as native_runner

            return native_runner.run(job, priv, channel)
    except MemoryError:
        return EXIT_MEMORY
    print(f"runner: unknown mode {mode!r}", file=sys.stderr)
    return EXIT_BAD_JOB
