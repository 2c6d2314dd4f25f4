"""CPU time of a unit, read from /proc by the thread that watches its worker.

A unit's CPU is what its worker process used since the unit began, plus what every
process below the worker started since then used: the programs a verifier runs (the
code verifier's sandboxed jobs, forked by a long-lived zygote) are the graded item's
work too. Long-lived helpers (the zygote itself) started before the unit are left out,
or their lifetime of CPU would count against every unit.
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
    (sleeping, blocked on input), not a stall of the grader."""

    cpu_s: float
    program_alive: bool


def unit_usage(pid: int, own_cpu_at_start: float, started_monotonic: float) -> UnitUsage | None:
    """CPU seconds the unit started at `started_monotonic` has used in worker `pid` and
    in the processes started below it since; None once the worker is gone."""
    own = process_cpu_s(pid)
    if own is None:
        return None
    total = max(0.0, own - own_cpu_at_start)
    alive = False
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
        frontier.extend(_children(child))
    return UnitUsage(total, alive)
