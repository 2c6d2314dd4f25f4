"""Call and values jobs get each test's input only once that test's clock has started
(issue 30, class 3), on both backends: the program runs in the runner's own process,
and a thread of it that found a slow test's input early could work on it while the
fast tests before it idle just under their limit, each record coming in time.

Each hostile program here starts a thread at import that hunts for the slow test's
input by one route (the runner's frames, the garbage collector's objects, the data fd
peeked at, `tee`d, read or reopened) and, once it has it, is busy on it for longer than
a test's limit and its slack; each fast test sleeps just under the limit meanwhile. Fed
every input at once, the slow test would find its answer ready; fed in lockstep, the
hunt finds the input only when its test starts, and the test times out. Asserted: the
slow test is not passed, and nothing is masked. No assertion on the machine's speed:
the slow work is longer than the limit and its slack on any machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from rlvr.sandboxes import RunSpec, Sandbox, Status
from rlvr.sandboxes.base import Limits, RunResult
from rlvr.sandboxes.jobs import CallJob, ValuesJob
from rlvr.sandboxes.local import pacing
from tests.sandboxes.backends import BACKENDS, open_backend

LIMIT_S = 1.0
# The slow test's CPU: past its limit and the client's slack, and within what the fast
# tests' idling (`FAST_TESTS` x `IDLE_S`) would give a thread that had it from the start.
SLOW_S = LIMIT_S + pacing.TEST_SLACK_S + 0.35
IDLE_S = 0.9 * LIMIT_S
FAST_TESTS = 3
MARK = 987654321
# A program that breaks the data fd waits there until this wall limit.
WALL = Limits(wall_s=15, cpu_s=30)

HUNTER = r"""
import gc, marshal, os, select, socket, struct, sys, threading, time
# Made at run time, and its own objects skipped: what the hunt finds must be the job's.
MARK = int({head!r}) * 1000 + {tail}
NEEDLES = (str(MARK).encode(), struct.pack('<i', MARK))
_done = threading.Event()

def _has(obj, depth=0):
    if obj is globals() or obj is NEEDLES:
        return False
    if obj == MARK and type(obj) is int:
        return True
    if type(obj) is str:
        return str(MARK) in obj
    if type(obj) in (bytes, bytearray, memoryview):
        return any(n in bytes(obj) for n in NEEDLES)
    if hasattr(obj, 'co_consts'):
        return any(_has(c, depth + 1) for c in obj.co_consts)
    if depth < 3 and type(obj) in (list, tuple, set, frozenset):
        return any(_has(x, depth + 1) for x in list(obj))
    if depth < 3 and type(obj) is dict:
        return any(_has(x, depth + 1) for x in list(obj.values()))
    return False

def frames():
    for frame in list(sys._current_frames().values()):
        while frame is not None:
            own = frame.f_globals is globals() and frame.f_code.co_name == '<module>'
            if not own and any(_has(v) for v in list(frame.f_locals.values())):
                return True
            frame = frame.f_back
    return False

def collected():
    return any(_has(o) for o in gc.get_objects() if type(o) in (list, tuple, dict))

