"""SandboxFusion's `run_code_in_sandbox` (`sandbox/utils/sandbox_client.py`), the client
its dataset tests use, pointed at rlvr: a POST to `/run_code` over HTTP. As there, an
answer other than 200 and a `SandboxError` raise (the caller never scores them)."""

from __future__ import annotations

import httpx

from sandbox import rlvr
from sandbox.server.sandbox_api import RunCodeRequest, RunCodeResponse, RunStatus


async def run_code_in_sandbox(request: RunCodeRequest) -> RunCodeResponse:
    async with httpx.AsyncClient(base_url=rlvr.url(), timeout=rlvr.TIMEOUT_S) as client:
        response = await client.post("/run_code", json=request.model_dump())
    if response.status_code != 200:
        raise RuntimeError(f"rlvr answered {response.status_code}: {response.text[:500]}")
    result = RunCodeResponse(**response.json())
    if result.status == RunStatus.SandboxError:
        raise RuntimeError(f"rlvr answered SandboxError: {result.message}")
    return result
