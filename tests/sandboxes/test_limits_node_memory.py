"""A node job's memory is its program's limit, off-heap buffers included (issue 30,
class 4): V8 needs gigabytes of address space, so the job's address-space cap stays
large, while its cgroup holds the program to its own `memory_mb` (and node's footprint,
`NODE_RUNTIME_MB`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.config import DEFAULT_NODE_MEMORY_MB, NODE_RUNTIME_MB
from rlvr.sandboxes.jobs import NativeStdioJob, ProgramJob
from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from rlvr.sandboxes.local.wiring import control_limits
from tests.services import require

PROGRAM_MB = 512
# What the verifier gives a node job: room for V8's reservations.
NODE_LIMITS = Limits(wall_s=60, cpu_s=60, memory_mb=DEFAULT_NODE_MEMORY_MB)


def _holding(mib: int, how: str) -> str:
    """A program that holds `mib` MiB live, in 64 MiB pieces, touched, then prints 'held'."""
    return (
        f"const held = [];\nfor (let i = 0; i < {mib // 64}; i++) {{\n"
        f"  const b = {how}(64 << 20); b.fill(1); held.push(b);\n}}\n"
        "console.log('held', held.length);\n"
    )


ALLOCATORS = {
    "allocUnsafeSlow": "Buffer.allocUnsafeSlow",
    "alloc": "Buffer.alloc",
    "arraybuffer": "((n) => new Uint8Array(new ArrayBuffer(n)))",
}


@pytest.fixture(scope="module")
def box() -> Iterator[LocalSandbox]:
    sandbox = get_local_sandbox()
    if not sandbox.isolation().get("per_job_memory"):
        require(False, "a memory cgroup per job")
    if shutil.which("node") is None:
        require(False, "node")
    yield sandbox


def _stdio(code: str) -> NativeStdioJob:
    return NativeStdioJob(
        language="javascript",
        code=code,
        inputs=[""],
        timeout_s=20,
        max_output=1 << 16,
        memory_mb=PROGRAM_MB,
        compile_timeout_s=20,
        node=shutil.which("node"),
    )


@pytest.mark.parametrize("how", sorted(ALLOCATORS))
def test_off_heap_memory_past_the_limit_fails(box: LocalSandbox, how: str) -> None:
    result = box.run(RunSpec(_stdio(_holding(768, ALLOCATORS[how])), NODE_LIMITS))
    tests = [r for r in result.records if r.get("i") == 0]
    assert result.status == Status.MEMORY or (tests and tests[0]["s"] != "ok"), result
    assert not (tests and "held" in tests[0].get("out", "")), result


@pytest.mark.parametrize("how", sorted(ALLOCATORS))
def test_off_heap_memory_within_the_limit_passes(box: LocalSandbox, how: str) -> None:
    result = box.run(RunSpec(_stdio(_holding(256, ALLOCATORS[how])), NODE_LIMITS))
    assert result.status == Status.OK and [r.get("out") for r in result.records if "i" in r] == ["held 4\n"], result


def test_a_run_code_node_program_is_held_to_its_limit(box: LocalSandbox) -> None:
    job = ProgramJob(
        language="javascript",
        code=_holding(768, "Buffer.allocUnsafeSlow"),
        stdin="",
        files={},
        fetch_files=[],
        compile_timeout_s=10,
        run_timeout_s=20,
        memory_mb=PROGRAM_MB,
        max_output=1 << 16,
        max_fetch_bytes=1 << 16,
        node=shutil.which("node"),
    )
    result = box.run(RunSpec(job, NODE_LIMITS))
    run = [r for r in result.records if r.get("step") == "run"]
    assert result.status == Status.MEMORY or (run and run[0]["s"] != "ok"), result


def test_node_jobs_keep_their_address_space() -> None:
    limits = control_limits(RunSpec(_stdio(""), NODE_LIMITS))
    assert limits.memory_mb == PROGRAM_MB + NODE_RUNTIME_MB
    assert limits.address_space_mb == DEFAULT_NODE_MEMORY_MB
    # Every other job is held by its limits as given.
    python = RunSpec(ProgramJob("python", "", "", {}, [], 1, 1, PROGRAM_MB, 1, 1), NODE_LIMITS)
    assert control_limits(python) == NODE_LIMITS
