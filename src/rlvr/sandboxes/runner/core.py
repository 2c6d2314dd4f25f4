"""What every runner shares: framing, the record channel, per-test deadlines and
per-test child processes. A leaf: it imports no other runner module (the dispatch on
`mode` is in `rlvr.sandboxes.runner.entry`, above the runners).

Job frames are `marshal` data: they come only from the trusted client (never from the
program), and decoding them touches far fewer pages than `json` in a freshly forked
job. Records going out are JSON, since the grader must parse them safely.
"""

from __future__ import annotations

import _signal
import builtins
import ctypes
import errno
import json
import marshal
import os
import select
import signal
import struct
import sys
import time
import traceback

# Bound here: a program that rebinds `builtins.type` or `str` must not break the report of its own failure.
from builtins import str, type  # noqa: UP029
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

# A job's frame as its runner reads it: a `rlvr.sandboxes.jobs` job's `frame()`,
# marshalled. The wire format between the trusted client and the job, read only by the
# runner of its kind.
Frame = dict[str, Any]
# A record as a job writes it to its channel (a test's status and value, a load
# error): untrusted JSON, which the trusted side reads field by field, since a program
# may forge any of it.
Record = dict[str, Any]
DATA_FD = 0
CHANNEL_FD = 3
MAX_FRAME = 64 * 1024 * 1024
# A longer program is refused before it is sent (a load error, the program's own
# failure), so that no program can make its job's frame too large for the runner.
MAX_PROGRAM_CHARS = 4 * 1024 * 1024
MAX_ERROR_CHARS = 2000
EXIT_MEMORY = 86
EXIT_BAD_JOB = 87

# What the runner calls once a program's code has run in its process (call, values,
# a split job's program half, the child of a stdio or program run), bound here at
# import: a program may rebind the modules' attributes (SandboxFusion's anti-hack
# header sets `os._exit`, `os.kill`, `os.fork`, `os.getcwd` ... to None), and the
# machinery that reports its result must not be what breaks.
hard_exit = os._exit
_write = os.write
_setitimer = signal.setitimer
_ITIMER_REAL = signal.ITIMER_REAL
_format_exception_only = traceback.format_exception_only
_killpg = os.killpg
_kill = os.kill
_waitpid = os.waitpid
_fork = os.fork
_SIGKILL = signal.SIGKILL
PR_SET_DUMPABLE = 4
try:
    _prctl: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _prctl = None


class Privileges(Protocol):
    """How the backend lowers privileges. The runner calls exactly one of
    `drop_untrusted` (in every process that runs the program) and `drop_trusted` (in
    the test half of a split job, which must get a different uid)."""

    def drop_untrusted(self) -> None: ...

    def drop_trusted(self) -> None: ...


def module_namespace(name: str, filename: str, own_builtins: Any = builtins) -> dict[str, Any]:
    """The globals of a module `name` loaded from `filename`, registered in `sys.modules`
    as a file's module would be: what `dataclasses` reads to resolve string annotations
    (`from __future__ import annotations`), `pickle` to find a class, `typing.get_type_hints`
    a name; and `__file__`, which a script may name."""
    module = ModuleType(name)
    module.__file__ = filename
    module.__builtins__ = own_builtins  # type: ignore[attr-defined]  # a module global like any other
    sys.modules[name] = module
    return module.__dict__


# ---------------------------------------------------------------- job frames


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


def detach_stdin() -> None:
    """Give the process an empty stdin: fd 0 carried the job, which the program must
    not read."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


# ---------------------------------------------------------------- records


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


# The channel's first line once the runner has taken the job, before any code of the
# program runs. Without it the program never ran, so however the job ended was the
# sandbox's own failure; with it, nothing the program did (an exit code, a signal,
# forged lines after it) can read as one.
ACCEPTED = b"+\n"


class Channel:
    """Records out, one JSON line each, on a fd only the runner's trusted code holds."""

    def __init__(self, fd: int = CHANNEL_FD) -> None:
        self.fd = fd

    def accept(self) -> None:
        """Say that the job is taken: call once, right before the program's code runs."""
        _write(self.fd, ACCEPTED)

    def write(self, record: Record) -> None:
        write_all(self.fd, (_encode_record(record) + "\n").encode())


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[_write(fd, view) :]


