"""Job specs that several sandbox tests build."""

from __future__ import annotations

import shutil
from typing import Any


def native_job(language: str, code: str, inputs: list[Any], **extra: Any) -> dict[str, Any]:
    """A `native_stdio` job (or `native_call`, by `mode=`) with the host's toolchains."""
    return {
        "mode": "native_stdio",
        "language": language,
        "code": code,
        "inputs": inputs,
        "timeout_s": 2,
        "max_output": 1 << 16,
        "memory_mb": 512,
        "gxx": shutil.which("g++"),
        "node": shutil.which("node"),
        "compile_timeout_s": 30,
        **extra,
    }
