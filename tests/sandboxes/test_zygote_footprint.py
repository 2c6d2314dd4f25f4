"""What the zygote maps, every job it forks copies and tears down: each mapping costs a
job a few microseconds. Libraries only a few jobs need are loaded by those jobs."""

from __future__ import annotations

import pytest

from rlvr.sandboxes import RunSpec
from rlvr.sandboxes.jobs import ValuesJob
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import wire

# Loaded on first use instead: by jobs that return bytes or fetch files (base64), and
# nowhere (fcntl, whose one call the zygote makes through libc).
NOT_IN_THE_ZYGOTE = ("binascii", "libz.so", "fcntl.cpython", "_lzma", "_bz2", "_ssl", "_hashlib")


def _zygote_pids(box: LocalSandbox) -> list[int]:
    box.isolation()
    assert box._proc is not None
    outer = box._proc.pid
    with open(f"/proc/{outer}/task/{outer}/children") as f:
        return [outer, *(int(pid) for pid in f.read().split())]


@pytest.mark.parametrize("library", NOT_IN_THE_ZYGOTE)
def test_the_zygote_does_not_map(sb: LocalSandbox, library: str) -> None:
    for pid in _zygote_pids(sb):
        with open(f"/proc/{pid}/maps") as f:
            assert library not in f.read(), f"zygote {pid} maps {library}"


@pytest.mark.parametrize("value", [b"", b"\x00\xff", bytes(range(256)), b"x" * 10_000])
def test_a_job_returning_bytes_imports_what_it_needs(sb: LocalSandbox, value: bytes) -> None:
    spec = ValuesJob(code=f"v = {value!r}", exprs=["v"], timeout_s=5)
    [result] = sb.run_many([RunSpec(spec)])
    record = result.records[-1]
    assert record["s"] == "ok", result
    assert wire.decode(record["v"]) == value
