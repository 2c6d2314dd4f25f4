"""The local worker pool (embedded mode): worker processes build their verifiers from the config they are given."""

from __future__ import annotations

import asyncio

import pytest

from rlvr.sandboxes import SandboxUnavailable, open_sandbox
from rlvr.sandboxes.config import DockerConfig, SandboxConfig
from rlvr.service.dispatch.pool import PoolDispatcher
from rlvr.service.work import Unit, UnitResult, canonical, prepared_key, unit_key
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.registry import Registry


def code_unit(body: str = "return x", deadline_s: float = 30.0) -> Unit:
    params, ground_truth = {}, {"tests": ["assert f(1) == 1"]}
    version = Registry(use_entry_points=False).get("code").version
    prep = prepared_key("code", version, canonical(params), canonical(ground_truth))
    response = f"```python\ndef f(x):\n    {body}\n```"
    return Unit(unit_key(prep, "", response), prep, "code", params, ground_truth, "", response, deadline_s)


async def grade_one(config: BuiltinConfig, unit: Unit) -> UnitResult:
    pool = PoolDispatcher(
        config=config, workers=1, chunk_size=1, max_rss_mb=2048, stall_wall_factor=3.0, stall_retries=1
    )
    await pool.start()
    try:
        [result] = await pool.run([unit])
    finally:
        await pool.close()
    return result


def test_workers_use_the_sandbox_policy_they_were_given() -> None:
    # A docker backend whose image no daemon has: it refuses wherever the test runs.
    policy = SandboxConfig(backend="docker", docker=DockerConfig(image="rlvr-test-no-such-image:none"))
    with pytest.raises(SandboxUnavailable):
        open_sandbox(policy)
    # Nothing in the environment names docker: only the config reaches the worker.
    result = asyncio.run(grade_one(BuiltinConfig(policy), code_unit()))
    assert result.mask and "sandbox unavailable" in result.reason, result


def test_a_program_spinning_in_the_sandbox_used_its_time() -> None:
    # The per-test limit (5 s) is past the unit's deadline (1 s of CPU): the service's
    # deadline decides, and the CPU the program burnt below the worker counts.
    result = asyncio.run(grade_one(BuiltinConfig(), code_unit("while True: pass", deadline_s=1.0)))
    if result.mask and "sandbox" in result.reason:
        pytest.skip(f"no sandbox here: {result.reason}")
    assert result.verdict == "timeout" and result.mask is False, result
    assert result.details["cpu_s"] >= 1.0
