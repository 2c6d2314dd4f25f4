"""The tests' inputs of a job, as its runner holds them until each test gets its own:
a stdio job's, which follow its frame (`Inputs`), and a call or values job's, which
the trusted side sends one at a time as each test's clock starts (`Steps`)."""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from typing import Any

from rlvr.sandboxes.runner.core import DATA_FD, MAX_FRAME, Frame, read_frame

# Bound at import, as `core`'s are: the program may rebind `os`'s attributes.
_close = os.close


class Inputs:
    """A stdio job's inputs, which come after its frame (`input_sizes` says how long
    each is), held where no test's process can read them: memory that a fork does not
    copy (MADV_DONTFORK), in a runner that `undumpable` has closed to its children.
    A test's process gets its own input alone, as its stdin (`run_child`)."""

    def __init__(self, sizes: list[int], fd: int = DATA_FD) -> None:
        if type(sizes) is not list or not all(type(n) is int and n >= 0 for n in sizes):
            raise ValueError("bad input sizes")
        total = sum(sizes)
        if total > MAX_FRAME:
            raise ValueError("job inputs too large")
        self.spans: list[tuple[int, int]] = []
        for size in sizes:
            start = self.spans[-1][1] if self.spans else 0
            self.spans.append((start, start + size))
        self._memory = mmap.mmap(-1, max(total, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self._memory.madvise(mmap.MADV_DONTFORK)
        self._view = memoryview(self._memory)
        _read_into(fd, self._view[:total])

    def __len__(self) -> int:
        return len(self.spans)

    def __getitem__(self, index: int) -> memoryview:
        start, end = self.spans[index]
        return self._view[start:end]


def _read_into(fd: int, view: memoryview) -> None:
    while view:
        n = os.readv(fd, [view])
        if not n:
            raise EOFError("job inputs ended early")
        view = view[n:]


def job_inputs(job: Frame) -> Inputs | list[bytes]:
    """A stdio job's inputs: those that came after its frame (`Inputs`), read now, or
    those in the frame itself (a frame from a client that sends them there)."""
    sizes = job.get("input_sizes")
    if sizes is not None:
        return Inputs(sizes)
    return [text.encode() for text in job["inputs"]]


class Steps:
    """The inputs of a job's tests that come one at a time (a call or values job's):
    `steps` frames after the job's, each sent by the trusted side only once the record
    before it has reached it, so that a program that runs in this process holds no
    test's input before that test's clock has started (`rlvr.sandboxes.local.pacing`).
    Read from a copy of the data fd, which `detach_stdin` leaves. What the program does
    to that fd (reads it itself, closes it) costs only its own tests: a step that
    cannot be read ends them (`StopIteration`)."""

    def __init__(self, count: int, fd: int = DATA_FD) -> None:
        if type(count) is not int or count < 0:
            raise ValueError("bad step count")
        self.count = count
        self.fd = os.dup(fd)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Any]:
        try:
            for _ in range(self.count):
                yield read_frame(self.fd)
        except (EOFError, ValueError, TypeError, OSError):
            return
        finally:
            _close(self.fd)
