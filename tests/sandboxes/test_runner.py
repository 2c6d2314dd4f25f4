"""The runner's shared pieces, run in this process: child processes, time limits,
the control records, and the runner's import layering."""

from __future__ import annotations

import ast
import dataclasses
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlvr.sandboxes.base import Limits
from rlvr.sandboxes.local import control
from rlvr.sandboxes.runner import core, entry, native, program, python, session

RUNNER = Path(core.__file__).parent


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _echo() -> None:
    chunks = []
    while chunk := os.read(0, 1 << 16):
        chunks.append(chunk)
    _write(1, b"".join(chunks))


def test_core_imports_no_other_runner_module() -> None:
    tree = ast.parse((RUNNER / "core.py").read_text())
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not [name for name in imported if name and name.startswith("rlvr")], imported


def test_every_mode_has_one_runner() -> None:
    assert set(entry.RUNNERS) == {*python.MODES, "split", *native.MODES, *program.MODES, *session.MODES}
    assert set(python.PROGRAM_MODES) == {*python.MODES, "split"}


def test_run_child_feeds_stdin_while_draining_stdout() -> None:
    data = os.urandom(1 << 20)  # more than a pipe holds: both ends must move together
    result = core.run_child(_echo, data, 10.0, 4 << 20)
    assert result["s"] == "ok" and result["code"] == 0
    assert result["out"] == data.decode("utf-8", "replace")


def test_run_child_output_limit() -> None:
    def spam() -> None:
        while True:
            _write(1, b"x" * 4096)

    started = time.monotonic()
    result = core.run_child(spam, b"", 10.0, 10_000)
    assert result["s"] == "output_limit" and result["out"] == "x" * 10_000
    assert time.monotonic() - started < 5


def test_run_child_output_limit_with_stdin_left() -> None:
    def spam() -> None:
        _write(1, b"x" * 100_000)

    fds_before = set(os.listdir("/proc/self/fd"))
    result = core.run_child(spam, b"y" * (1 << 20), 10.0, 1000)
    assert result["s"] == "output_limit"
    assert set(os.listdir("/proc/self/fd")) == fds_before  # the unwritten stdin too is closed


def test_run_child_timeout_kills_the_group() -> None:
    def sleeper() -> None:
        if os.fork() == 0:
            time.sleep(30)
        time.sleep(30)

    started = time.monotonic()
    result = core.run_child(sleeper, b"", 0.3, 1000)
    assert result["s"] == "timeout"
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("code", "status"),
    [(0, "ok"), (3, "error"), (core.EXIT_MEMORY, "memory")],
)
def test_run_child_exit_codes(code: int, status: str) -> None:
    result = core.run_child(lambda: os._exit(code), b"", 10.0, 1000)
    assert (result["s"], result["code"]) == (status, code)


def test_run_child_target_exception_is_an_error() -> None:
    def boom() -> None:
        raise ValueError("no")

    result = core.run_child(boom, b"", 10.0, 1000)
    assert (result["s"], result["code"]) == ("error", 126)


def test_run_child_extra_fd3() -> None:
    def both() -> None:
        _write(1, b"out")
        _write(3, b"chan")

    result = core.run_child(both, b"", 10.0, 1000, extra_fd3=True)
    assert (result["s"], result["out"], result["chan"]) == ("ok", "out", "chan")
    assert "chan" not in core.run_child(both, b"", 10.0, 1000)


@pytest.fixture
def alarm_handler() -> Iterator[None]:
    old = signal.getsignal(signal.SIGALRM)
    core.set_alarm_handler()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.usefixtures("alarm_handler")
def test_time_limit_raises_and_disarms() -> None:
    with pytest.raises(core.TestTimeout), core.TimeLimit(0.05):
        time.sleep(2)
    with core.TimeLimit(5.0):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with pytest.raises(KeyError), core.TimeLimit(5.0):
        raise KeyError("x")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_job_limits_are_read_off_limits() -> None:
    int_fields = {f.name for f in dataclasses.fields(Limits) if f.type in (int, "int")}
    assert set(control.JobLimits._fields) <= int_fields
    limits = Limits(cpu_s=3, memory_mb=700, nproc=9, fsize_mb=5, nofile=77, tmp_mb=33)
    job_id, sent = control.parse_run(control.run(42, limits))
    assert job_id == 42
    assert sent == control.JobLimits(cpu_s=3, memory_mb=700, nproc=9, fsize_mb=5, nofile=77, tmp_mb=33)


def test_control_records_round_trip() -> None:
    packet = control.exited(1, 0, 0, 0.25) + control.exited(2, -1, 9, 1.5, True)
    assert list(control.parse_exits(packet)) == [(1, 0, 0, 0.25, False), (2, -1, 9, 1.5, True)]
    assert control.parse_error(control.error(7, "é" * 5000)) == (7, ("é" * 2000))
    assert control.kill(5)[:1] == control.KILL_TAG and control.KILL.unpack(control.kill(5))[1] == 5
