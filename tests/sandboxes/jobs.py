"""Job specs that several sandbox tests build."""

from __future__ import annotations

import dataclasses
import shutil
from typing import Any

from rlvr.sandboxes import RunSpec, Sandbox, Status
from rlvr.sandboxes.jobs import CallJob, NativeStdioJob
from rlvr.sandboxes.runner import wire


def native_job(language: str, code: str, inputs: list[Any], **extra: Any) -> NativeStdioJob:
    """A `native_stdio` job with the host's toolchains; `extra` overrides its fields."""
    job = NativeStdioJob(
        language=language,
        code=code,
        inputs=inputs,
        timeout_s=2,
        max_output=1 << 16,
        memory_mb=512,
        compile_timeout_s=30,
        gxx=shutil.which("g++"),
        node=shutil.which("node"),
    )
    return dataclasses.replace(job, **extra)


def returned(sb: Sandbox, body: str, imports: str = "os, socket") -> Any:
    """What `f()` returns when its body is `body` (lines of Python), run as a call job:
    what a program sees from inside the sandbox."""
    code = f"import {imports}\ndef f():\n" + "".join(f"    {line}\n" for line in body.split("\n"))
    result = sb.run(RunSpec(CallJob(code=code, fn_name="f", inputs=[[]], timeout_s=10)))
    assert result.status == Status.OK and result.records[-1].get("s") == "ok", result
    return wire.decode(result.records[-1]["v"])
