"""What `rlvr train` runs (`rlvr.cli` parses its flags into a `TrainConfig`): the
training run, beside a local `rlvr serve` when the config asks for one."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx

from rlvr.trainer.grpo.config import TrainConfig

SERVE_START_TIMEOUT_S = 120.0


@contextmanager
def local_service(timeout_s: float = SERVE_START_TIMEOUT_S) -> Iterator[str]:
    """A real `rlvr serve` (embedded defaults) on a free port, for the run's lifetime."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "rlvr", "serve", "--host", "127.0.0.1", "--port", str(port)])
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"rlvr train: the local service exited with {proc.returncode}")
            try:
                if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"rlvr train: the local service was not ready after {timeout_s}s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(cfg: TrainConfig) -> dict[str, object]:
    from rlvr.trainer.grpo.progress import RunProgress
    from rlvr.trainer.grpo.run import train

    if cfg.serve and cfg.url is not None:
        raise SystemExit("rlvr train: --serve starts its own service; do not also give --url")
    with RunProgress(cfg.progress) as progress:
        if not cfg.serve:
            return train(cfg, progress)
        with ExitStack() as stack:
            with progress.phase("service", status="starting a local rlvr serve (embedded defaults)"):
                url = stack.enter_context(local_service())
            return train(cfg.model_copy(update={"url": url}), progress)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    # SIGTERM unwinds like an error would, so a `--serve` service is stopped, not orphaned.
    raise SystemExit(128 + signum)


def train_command(cfg: TrainConfig) -> dict[str, object]:
    """Trains as `cfg` says; SIGTERM ends the run as an error would, stopping its service."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    return run(cfg)
