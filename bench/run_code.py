"""`POST /run_code`, one program per request as verl sends them, against its anchors in
one run: a plain subprocess per request, as SandboxFusion runs code by default (its
`isolation: none`: write the program to a temporary directory, compile C++ with
`g++ -std=c++17` as it does, run through bash, collect the output), and, where a
checkout of SandboxFusion can be started, its own server on the same machine.

    python -m bench.run_code [--language python|cpp|cpp-iostream] [--runs N]
        [--concurrency 32] [--workers N] [--sandbox-fusion DIR] [--sandbox-fusion-python PY]

Programs: a trivial Python one (sum of stdin), and the same in C++ opening with
`#include <bits/stdc++.h>` as judges' programs do (`cpp`) or with `<iostream>`
(`cpp-iostream`, which the precompiled header does not cover). rlvr compiles with `-O2`,
as judges do; SandboxFusion and the subprocess anchor without it, as SandboxFusion does.

SandboxFusion's server: `--sandbox-fusion DIR` (or RLVR_BENCH_SANDBOX_FUSION) names a
checkout of bytedance/SandboxFusion, and `--sandbox-fusion-python` a Python with its
dependencies (fastapi 0.103, uvicorn 0.25, pydantic<2.7, structlog, psutil, aiofiles,
aiohttp, tenacity, databases[aiosqlite], pyyaml, transformers); without them its row
is skipped with a message. It runs with no isolation at all; `/run_code` runs each
program in the sandbox the `code` verifier uses (namespaces, seccomp, cgroups).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from bench.single_items import Connection, cpu_s
from tests.services import free_port

ROOT = Path(__file__).resolve().parents[1]
Run = Callable[[Connection, int], Awaitable[None]]
PROGRAMS = {
    "python": ("python", "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"),
    "cpp": (
        "cpp",
        "#include <bits/stdc++.h>\nusing namespace std;\n"
        "int main() { long long a, b; cin >> a >> b; cout << a + b << endl; }\n",
    ),
    "cpp-iostream": (
        "cpp",
        "#include <iostream>\nusing namespace std;\n"
        "int main() { long long a, b; cin >> a >> b; cout << a + b << endl; }\n",
    ),
}
DEFAULT_RUNS = {"python": 1000, "cpp": 64, "cpp-iostream": 64}
SERVER_START_S = 120.0
# Dozens of compiles at once on a few cores queue for them: SandboxFusion's default of
# 10 s would time its own out.
COMPILE_TIMEOUT_S = 60


def subprocess_runner(language: str, code: str) -> Run:
    """What SandboxFusion does per request without isolation."""
    if language == "python":
        file, command = "main.py", f"{shlex.quote(sys.executable)} main.py"
    else:
        file, command = "main.cpp", "g++ -std=c++17 main.cpp -o test && ./test"

    async def run(conn: Connection, i: int) -> None:
        with tempfile.TemporaryDirectory() as workdir:
            Path(workdir, file).write_text(code)
            proc = await asyncio.create_subprocess_shell(
                f"cd {shlex.quote(workdir)} && {command}",
                executable="/bin/bash",
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            out, _ = await proc.communicate(f"{i} 1".encode())
        if out.strip() != f"{i + 1}".encode():
            raise RuntimeError(f"subprocess run {i}: {out!r}")

    return run


def http_runner(language: str, code: str) -> Run:
    """`POST /run_code`, SandboxFusion's API, which rlvr serves too."""

    async def run(conn: Connection, i: int) -> None:
        request = {"code": code, "language": language, "stdin": f"{i} 1", "compile_timeout": COMPILE_TIMEOUT_S}
        body = await conn.post("/run_code", request)
        if f'"stdout":"{i + 1}'.encode() not in body or b'"status":"Success"' not in body:
            raise RuntimeError(f"run_code {i}: {body[:300]!r}")

    return run


async def concurrently(port: int, n: int, concurrency: int, run: Run) -> float:
    """Seconds for `n` runs, `concurrency` at a time (each with its own connection)."""
    queue = iter(range(n))

    async def worker() -> None:
        conn = Connection(port)
        for i in queue:
            await run(conn, i)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


