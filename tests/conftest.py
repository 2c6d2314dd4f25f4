"""Fixtures that start real services: an `rlvr serve` subprocess, installed plugins.
The process helpers (`free_port`, `wait_ready`, `terminate`) serve the benchmarks too.

In CI (`CI=true`) a missing service fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin and the misbehaving test plugins, really pip-installed."""
    target = tmp_path_factory.mktemp("plugins")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(EXAMPLE_PLUGIN),
            str(TEST_PLUGINS),
        ],
        check=True,
    )
    return target


def server_env(plugin_dir: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLVR_")}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_dir), str(ROOT)])
    env.update({f"RLVR_{k.upper()}": v for k, v in settings.items()})
    return env


class Server:
    def __init__(self, plugin_dir: Path, *args: str, **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rlvr", "serve", "--port", str(self.port), *args],
            env=server_env(plugin_dir, **settings),
            cwd=ROOT,
        )
        try:
            wait_ready(self.url, self.proc)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        terminate(self.proc)


@pytest.fixture(scope="session")
def live_server(plugin_dir: Path) -> Iterator[str]:
    """Base URL of a real `rlvr serve` subprocess with the plugins installed."""
    server = Server(plugin_dir, "--workers", "2")
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def http(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=120) as client:
        yield client


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


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    import shutil

    require(shutil.which("redis-server") is not None, "redis-server")
    server = RedisServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()


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
