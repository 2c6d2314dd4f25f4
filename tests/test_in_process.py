"""`RewardClient(None)` grades in this process from every way a user runs Python: a
script with no `if __name__ == "__main__":` guard, a script piped to `python -`, `python -c`,
a module run with `-m` (a notebook kernel's main is found that way), and an interactive
session. The worker processes never run the user's main module again, which with no
guard would start a client in each worker, fail, and respawn without end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# No main guard: run again in a worker, this would start a second client there.
UNGUARDED = """
from rlvr import RewardClient
print("main ran", flush=True)
with RewardClient(None) as client:
    got = client.rewards(["<think>a</think><answer>4</answer>", "4"], verifier="format")
print("REWARDS", got.values, got.mask, flush=True)
"""
EXPECTED = "REWARDS [1.0, 0.0] [False, False]"
RUN_TIMEOUT_S = 180


def _run(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RLVR_WORKERS": "1"}
    return subprocess.run(
        [sys.executable, *args], input=stdin, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )


def _graded_once(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr[-3000:]
    assert EXPECTED in done.stdout, done.stdout + done.stderr[-3000:]
    # The script's body ran in this process only, never in a worker.
    assert done.stdout.count("main ran") == 1, done.stdout
    assert "bootstrapping phase" not in done.stderr


def test_a_script_without_a_main_guard(tmp_path: Path) -> None:
    (tmp_path / "grade.py").write_text(UNGUARDED)
    _graded_once(_run(["grade.py"], tmp_path))


def test_a_script_piped_to_stdin(tmp_path: Path) -> None:
    _graded_once(_run(["-"], tmp_path, stdin=UNGUARDED))


def test_python_dash_c(tmp_path: Path) -> None:
    _graded_once(_run(["-c", UNGUARDED], tmp_path))


def test_a_module_run_with_dash_m(tmp_path: Path) -> None:
    (tmp_path / "grading_job.py").write_text(UNGUARDED)
    _graded_once(_run(["-m", "grading_job"], tmp_path))


def test_an_interactive_session(tmp_path: Path) -> None:
    # What a REPL or a notebook cell does: code typed into a __main__ that has no file.
    # The REPL ends a compound statement at a blank line.
    session = UNGUARDED.replace('verifier="format")\n', 'verifier="format")\n\n')
    _graded_once(_run(["-i"], tmp_path, stdin=session))
