"""`rlvr train --serve` stopped with SIGTERM stops the service it started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.services import ROOT


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_stops_the_local_service(tmp_path: Path) -> None:
    trainer = subprocess.Popen(
        [sys.executable, "-m", "rlvr", "train", "--serve", "--steps", "1000", "--out-dir", str(tmp_path / "run")],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not (kids := children(trainer.pid)):
            assert trainer.poll() is None and time.monotonic() < deadline, "no service was started"
            time.sleep(0.1)
        service = kids[0]
        trainer.send_signal(signal.SIGTERM)
        assert trainer.wait(timeout=60) != 0
        deadline = time.monotonic() + 30
        while alive(service):
            assert time.monotonic() < deadline, "the service outlived the trainer"
            time.sleep(0.1)
    finally:
        if trainer.poll() is None:
            trainer.kill()
            trainer.wait()
        for pid in children(trainer.pid):
            os.kill(pid, signal.SIGKILL)