def describe(exc: BaseException) -> str:
    """An exception as a record's `e`: its last line, capped."""
    try:
        text = "".join(_format_exception_only(type(exc), exc)).strip()
    except BaseException:
        text = type(exc).__name__
    return text[-MAX_ERROR_CHARS:]


# ---------------------------------------------------------------- per-test deadlines


class TestTimeout(BaseException):
    """Raised by SIGALRM at a test's timeout (best effort: the program can catch it; the
    backend's wall deadline for the whole job is the real bound)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise TestTimeout()


def set_alarm_handler() -> None:
    # The C-level call: `signal.signal` maps the old handler to an enum, which touches
    # (and so copies) pages of the enum machinery in every freshly forked job.
    _signal.signal(_signal.SIGALRM, _on_alarm)


class TimeLimit:
    """`with TimeLimit(seconds):` raises `TestTimeout` in the block once `seconds` have
    passed, and turns the timer off when the block ends, however it ends. Needs
    `set_alarm_handler()` first. A class, not `contextlib.contextmanager`: fewer
    objects touched per test in a freshly forked job."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        _setitimer(_ITIMER_REAL, self.seconds)

    def __exit__(self, *exc_info: object) -> None:
        _setitimer(_ITIMER_REAL, 0)


# ---------------------------------------------------------------- child processes


def close_fds_except(*keep: int) -> None:
    top = 1 << 16
    prev = -1
    for fd in sorted(keep):
        if fd - prev > 1:
            os.closerange(prev + 1, fd)
        prev = fd
    os.closerange(prev + 1, top)


