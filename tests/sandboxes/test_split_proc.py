"""Split jobs: the program half never opens the test half's /proc entries (issue 30,
class 4), neither on its first line, racing the test half's start, nor later.

The program half starts only once the test half is under its own uid, not dumpable,
and has taken the job (`split.run`), and /proc shows a job only its own uid's
processes (`jobroot.mount_proc`). Each probe looks for the test half by every route:
its pid as /proc numbers it (`/proc/self/stat`), `getppid()`, and every pid /proc lists.
"""

from __future__ import annotations

import pytest

from rlvr.sandboxes.local.sandbox import LocalSandbox
from tests.sandboxes.test_split_trust import run_split, statuses

ENTRIES = ["mem", "environ", "fd/0", "fd/3", "cmdline", "maps", "status", "root/tmp", "cwd"]
PROBE = (
    "import os\n"
    "def probe():\n"
    "    parents = {os.getppid(), int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[1])}\n"
    "    me = str(os.getpid()), str(int(open('/proc/self/stat').read().split()[0]))\n"
    "    pids = parents | {int(p) for p in os.listdir('/proc') if p.isdigit() and p not in me}\n"
    "    opened = []\n"
    "    for pid in sorted(pids):\n"
    "        for entry in ENTRIES:\n"
    "            try:\n"
    "                fd = os.open(f'/proc/{pid}/{entry}', os.O_RDONLY)\n"
    "            except OSError:\n"
    "                continue\n"
    "            KEPT.append(fd)\n"
    "            opened.append(f'{pid}/{entry}')\n"
    "    return opened\n"
)


def _program(first_line_tries: int) -> str:
    # The probe runs at the program's first line, `first_line_tries` times in a row
    # (a race with the test half's start), and again when the tests call `later()`.
    return (
        f"ENTRIES = {ENTRIES!r}\nKEPT = []\n"
        + PROBE
        + f"FIRST = sorted({{x for _ in range({first_line_tries}) for x in probe()}})\n"
        + "def first():\n    return FIRST\n"
        + "def later():\n    return probe()\n"
        + "def kept():\n    return len(KEPT)\n"
    )


@pytest.mark.parametrize("tries", [1, 200])
def test_the_program_half_cannot_open_the_test_half_s_proc(sb: LocalSandbox, tries: int) -> None:
    records = run_split(sb, _program(tries), ["assert first() == []", "assert later() == []", "assert kept() == 0"])
    assert statuses(records) == ["pass"] * 3, records


def test_the_race_on_the_first_line_never_wins(sb: LocalSandbox) -> None:
    """A race that wins 1 in 50 is a working exploit: many jobs, each racing."""
    program = _program(20)
    for _ in range(50):
        records = run_split(sb, program, ["assert first() == []"])
        assert statuses(records) == ["pass"], records


def test_the_probe_sees_its_own_proc(sb: LocalSandbox) -> None:
    """The probe can open what it may: so an empty answer above is the wall, not a
    probe that never opens anything."""
    code = "import os\ndef mine():\n    return len(os.read(os.open('/proc/self/cmdline', os.O_RDONLY), 100)) > 0\n"
    assert statuses(run_split(sb, code, ["assert mine() is True"])) == ["pass"]
