"""Where the `compile` verifier finds its toolchains: on the sandbox's PATH, not the
service's. A rustc installed in /usr/bin or /usr/local/bin runs Rust items; a toolchain
that is missing there masks them, saying where it looked and what to install."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rlvr.sandboxes import RunResult, Status
from rlvr.verifiers.compile import driver, verifier
from rlvr.verifiers.compile.steps import ENV, read_report
from tests.verifiers.compile.conftest import grade

SYSTEM_RUSTC = [p for p in ("/usr/local/bin/rustc", "/usr/bin/rustc") if os.access(p, os.X_OK)]


@pytest.mark.usefixtures("isolated")
@pytest.mark.skipif(not SYSTEM_RUSTC, reason="no rustc in /usr/bin or /usr/local/bin (CI installs Debian's)")
def test_a_system_rustc_runs_rust_items() -> None:
    assert verifier.toolchains()["rust"] == SYSTEM_RUSTC[0]
    out = grade('```rust\nfn main() {\n    println!("{}", 6 * 7);\n}\n```', language="rust")
    assert (out.score, out.verdict, out.mask) == (1.0, "correct", False), out.reason


def test_the_services_path_is_not_the_sandboxs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A rustup toolchain under a home directory: on the service's PATH, invisible to jobs.
    fake = tmp_path / "rustc"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert verifier.toolchains()["rust"] != str(fake)
    assert ENV["PATH"] == "/usr/local/bin:/usr/bin:/bin"


def test_a_missing_toolchain_masks_and_says_where_it_looked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verifier, "which", lambda tool: None if tool == "rustc" else f"/usr/bin/{tool}")
    assert verifier.CompileVerifier().availability()["languages"]["rust"] is False
    out = grade("fn main() {}", language="rust")
    assert (out.score, out.verdict, out.mask) == (0.0, "error", True)
    assert "rustc" in out.reason and ENV["PATH"] in out.reason and "Debian: rustc" in out.reason


def test_a_tool_missing_in_the_sandbox_masks_naming_its_path() -> None:
    # The service found the tool, the sandbox (a Docker image without it) does not.
    step = {"name": "compile", "argv": ["rustc-not-here"], "cwd": "/tmp", "timeout_s": 5}
    reported = driver.run_step({**step, "fsize_bytes": 1 << 20, "keep_output": 1024}, dict(ENV))
    assert reported["status"] == "unavailable"
    assert "rustc-not-here is not installed in the sandbox" in reported["out"] and ENV["PATH"] in reported["out"]
    record = {"i": 0, "s": "ok", "out": json.dumps({"steps": [reported]}) + "\n"}
    run = read_report(RunResult(Status.OK, exit_code=0, records=[record]))
    assert run.stopped is not None and run.stopped.mask and "not installed in the sandbox" in run.stopped.reason