def stay_on_this_cpu() -> None:
    """Pin the calling process, and so whatever it forks, to the CPU it runs on. The
    two halves of a split job take turns, one answering each call of the other: on one
    CPU a call is two plain context switches, while across two CPUs each one wakes the
    other CPU (an interrupt, and on a virtual machine an exit to the host), which has
    cost two to three times the CPU per call. Best effort: left as is if it fails."""
    try:
        fd = os.open("/proc/self/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            stat = os.read(fd, 4096)
        finally:
            os.close(fd)
        # Field 39, `processor`: the 37th after the parenthesised command name.
        os.sched_setaffinity(0, (int(stat.rsplit(b")", 1)[1].split()[36]),))
    except (OSError, ValueError, IndexError):
        pass


def kill_group(pid: int) -> None:
    """SIGKILL `pid`'s process group, and `pid` itself should it have left the group."""
    for kill in (_killpg, _kill):
        try:
            kill(pid, _SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def undumpable() -> None:
    """Make the calling process non-dumpable: its /proc files (`mem`, `environ`, `fd`,
    `map_files`) are then closed to every process of the job, same uid or not. A
    runner that holds what its tests' processes must not see (other tests' inputs)
    calls it before it forks them. Best effort where prctl cannot be called."""
    if _prctl is not None:
        _prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def end_strays() -> None:
    """End every process of the job but the runner: what a test left behind (a
    `setsid()` daemon, a grandchild) must not work on while the next test runs. Only
    where the runner is the init of the job's own PID namespace, whose `kill(-1)`
    reaches that namespace alone (and whose init no process of the job can signal with
    SIGKILL or SIGSTOP); elsewhere each test's process group is all that is killed."""
    if os.getpid() != 1:
        return
    while True:
        try:
            _kill(-1, _SIGKILL)
        except OSError:
            pass  # nothing left to signal
        try:
            _waitpid(-1, 0)
        except ChildProcessError:
            return
        except OSError as exc:
            if exc.errno != errno.EINTR:
                return


# Called with each piece of the fd 3 output as it comes; returns the time (monotonic) by
# which the child must have finished or written more.
Deadline = Callable[[bytes], float]
# Called after each piece of the fd 3 output, once `Deadline` has taken it: what the
# child's `FEED_FD` gets now (b"": nothing yet), and whether that is the last (the pipe
# then closes once written).
Feed = Callable[[], tuple[bytes, bool]]
# A child's pipe for what comes while it runs (`run_child`'s `feed`): not its stdin, which
# keeps its own data (an empty one reads as empty at once, as a judge's does).
FEED_FD = 4


def run_child(
    target: Callable[[], None],
    stdin: bytes | memoryview,
    timeout_s: float,
    cap: int,
    extra_fd3: bool = False,
    on_fd3: Deadline | None = None,
    feed: Feed | None = None,
) -> dict[str, Any]:
    """Fork a child that runs `target` with `stdin` as fd 0 and a fresh pipe as fd 1
    (and, if asked, another as fd 3), drain both concurrently with caps, kill its
    process group at `timeout_s`, or, with `on_fd3`, at the deadline it last gave. A
    child whose outputs end past that deadline timed out, whatever held up this
    process's clock meanwhile. With `feed` (and fd 3), the child's `FEED_FD` is a pipe
    that gets what `feed` gives after each piece of fd 3 output, until it gives its
    last. Returns the record fields: status `s`, exit `code`, `out` (and `chan`, the
    fd 3 output), each output cut at `cap`."""
    stdin_r, stdin_w, stdin = _stdin_source(stdin)
    feed_r, feed_w = os.pipe() if feed is not None and extra_fd3 else (-1, -1)
    pid, readers = _fork_child(target, stdin_r, extra_fd3, feed_r)
    until = time.monotonic() + timeout_s
    writers = [_Writer(stdin_w, stdin, None), _Writer(feed_w, b"", feed)]
    status, outputs, until = _exchange(writers, readers, until, cap, on_fd3 if extra_fd3 else None)
    status, code = _stop(pid, status, until)
    for fd in readers:
        os.close(fd)
    texts = [bytes(outputs[fd][:cap]).decode("utf-8", "replace") for fd in readers]
    result: dict[str, Any] = {"s": status, "code": code, "out": texts[0]}
    if extra_fd3:
        result["chan"] = texts[1]
    if status == "ok" and code is not None and code != 0:
        result["s"] = "memory" if code == EXIT_MEMORY else "error"
    return result


def stdin_file(data: bytes | memoryview) -> int:
    """A fd of a memfd holding `data`, at its start (see `_stdin_source`)."""
    fd = os.memfd_create("stdin", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _stdin_source(data: bytes | memoryview) -> tuple[int, int, bytes | memoryview]:
    """What the child's fd 0 will be: a file holding `data` (as `python sol.py <
    input.txt` has it, so that the fast-input idioms of competitive programming,
    `os.read(0, os.fstat(0).st_size)` and `mmap` of fd 0, read all of it); where no
    memfd can be made, a pipe. Returns that fd, the pipe's write end (-1 for a file)
    and what is left to write into it."""
    try:
        return stdin_file(data), -1, b""
    except OSError:
        read, write = os.pipe()
        return read, write, data


def _fork_child(target: Callable[[], None], stdin_r: int, extra_fd3: bool, feed_r: int) -> tuple[int, list[int]]:
    """Fork `target` in a process group of its own, with `stdin_r` as fd 0 and
    `feed_r` (-1: none) as `FEED_FD` (both closed here after) and fresh pipes. Returns
    its pid and the read ends of its fd 1 (and fd 3)."""
    out_r, out_w = os.pipe()
    ch_r, ch_w = os.pipe() if extra_fd3 else (-1, -1)
    pid = _fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.dup2(stdin_r, 0)
            os.dup2(out_w, 1)
            if extra_fd3:
                os.dup2(ch_w, 3)
            if feed_r >= 0:
                os.dup2(feed_r, FEED_FD)
            close_fds_except(0, 1, 2, *((3,) if extra_fd3 else ()), *((FEED_FD,) if feed_r >= 0 else ()))
            target()
        except BaseException:
            hard_exit(126)
        hard_exit(0)
    os.close(stdin_r)
    if feed_r >= 0:
        os.close(feed_r)
    os.close(out_w)
    if extra_fd3:
        os.close(ch_w)
    return pid, [out_r, ch_r] if extra_fd3 else [out_r]


class _Writer:
    """The write end of a pipe to a child (-1: none), written without blocking:
    `data`, then what `more` gives, closed once all is written and no more is to come
    or the child has closed its end."""

    def __init__(self, fd: int, data: bytes | memoryview, more: Feed | None) -> None:
        self.fd, self.pending, self.more = fd, memoryview(data), more
        self.ended = more is None
        if fd >= 0:
            os.set_blocking(fd, False)

    def ready(self) -> list[int]:
        """Its fd while there is data to write (closed once none is to come)."""
        if self.ended and not self.pending:
            self.close()
        return [self.fd] if self.fd >= 0 and self.pending else []

    def write(self) -> None:
        try:
            self.pending = self.pending[os.write(self.fd, self.pending[: 1 << 16]) :]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            self.pending, self.ended = memoryview(b""), True

    def top_up(self) -> None:
        """Take what `more` gives now."""
        if self.ended or self.fd < 0 or self.more is None:
            return
        data, self.ended = self.more()
        if data:
            self.pending = memoryview(bytes(self.pending) + data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _exchange(
    writers: list[_Writer], readers: list[int], until: float, cap: int, on_fd3: Deadline | None
) -> tuple[str, dict[int, bytearray], float]:
    """Write the `writers` and read every reader until all are done (`ok`), `until`
    passes (`timeout`) or an output passes `cap` (`output_limit`); what the second
    reader (fd 3) brings goes to `on_fd3` too, whose answer is the new `until`, and then
    tops the writers up. Closes the writers, not the readers. Returns the status, the
    outputs and the last `until`."""
    outputs = {fd: bytearray() for fd in readers}
    open_readers = list(readers)
    status = "ok"
    while open_readers or _ready(writers):
        left = until - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        r, w, _ = select.select(open_readers, _ready(writers), [], left)
        for writer in writers:
            if writer.fd in w:
                writer.write()
        for fd in r:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_readers.remove(fd)
                continue
            outputs[fd] += chunk
            if on_fd3 is not None and fd == readers[1]:
                until = on_fd3(chunk)
                for writer in writers:
                    writer.top_up()
            if len(outputs[fd]) > cap:
                status = "output_limit"
                open_readers = []
                break
        if status != "ok":
            break
    if status == "ok" and time.monotonic() > until:
        status = "timeout"  # this process was held up (stopped) while the child ran on
    for writer in writers:
        writer.close()
    return status, outputs, until


def _ready(writers: list[_Writer]) -> list[int]:
    return [fd for writer in writers for fd in writer.ready()]


def _stop(pid: int, status: str, until: float) -> tuple[str, int | None]:
    """Reap the child: at once if it was cut off, else by `until`; one still running
    then is killed and counts as a timeout. Returns the status and its exit code."""
    if status != "ok":
        kill_group(pid)
    code = _reap(pid, until if status == "ok" else time.monotonic() + 1)
    if code is None:
        kill_group(pid)
        code = _reap(pid, time.monotonic() + 5)
        status = "timeout" if status == "ok" else status
    return status, code


def _reap(pid: int, until: float) -> int | None:
    while True:
        done, status = _waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= until:
            return None
        time.sleep(0.001)
