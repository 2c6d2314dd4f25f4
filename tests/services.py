"""Real services for the tests (through the fixtures in the root `conftest.py`) and the
benchmarks: `rlvr serve` and `rlvr worker` subprocesses, a restartable redis-server,
and the process helpers (`free_port`, `wait_ready`, `terminate`).

In CI (`CI=true`) a missing service fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_PLUGIN = ROOT / "examples" / "rlvr-plugin-example"
TEST_PLUGINS = ROOT / "tests" / "plugins"
SERVER_START_TIMEOUT_S = 90.0


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(condition: bool, what: str) -> None:
    """Skip locally when a service is missing; fail in CI, where it must be there."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"{what} is required in CI but not available")
    pytest.skip(f"{what} not available")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes] | None, timeout_s: float = SERVER_START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} not ready after {timeout_s}s")


def terminate(proc: subprocess.Popen[bytes], timeout_s: float = 15.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout_s`."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def install_plugins(target: Path) -> None:
    """The example plugin and the misbehaving test plugins, really pip-installed."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*command, "--target", str(target), str(EXAMPLE_PLUGIN), str(TEST_PLUGINS)], check=True)


def server_env(plugin_dir: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLVR_")}
    env["PYTHONPATH"] = str(plugin_dir)
    env.update({f"RLVR_{k.upper()}": v for k, v in settings.items()})
    return env


class Server:
    """`rlvr serve` with `args` and `settings` (as RLVR_* variables); `env` adds others."""

    def __init__(self, plugin_dir: Path, *args: str, env: dict[str, str] | None = None, **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, "-m", "rlvr", "serve", "--port", str(self.port), *args]
        self.env = {**server_env(plugin_dir, **settings), **(env or {})}
        self.start()

    def start(self) -> None:
        """Starts the server (again, after `stop`: a restart on the same port)."""
        self.proc = subprocess.Popen(self.command, env=self.env, cwd=ROOT)
        try:
            wait_ready(self.url, self.proc)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        terminate(self.proc)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class RedisServer:
    """A real redis-server on a free port, without persistence, restartable."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
        )
        import redis

        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class WorkerProcess:
    def __init__(self, plugin_dir: Path, redis_url: str, processes: int = 1, **settings: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rlvr", "worker", "--redis-url", redis_url, "--processes", str(processes)],
            env=server_env(plugin_dir, **settings),
            cwd=ROOT,
        )

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        terminate(self.proc)


FAST_REDIS = {"redis_reclaim_idle_s": "2", "redis_op_timeout_s": "2"}
"""Settings that make Redis failures show within a test's patience."""


class Cluster:
    """API replicas and `rlvr worker` processes on one Redis, all stopped by `close`."""

    def __init__(self, plugin_dir: Path, redis_url: str) -> None:
        self.plugin_dir = plugin_dir
        self.redis_url = redis_url
        self.apis: list[Server] = []
        self.workers: list[WorkerProcess] = []

    def api(self, **settings: str) -> str:
        server = Server(self.plugin_dir, "--workers", "1", redis_url=self.redis_url, **{**FAST_REDIS, **settings})
        self.apis.append(server)
        return server.url

    def worker(self, processes: int = 1, **settings: str) -> WorkerProcess:
        worker = WorkerProcess(self.plugin_dir, self.redis_url, processes, **{**FAST_REDIS, **settings})
        self.workers.append(worker)
        return worker

    def close(self) -> None:
        for w in self.workers:
            w.kill()
        for a in self.apis:
            a.stop()
