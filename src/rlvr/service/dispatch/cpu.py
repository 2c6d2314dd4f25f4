"""CPU time of a unit, read from /proc by the thread that watches its worker.

A unit's CPU is what its worker process used since the unit began, plus what every
process below the worker started since then used: the programs a verifier runs (the
code verifier's sandboxed jobs, forked by a long-lived zygote) are the graded item's
work too. Long-lived helpers (the zygote itself) started before the unit are left out,
or their lifetime of CPU would count against every unit.

So is the time a unit's processes were ready to run but waited for a CPU (the run
queue's delay, `/proc/<pid>/schedstat`): on a busy machine, or in a container whose CPU
quota is spent, wall time passes with little CPU used, and that is the machine's doing,
not a grader that stopped or hung. A stopped or blocked process does not wait in the
run queue, so its wall time still reads as a stall.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# Indices in /proc/<pid>/stat after the command name: state, ..., utime, stime, ..., starttime.
_UTIME, _STIME, _STARTTIME = 11, 12, 19


def _stat(pid: int) -> list[bytes] | None:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    # The command name may itself hold spaces or parentheses.
    return data[data.rindex(b")") + 2 :].split()


def _cpu(fields: list[bytes]) -> float:
    return (int(fields[_UTIME]) + int(fields[_STIME])) / CLOCK_TICKS


def run_delay_s(pid: int) -> float | None:
    """Seconds process `pid`'s main thread has spent ready to run, waiting for a CPU;
    None once it is gone (or on a kernel without schedstat)."""
    try:
        fields = Path(f"/proc/{pid}/schedstat").read_bytes().split()
        return int(fields[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class RunQueueWait:
    """How long a worker has waited for a CPU since the thread watching it first saw
    its current mark (the baseline is read then, off the worker's hot path: up to one
    look's interval of waiting is left uncounted, which errs toward a stall)."""

    def __init__(self) -> None:
        self._mark: object = None
        self._baseline = 0.0

    def since_mark(self, pid: int, mark: object) -> float:
        now = run_delay_s(pid)
        if now is None:
            return 0.0
        if mark != self._mark:
            self._mark, self._baseline = mark, now
        return max(0.0, now - self._baseline)


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` (all its threads); None once it is gone."""
    fields = _stat(pid)
    return None if fields is None else _cpu(fields)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            found.extend(int(c) for c in text.split())
    except OSError:
        pass  # gone, or a kernel without the children file: the worker's own CPU still counts
    return found


class UnitUsage(NamedTuple):
    """What a unit has used so far. `program_alive`: a process started for the unit
    (a sandboxed program) is still running, so the wall time is the program's to spend
    (sleeping, blocked on input), not a stall of the grader. `program_waited_s`: the
    longest any process started for the unit waited in the run queue."""

    cpu_s: float
    program_alive: bool
    program_waited_s: float = 0.0


def unit_usage(pid: int, own_cpu_at_start: float, started_monotonic: float) -> UnitUsage | None:
    """CPU seconds the unit started at `started_monotonic` has used in worker `pid` and
    in the processes started below it since; None once the worker is gone."""
    own = process_cpu_s(pid)
    if own is None:
        return None
    total = max(0.0, own - own_cpu_at_start)
    alive = False
    waited = 0.0
    # Process start times are in ticks since boot; the unit's start, moved to that clock.
    start_ticks = (started_monotonic + time.clock_gettime(time.CLOCK_BOOTTIME) - time.monotonic()) * CLOCK_TICKS
    frontier = _children(pid)
    while frontier:
        child = frontier.pop()
        fields = _stat(child)
        if fields is None:
            continue
        if int(fields[_STARTTIME]) + 1 >= start_ticks:
            total += _cpu(fields)
            alive = alive or fields[0] != b"Z"
            waited = max(waited, run_delay_s(child) or 0.0)
        frontier.extend(_children(child))
    return UnitUsage(total, alive, waited)
