"""A program past its memory limit, in any of its processes, scores 0 as judges score it
(issue 10, class 6): `incorrect`, `details.limit == "memory"`, never masked, even when
the tests it answered before the kill passed."""

from __future__ import annotations

import pytest

from rlvr.sandboxes.local.sandbox import get_local_sandbox
from tests.services import require
from tests.verifiers.code.conftest import grade

TESTS = {"tests": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}

# Each program answers every test right, and also goes over `memory_mb` (64) in sum.
HOGS = {
    "three children under the limit each, over it together": """
import os, time
def add(a, b):
    return a + b
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = bytearray(40 << 20)
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
""",
    "memfd": """
import os
def add(a, b):
    return a + b
fds = [os.memfd_create(f"hog{i}") for i in range(6)]
for fd in fds:
    os.write(fd, b"x" * (15 << 20))
""",
    "tmpfs file": """
def add(a, b):
    return a + b
for i in range(6):
    with open(f"/tmp/hog{i}", "wb") as f:
        f.write(b"x" * (15 << 20))
""",
}


@pytest.fixture(scope="module", autouse=True)
def per_job_memory() -> None:
    require(get_local_sandbox().isolation().get("per_job_memory") is True, "per-job cgroups (run as root)")


@pytest.mark.parametrize("program", list(HOGS.values()), ids=list(HOGS))
def test_a_program_over_its_memory_scores_zero_unmasked(program: str) -> None:
    out = grade(f"```python\n{program}\n```", TESTS, memory_mb=64)
    assert out.mask is False, out
    assert out.score == 0.0 and out.verdict.value == "incorrect", out
    assert out.details.get("limit") == "memory", out.details


def test_the_same_program_within_its_memory_passes() -> None:
    out = grade("```python\ndef add(a, b):\n    return a + b\n```", TESTS, memory_mb=64)
    assert out.score == 1.0 and "limit" not in out.details, out
