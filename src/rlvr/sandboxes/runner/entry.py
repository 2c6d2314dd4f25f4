"""The runner's entry point: read a job's first frame and hand it to the runner of its
`mode`. It sits above the runner modules so that none of them imports another to
dispatch; the zygote imports it (and so every runner) before it forks any job, which
leaves a job a dictionary lookup to find its runner.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from rlvr.sandboxes.runner import core, native, program, python, session, split

Runner = Callable[[core.Frame, core.Privileges, core.Channel], int]

RUNNERS: dict[str, Runner] = {
    **dict.fromkeys(python.MODES, python.run),
    "split": split.run,
    **dict.fromkeys(native.MODES, native.run),
    **dict.fromkeys(program.MODES, program.run),
    **dict.fromkeys(session.MODES, session.run),
}


def main(priv: core.Privileges) -> int:
    """Run one job: read its first frame, dispatch on `mode`. The caller exits with
    the returned code; records are on the channel."""
    try:
        job = core.read_frame()
    except (EOFError, ValueError, OSError):
        return core.EXIT_BAD_JOB
    mode = job.get("mode")
    run = RUNNERS.get(mode) if type(mode) is str else None
    if run is None:
        print(f"runner: unknown mode {mode!r}", file=sys.stderr)
        return core.EXIT_BAD_JOB
    try:
        return run(job, priv, core.Channel())
    except MemoryError:
        return core.EXIT_MEMORY
