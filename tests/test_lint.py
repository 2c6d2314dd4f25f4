"""`make lint` as part of the suite, so CI holds the code to it: ruff, mypy --strict, and
the import contracts (layers service -> verifiers -> sandboxes, the trainer only through
the client, no cycles)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RUFF_PATHS = ("src", "tests", "bench", "examples", "conftest.py")


@pytest.mark.parametrize(
    "command",
    [
        pytest.param([str(BIN / "ruff"), "check", *RUFF_PATHS], id="ruff"),
        pytest.param([str(BIN / "mypy")], id="mypy"),
        pytest.param([str(BIN / "lint-imports")], id="import-contracts"),
    ],
)
def test_lint(command: list[str]) -> None:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
