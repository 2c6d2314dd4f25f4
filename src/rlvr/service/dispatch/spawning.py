"""Worker processes that never run the user's `__main__`.

multiprocessing prepares each forkserver child as it would a spawned one: it imports the
parent's main script again, as `__mp_main__`. For a service started by `rlvr serve` that
costs nothing; for `RewardClient(None)` in a user's script it runs the script again in
every worker, and a script without an `if __name__ == "__main__":` guard starts a client
there, which cannot start processes while bootstrapping, so the worker dies and is
replaced, forever. A script read from stdin (`<stdin>`) has no file to import at all.

Our workers need nothing of the user's main module: they are handed `rlvr` functions.
So while a child is launched, the main module the preparation reads is an empty one,
under a lock, for the few milliseconds of the launch.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Iterator
from multiprocessing import context
from typing import Any

_MAIN_SWAP = threading.Lock()


@contextlib.contextmanager
def _user_main_hidden() -> Iterator[None]:
    with _MAIN_SWAP:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


class _WorkerProcess(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        with _user_main_hidden():
            return context.ForkServerProcess._Popen(process_obj)


class WorkerContext(context.ForkServerContext):
    """The forkserver start method, with children that do not import the parent's
    `__main__` (see the module's notes). Pass it wherever a multiprocessing context goes."""

    Process = _WorkerProcess
