from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rlvr.cli import build_parser, settings_from
from rlvr.sandboxes.config import SandboxConfig
from rlvr.service.settings import Settings, builtin_config
from rlvr.verifiers.config import BuiltinConfig


def test_serve_help_documents_every_setting() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "rlvr", "serve", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name in Settings.model_fields:
        assert "--" + name.replace("_", "-") in out
        assert f"RLVR_{name.upper()}" in out.replace("\n", " ").replace("  ", "")


def test_invalid_setting_is_a_clear_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rlvr", "serve", "--workers", "0"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0
    assert "workers" in proc.stderr


def test_worker_flags_are_checked() -> None:
    for args, message in (
        (["--processes", "0", "--redis-url", "redis://x"], "--processes must be at least 1"),
        ([], "--redis-url (or RLVR_REDIS_URL) is required"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "rlvr", "worker", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if not k.startswith("RLVR_")},
        )
        assert proc.returncode != 0
        assert message in proc.stderr


def test_flags_reach_the_verifier_config_without_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [k for k in os.environ if k.startswith("RLVR_")]:
        monkeypatch.delenv(name)
    args = build_parser().parse_args(["serve", "--min-isolation", "none", "--allow-weak-isolation"])
    config = builtin_config(settings_from(args))
    assert config == BuiltinConfig(SandboxConfig(min_isolation="none", allow_weak_isolation=True))
    assert not [k for k in os.environ if k.startswith("RLVR_")]