def _start(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """A server on a free port, once `GET /v1/ping` (SandboxFusion's probe, which rlvr
    serves too) answers."""
    port = free_port()
    server = subprocess.Popen(
        [*command, "--port", str(port)], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + SERVER_START_S
    while server.poll() is None and time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/ping", timeout=2).status_code == 200:
                return server, port
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"{command[2]} did not answer on port {port} (exit status {server.poll()})")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def sandbox_fusion(args: argparse.Namespace) -> tuple[subprocess.Popen[bytes], int] | str:
    """SandboxFusion's server on a free port, or why it cannot be started."""
    checkout = args.sandbox_fusion
    if not checkout or not Path(checkout, "sandbox", "server", "server.py").is_file():
        return "no SandboxFusion checkout (--sandbox-fusion DIR or RLVR_BENCH_SANDBOX_FUSION)"
    python = args.sandbox_fusion_python
    imports = "import fastapi, uvicorn, structlog, databases, transformers"
    probe = subprocess.run([python, "-c", imports], check=False, capture_output=True)
    if probe.returncode != 0:
        return f"{python} lacks SandboxFusion's dependencies (--sandbox-fusion-python)"
    Path(checkout, "docs", "build").mkdir(parents=True, exist_ok=True)  # its static docs mount
    env = {**os.environ, "SANDBOX_CONFIG": "local"}
    try:
        return _start([python, "-m", "uvicorn", "sandbox.server.server:app"], Path(checkout), env)
    except Exception as exc:
        return f"SandboxFusion's server did not start: {exc}"


Row = tuple[str, float, float]


async def measure(args: argparse.Namespace, rlvr: tuple[int, int], fusion: int | None) -> list[Row]:
    """(path, wall seconds, API-process CPU seconds) of `args.runs` runs each way."""
    language, code = PROGRAMS[args.language]
    c, warm = args.concurrency, min(args.runs, 2 * args.concurrency)
    port, pid = rlvr
    paths: list[tuple[str, int, Run]] = [
        ("subprocess per request (SandboxFusion default)", port, subprocess_runner(language, code))
    ]
    if fusion is not None:
        paths.append(("SandboxFusion's server, no isolation", fusion, http_runner(language, code)))
    rows = []
    for name, at, run in paths:
        await concurrently(at, warm, c, run)
        rows.append((name, await concurrently(at, args.runs, c, run), 0.0))
    ours = http_runner(language, code)
    await concurrently(port, warm, c, ours)  # the pool and its zygotes start
    before = cpu_s(pid)
    wall = await concurrently(port, args.runs, c, ours)
    rows.append(("rlvr /run_code, isolated", wall, cpu_s(pid) - before))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--language", choices=sorted(PROGRAMS), default="python")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sandbox-fusion", default=os.environ.get("RLVR_BENCH_SANDBOX_FUSION"))
    ap.add_argument("--sandbox-fusion-python", default=sys.executable)
    args = ap.parse_args()
    args.runs = args.runs or DEFAULT_RUNS[args.language]

    env = {**os.environ, "RLVR_LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "rlvr", "serve", "--workers", str(args.workers)]
    rlvr, port = _start(command, ROOT, env)
    fusion = sandbox_fusion(args)
    try:
        fusion_port = fusion[1] if isinstance(fusion, tuple) else None
        rows = asyncio.run(measure(args, (port, rlvr.pid), fusion_port))
    finally:
        _stop(rlvr)
        if isinstance(fusion, tuple):
            _stop(fusion[0])
    anchor = rows[0][1]
    print(f"runs: {args.runs} {args.language} programs, {args.concurrency} at once, {args.workers} rlvr workers")
    if isinstance(fusion, str):
        print(f"SandboxFusion's server skipped: {fusion}")
    print(f"{'path':<50}{'runs/s':>9}{'ms/run':>9}{'vs anchor':>11}")
    for name, wall, _ in rows:
        print(f"{name:<50}{args.runs / wall:>9,.1f}{wall / args.runs * 1e3:>9.1f}{anchor / wall:>11.2f}")
    if len(rows) == 3:
        print(f"ratio rlvr / SandboxFusion's server: {rows[1][1] / rows[2][1]:.2f}x")
    print(f"API process CPU per /run_code request: {rows[-1][2] / args.runs * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
