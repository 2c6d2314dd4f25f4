from __future__ import annotations

import subprocess
import sys

from service.settings import Settings


def test_serve_help_documents_every_setting() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "service.cli", "serve", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name in Settings.model_fields:
        assert "--" + name.replace("_", "-") in out
        assert f"RLVR_{name.upper()}" in out.replace("\n", " ").replace("  ", "")


def test_invalid_setting_is_a_clear_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "service.cli", "serve", "--workers", "0"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0
    assert "workers" in proc.stderr