def peek():
    for fd in range(64):
        try:
            copy = os.dup(fd)
        except OSError:
            continue
        try:
            sock = socket.socket(fileno=copy)
        except OSError:
            os.close(copy)
            continue
        try:
            data = sock.recv(1 << 16, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except OSError:
            data = b''
        finally:
            sock.close()
        if any(n in data for n in NEEDLES):
            return True
    return False

def tee():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for fd in range(64):
        r, w = os.pipe()
        try:
            n = libc.tee(fd, w, 1 << 16, 2)  # SPLICE_F_NONBLOCK
            data = os.read(r, 1 << 16) if n > 0 else b''
        finally:
            os.close(r); os.close(w)
        if any(n in data for n in NEEDLES):
            return True
    return False

def read_all():
    for fd in range(64):
        try:
            if select.select([fd], [], [], 0)[0] and any(n in os.read(fd, 1 << 16) for n in NEEDLES):
                return True
        except (OSError, ValueError):
            pass
    return False

def reopen():
    for fd in range(64):
        try:
            other = os.open(f'/proc/self/fd/{{fd}}', os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if any(n in os.read(other, 1 << 16) for n in NEEDLES):
                return True
        except OSError:
            pass
        finally:
            os.close(other)
    return False

def _work():
    while not {route}():
        time.sleep(0.002)
    end = time.process_time() + {slow}
    while time.process_time() < end:
        pass
    _done.set()

threading.Thread(target=_work, daemon=True).start()

def f(n):
    if n != MARK:
        time.sleep({idle})
        return n * 2
    _done.wait()
    return n * 2
"""

ROUTES = ("frames", "collected", "peek", "tee", "read_all", "reopen")
# Routes that take data off the fd: the runner may then wait for an input it will
# never get, and the job runs to its wall limit.
STEALING = ("read_all", "reopen")


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    yield from open_backend(request.param)


def hunter(route: str) -> str:
    return HUNTER.format(head=str(MARK // 1000), tail=MARK % 1000, route=route, slow=SLOW_S, idle=IDLE_S)


def call_job(code: str) -> CallJob:
    inputs = [[n] for n in range(1, FAST_TESTS + 1)] + [[MARK]]
    return CallJob(code=code, fn_name="f", inputs=inputs, timeout_s=LIMIT_S)


def values_job(code: str) -> ValuesJob:
    exprs = [f"f({n})" for n in range(1, FAST_TESTS + 1)] + [f"f({MARK})"]
    return ValuesJob(code=code, exprs=exprs, timeout_s=LIMIT_S)


JOBS: dict[str, Callable[[str], CallJob | ValuesJob]] = {"call": call_job, "values": values_job}


def unmasked(result: RunResult) -> None:
    assert result.infra_error is None, result
    assert result.status in (Status.OK, Status.TIMEOUT), result
    assert result.records[:1] == [{"load": "ok"}], result.records


def slow_test(result: RunResult) -> list[dict[str, object]]:
    return [r for r in result.records if r.get("i") == FAST_TESTS]


@pytest.mark.parametrize("mode", sorted(JOBS))
@pytest.mark.parametrize("route", ROUTES)
def test_a_thread_gets_no_later_test_input_early(backend: Sandbox, mode: str, route: str) -> None:
    result = backend.run(RunSpec(JOBS[mode](hunter(route)), WALL))
    unmasked(result)
    slow = slow_test(result)
    if route in STEALING:
        assert all(r.get("s") != "ok" for r in slow), result.records
        return
    assert slow and slow[0]["s"] == "timeout", result.records


@pytest.mark.parametrize("mode", sorted(JOBS))
def test_the_same_work_in_line_times_out(backend: Sandbox, mode: str) -> None:
    # The hunt's verdict without a thread: what the hostile programs must not beat.
    code = (
        f"import time\ndef f(n):\n    end = time.process_time() + ({SLOW_S} if n == {MARK} else 0)\n"
        "    while time.process_time() < end:\n        pass\n    return n * 2\n"
    )
    result = backend.run(RunSpec(JOBS[mode](code), WALL))
    unmasked(result)
    assert [r["s"] for r in result.records[1:]] == ["ok"] * FAST_TESTS + ["timeout"], result.records


@pytest.mark.parametrize("mode", sorted(JOBS))
def test_honest_programs_pass_every_test(backend: Sandbox, mode: str) -> None:
    # Reading stdin at import gets nothing (and waits for nothing): the tests' inputs
    # are not on it.
    code = "import sys\nassert sys.stdin.read() == ''\ndef f(n):\n    return n * 2\n"
    result = backend.run(RunSpec(JOBS[mode](code), WALL))
    unmasked(result)
    assert result.status == Status.OK, result
    values = [r.get("v") for r in result.records[1:]]
    assert [r["s"] for r in result.records[1:]] == ["ok"] * (FAST_TESTS + 1), result.records
    assert values == [n * 2 for n in (*range(1, FAST_TESTS + 1), MARK)], result.records


@pytest.mark.parametrize("mode", sorted(JOBS))
def test_a_program_that_closes_every_fd_fails_alone(backend: Sandbox, mode: str) -> None:
    # The data fd and the channel gone: the runner reads no further input and writes no
    # record, which costs the program its tests, never the item.
    code = "import os\ndef f(n):\n    os.closerange(0, 256)\n    return n * 2\n"
    result = backend.run(RunSpec(JOBS[mode](code), WALL))
    assert result.infra_error is None, result
    assert not [r for r in result.records if r.get("i") == FAST_TESTS], result.records
