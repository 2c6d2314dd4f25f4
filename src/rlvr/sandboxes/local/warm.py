"""The zygote runs a few jobs of its own through the runner before it forks any: what a
freshly forked job writes to, it copies, a page at a time, and much of what the first
run of the runner's path writes is the same in every job.

- The interpreter's type attribute cache fills with the lookups the runner makes.
- The runner's functions are quickened (CPython specialises their bytecode in place
  after a few calls).
- Names are interned; the json encoder and `marshal` build what they cache.

Done in the zygote, all of this is shared by every job instead of copied by each one.
Measured here, a trivial job takes 236 page faults instead of 266 (224 with the zygote's
symbols bound at its startup, see `zygote.main`).

The jobs are constants of this module (trusted code, run as the zygote, with no
privileges to drop), and take the job path from the frame on: marshalled as the client
sends them (`precompile`), read back, run by the runner, with their records written to
/dev/null.
"""

from __future__ import annotations

import _signal
import os
from typing import Any

from rlvr.sandboxes.runner import audit, core, python

# Enough calls of each function for CPython 3.11 to quicken and specialise it.
ROUNDS = 20
JOBS: tuple[dict[str, Any], ...] = (
    {
        "mode": "values",
        "code": "def add(a, b):\n    return a + b\n",
        "exprs": ["add(1, 2)", "add(2, 3)"],
        "timeout_s": 2.0,
    },
    {
        "mode": "call",
        "code": "from typing import List\n\ndef total(xs: List[int]) -> int:\n    return sum(xs)\n",
        "fn_name": "total",
        "inputs": [[[1, 2]], [[3]]],
        "timeout_s": 2.0,
    },
    {
        "mode": "values",
        "code": "def fail(x):\n    raise ValueError(x)\n",
        "exprs": ["fail(1)", "[1, 'a', 2.5, None, (1, True), {'k': [1]}]"],
        "timeout_s": 2.0,
    },
)


class _Unprivileged:
    """The zygote's own runs have nothing to drop."""

    def drop_untrusted(self) -> None:
        pass

    def drop_trusted(self) -> None:
        pass


def warm_up() -> None:
    """Run `JOBS`, `ROUNDS` times, as jobs would; leaves fd 0 and SIGALRM as it found them."""
    stdin = os.dup(0)
    sink = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    try:
        with audit.paused():
            for _ in range(ROUNDS):
                for spec in JOBS:
                    _run_one(dict(spec), sink)
    finally:
        os.dup2(stdin, 0)
        os.close(stdin)
        os.close(sink)
        _signal.signal(_signal.SIGALRM, _signal.SIG_DFL)


def _run_one(job: dict[str, Any], sink: int) -> None:
    python.precompile(job)
    steps = python.steps_apart(job) or []
    read, write = os.pipe()
    try:
        # A few hundred bytes: the pipe holds them. The tests' inputs follow the frame,
        # on fd 0, as a job's client sends them (`inputs.Steps`).
        os.write(write, core.frame(job) + b"".join(steps))
        os.dup2(read, 0)
        frame = core.read_frame()
        python.run(frame, _Unprivileged(), core.Channel(sink))
    finally:
        os.close(read)
        os.close(write)
