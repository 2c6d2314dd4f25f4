"""Trivial Python test runs/s, one job at a time, in one run: the local sandbox, the
Docker backend with its warm pool, `docker run` per job and `docker exec` per job (the
anchor of the ratios is `docker run`).

    .venv/bin/python -m bench.docker [--runs 40] [--pool 4] [--image rlvr-sandbox:bench]

The sandbox image is built first from this checkout (docker/sandbox.Dockerfile; set
RLVR_TEST_SANDBOX_BASE to build it on another base). `docker run` and `docker exec`
start `python3 -c` in the same image with the same hardening flags; the backend runs
the job through the runner, as the `code` verifier does. The local sandbox runs on
this host, and inside a worker container (docker/service.Dockerfile's image, run with
docker-compose.yml's capabilities and seccomp profile) where that image is built.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from rlvr.sandboxes.base import RunSpec, Sandbox
from rlvr.sandboxes.config import DEFAULT_DOCKER_URL, DockerConfig
from rlvr.sandboxes.docker import containers, image
from rlvr.sandboxes.docker.sandbox import DockerSandbox
from rlvr.sandboxes.jobs import ValuesJob
from rlvr.sandboxes.local.sandbox import get_local_sandbox

ROOT = Path(__file__).resolve().parent.parent
CODE = "def add(a, b):\n    return a + b\n"
EXPR = "add(1, 2)"
JOB = ValuesJob(code=CODE, exprs=[EXPR], timeout_s=2)
PROGRAM = CODE + f"assert {EXPR} == 3\n"
# What the backend's containers get (rlvr.sandboxes.docker.containers.host_config).
HARDENING = [
    "--network=none",
    "--ipc=none",
    "--read-only",
    "--tmpfs=/tmp:rw,exec,nosuid,nodev,size=256m",
    "--cap-drop=ALL",
    "--security-opt=no-new-privileges",
    "--pids-limit=128",
    "--memory=2048m",
    "--cpus=1",
    "--user=10001:10001",
    "--log-driver=none",
    "--label=org.rlvr.sandbox.bench=1",
]


# The local sandbox inside the worker container, as docker-compose.yml runs workers
# (its `x-sandboxed` settings), timing the same job one at a time.
WORKER_FLAGS = [
    "--user=root",
    "--cap-drop=ALL",
    *[f"--cap-add={cap}" for cap in ("SYS_ADMIN", "SYS_CHROOT", "SETUID", "SETGID", "KILL")],
    "--security-opt=no-new-privileges:true",
    f"--security-opt=seccomp={ROOT / 'docker' / 'seccomp-worker.json'}",
    "--read-only",
    "--tmpfs=/tmp:size=256m",
]
IN_WORKER = f"""
import json, time
from rlvr.sandboxes import RunSpec
from rlvr.sandboxes.jobs import ValuesJob
from rlvr.sandboxes.local.sandbox import get_local_sandbox
box = get_local_sandbox()
isolation = box.isolation()["isolation"]
job = {JOB!r}
started = time.perf_counter()
ok = sum(box.run(RunSpec(job)).records[-1:] == [{{"i": 0, "s": "ok", "v": 3}}] for _ in range(RUNS))
print(json.dumps({{"per_s": RUNS / (time.perf_counter() - started), "ok": ok, "isolation": isolation}}))
"""


def in_worker(worker_image: str, runs: int) -> tuple[str, tuple[float, int]] | None:
    """The local sandbox's figure inside a worker container, or None without the image."""
    found = subprocess.run(["docker", "image", "inspect", worker_image], capture_output=True, check=False)
    if found.returncode != 0:
        return None
    command = ["docker", "run", "--rm", "-i", *WORKER_FLAGS, "--entrypoint", "python3", worker_image, "-"]
    program = IN_WORKER.replace("RUNS", str(runs))
    out = subprocess.run(command, input=program, capture_output=True, text=True, check=True).stdout
    report = json.loads(out.strip().splitlines()[-1])
    name = f"local sandbox in the worker container ({worker_image}, isolation {report['isolation']})"
    return name, (float(report["per_s"]), int(report["ok"]))


def rate(runs: int, one: Callable[[], bool]) -> tuple[float, int]:
    """Runs per second of `one`, and how many of them passed."""
    started = time.perf_counter()
    ok = sum(one() for _ in range(runs))
    return runs / (time.perf_counter() - started), ok


def sandbox_job(box: Sandbox) -> Callable[[], bool]:
    def one() -> bool:
        result = box.run(RunSpec(JOB))
        return bool(result.records[-1:] == [{"i": 0, "s": "ok", "v": 3}])

    return one


def docker_run(tag: str) -> Callable[[], bool]:
    command = ["docker", "run", "--rm", *HARDENING, "--entrypoint", "python3", tag, "-c", PROGRAM]
    return lambda: subprocess.run(command, capture_output=True, check=False).returncode == 0


def docker_exec(tag: str) -> tuple[Callable[[], bool], Callable[[], None]]:
    start = ["docker", "run", "-d", "--rm", *HARDENING, "--entrypoint", "sleep", tag, "infinity"]
    cid = subprocess.run(start, capture_output=True, text=True, check=True).stdout.strip()
    command = ["docker", "exec", cid, "python3", "-c", PROGRAM]

    def stop() -> None:
        subprocess.run(["docker", "kill", cid], capture_output=True, check=False)

    return lambda: subprocess.run(command, capture_output=True, check=False).returncode == 0, stop


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--pool", type=int, default=4)
    parser.add_argument("--image", default="rlvr-sandbox:bench")
    parser.add_argument("--worker-image", default="rlvr:latest", help="docker/service.Dockerfile's image")
    args = parser.parse_args()
    api = containers.sdk().APIClient(base_url=DEFAULT_DOCKER_URL)
    image.build(api, ROOT, args.image, base=os.environ.get("RLVR_TEST_SANDBOX_BASE"))

    figures: dict[str, tuple[float, int]] = {}
    local = get_local_sandbox()
    isolation = local.isolation()["isolation"]
    figures[f"local sandbox (on this host, isolation {isolation})"] = rate(args.runs * 5, sandbox_job(local))
    worker = in_worker(args.worker_image, args.runs * 5)
    if worker is not None:
        figures[worker[0]] = worker[1]

    box = DockerSandbox(DockerConfig(image=args.image, pool_size=args.pool))
    try:
        for name, runs in ((f"{args.pool} jobs from a full pool", args.pool), ("steady", args.runs)):
            while box.pool.ready() < args.pool:  # a full pool before timing
                time.sleep(0.2)
            figures[f"docker backend, warm pool of {args.pool}: {name}"] = rate(runs, sandbox_job(box))
    finally:
        box.close()
    figures["docker run per job"] = rate(args.runs, docker_run(args.image))
    one, stop = docker_exec(args.image)
    try:
        figures["docker exec per job (one container for all)"] = rate(args.runs, one)
    finally:
        stop()

    anchor = figures["docker run per job"][0]
    print(f"trivial Python test, one job at a time, {args.runs} runs per docker figure")
    for name, (per_s, ok) in figures.items():
        print(f"  {name:<70} {per_s:8.1f} runs/s  {per_s / anchor:6.2f}x docker run   ok {ok}")


if __name__ == "__main__":
    main()
