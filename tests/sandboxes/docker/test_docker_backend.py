"""The Docker backend against the real daemon: what a job gets inside its container,
what it cannot reach, one container per job, the pool, the verdicts, and the janitor.
The red-team and HumanEval suites also run on it (tests/verifiers/code/conftest.py)."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import TypeAdapter

from rlvr.sandboxes.base import Limits, RunResult, RunSpec, Status
from rlvr.sandboxes.config import DockerConfig, SandboxConfig
from rlvr.sandboxes.docker import containers
from rlvr.sandboxes.docker.sandbox import DockerSandbox
from rlvr.sandboxes.jobs import StdioJob
from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.code import CodeParams, CodeVerifier, GroundTruth
from rlvr.verifiers.programs import ProgramRunner

WAIT_S = 90.0


def run_python(sandbox: DockerSandbox, code: str, *, wall_s: float = 30.0, timeout_s: float = 20.0) -> RunResult:
    job = StdioJob(code=code, inputs=[""], timeout_s=timeout_s, stop_on_failure=False, max_output=1 << 20)
    return sandbox.run(RunSpec(job, Limits(wall_s=wall_s, cpu_s=60)))


def output(result: RunResult) -> str:
    assert result.infra_error is None, result.infra_error
    assert result.records and result.records[0].get("s") == "ok", (result.records, result.stderr)
    out = result.records[0]["out"]
    assert isinstance(out, str)
    return out


def grade(config: DockerConfig, response: str, ground_truth: dict[str, Any], **params: Any) -> Outcome:
    verifier = CodeVerifier(ProgramRunner(SandboxConfig(backend="docker", docker=config)))
    p = CodeParams(**params)
    prepared = verifier.prepare(p, TypeAdapter(GroundTruth).validate_python(ground_truth))
    return verifier.verify(GradeInput("", response), p, prepared)


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"not within {WAIT_S} s: {what}"
        time.sleep(0.2)


def test_job_has_no_capabilities_no_new_privileges_and_no_root(sandbox: DockerSandbox) -> None:
    status = output(run_python(sandbox, "print(open('/proc/self/status').read())"))
    fields = {k: v.strip() for k, _, v in (line.partition(":") for line in status.splitlines())}
    assert fields["CapEff"] == "0000000000000000"
    assert fields["CapPrm"] == "0000000000000000"
    assert fields["CapBnd"] == "0000000000000000"
    assert fields["NoNewPrivs"] == "1"
    assert fields["Seccomp"] == "2"
    assert "0" not in fields["Uid"].split()


def test_containers_are_made_hardened(sandbox: DockerSandbox, docker_config: DockerConfig) -> None:
    attached = sandbox.pool.take()
    try:
        info = sandbox.api.inspect_container(attached.id)
    finally:
        containers.discard(sandbox.api, attached)
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none" and host["IpcMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert sorted(cap.removeprefix("CAP_") for cap in host["CapAdd"]) == sorted(containers.START_CAPABILITIES)
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == docker_config.pids
    assert host["Memory"] == host["MemorySwap"] == docker_config.memory_mb * 1024 * 1024
    assert host["NanoCpus"] == int(docker_config.cpus * 1e9)
    assert f"size={docker_config.tmp_mb}m" in host["Tmpfs"]["/tmp"]
    assert host["Runtime"] == docker_config.runtime and host["AutoRemove"] is True
    assert info["Config"]["User"] == containers.START_USER
    assert info["Config"]["Labels"][containers.LABEL_OWNER] == sandbox.owner.token


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on every host address (the stand-in for the api), accepting."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _bridge_gateway(sandbox: DockerSandbox) -> str:
    """The host's address on Docker's default bridge. Some daemons leave `Gateway` out of
    the bridge's IPAM config (only `Subnet`): the bridge then has the subnet's first host."""
    config = sandbox.api.inspect_network("bridge")["IPAM"]["Config"][0]
    return str(config.get("Gateway") or next(ipaddress.ip_network(config["Subnet"]).hosts()))


def test_job_reaches_no_address(sandbox: DockerSandbox, listener: int) -> None:
    gateway = _bridge_gateway(sandbox)
    host_ip = socket.gethostbyname(socket.gethostname())
    targets = [(gateway, listener), (host_ip, listener), ("127.0.0.1", listener), ("127.0.0.1", 6379)]
    targets += [("172.17.0.1", 6379), ("1.1.1.1", 80)]
    # The host does reach the listener at these addresses: a refusal inside means the sandbox.
    for address in (gateway, host_ip):
        socket.create_connection((address, listener), timeout=5).close()
    program = (
        "import socket\n"
        f"for host, port in {targets!r}:\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=2).close()\n"
        "        print(host, port, 'reached')\n"
        "    except OSError as exc:\n"
        "        print(host, port, type(exc).__name__)\n"
    )
    lines = output(run_python(sandbox, program)).splitlines()
    assert len(lines) == len(targets)
    assert not [line for line in lines if line.endswith("reached")], lines


def test_each_job_gets_a_fresh_container(sandbox: DockerSandbox) -> None:
    program = (
        "import os, socket\n"
        "print(socket.gethostname(), os.path.exists('/tmp/mark'))\n"
        "open('/tmp/mark', 'w').write('x')\n"
    )
    seen = [output(run_python(sandbox, program)).split() for _ in range(3)]
    assert [mark for _, mark in seen] == ["False"] * 3
    assert len({name for name, _ in seen}) == 3


def test_pool_refills_and_used_containers_go(sandbox: DockerSandbox, docker_config: DockerConfig) -> None:
    wait_for(lambda: sandbox.pool.ready() == docker_config.pool_size, "the pool filled")
    used = output(run_python(sandbox, "import socket\nprint(socket.gethostname())")).strip()
    wait_for(lambda: sandbox.pool.ready() == docker_config.pool_size, "the pool refilled")
    wait_for(lambda: not sandbox.api.containers(all=True, filters={"id": used}), "the used container removed")


def test_timeout_and_memory_verdicts(docker_config: DockerConfig) -> None:
    loop = "def f():\n    while True:\n        pass\n"
    spin = grade(docker_config, loop, {"tests": ["assert f() == 1"]}, timeout_s=1.0)
    assert spin.verdict == "timeout" and spin.score == 0.0 and not spin.mask, spin
    hog = "def f():\n    x = bytearray(1 << 34)\n    return 1\n"
    memory = grade(docker_config, hog, {"tests": ["assert f() == 1"]}, memory_mb=256)
    assert memory.score == 0.0 and not memory.mask and "memory" in memory.reason, memory
    good = grade(docker_config, "def f():\n    return 1\n", {"tests": ["assert f() == 1"]})
    assert good.score == 1.0, good


def test_wall_deadline_kills_the_container(sandbox: DockerSandbox) -> None:
    result = run_python(sandbox, "import time\ntime.sleep(600)\n", wall_s=2.0, timeout_s=600)
    assert result.status == Status.TIMEOUT and result.infra_error is None, result


def test_a_container_that_fails_to_start_masks_its_item(docker_config: DockerConfig) -> None:
    broken = dataclasses.replace(docker_config, runtime="rlvr-no-such-runtime", pool_size=0)
    out = grade(broken, "def f():\n    return 1\n", {"tests": ["assert f() == 1"]})
    assert out.mask and "sandbox" in out.reason, out


_WORKER = """
import json, sys, threading, time
from rlvr.sandboxes.base import Limits, RunSpec
from rlvr.sandboxes.config import DockerConfig
from rlvr.sandboxes.docker.sandbox import DockerSandbox
from rlvr.sandboxes.jobs import StdioJob
from rlvr.sandboxes.jobs import StdioJob
box = DockerSandbox(DockerConfig(**json.loads(sys.argv[1])))
while box.pool.ready() < box.config.pool_size:
    time.sleep(0.1)
job = StdioJob(code="import time\\ntime.sleep(600)", inputs=[""], timeout_s=600, stop_on_failure=False, max_output=1000)
threading.Thread(target=box.run, args=(RunSpec(job, Limits(wall_s=600, cpu_s=600)),), daemon=True).start()
print(box.owner.token, flush=True)
time.sleep(600)
"""


KILLED_WORKER_TRIES = 3


def settled(read: Callable[[], object], quiet_s: float = 2.0, timeout_s: float = 60.0) -> None:
    """Wait until `read()` has not changed for `quiet_s`."""
    deadline = time.monotonic() + timeout_s
    last, since = read(), time.monotonic()
    while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.2)
        now = read()
        if now != last:
            last, since = now, time.monotonic()


def _processes(api: Any, cid: str) -> int:
    try:
        return len(api.top(cid)["Processes"] or [])
    except containers.sdk().errors.APIError:  # exited (and so being removed) meanwhile
        return 0


def _killed_worker_leftovers(docker_config: DockerConfig, api: Any) -> dict[str, list[str]]:
    """Start a worker with a job in flight, SIGKILL it, and return the filter of the
    containers it owned once the daemon has settled."""
    worker = subprocess.Popen(
        [sys.executable, "-c", _WORKER, json.dumps(dataclasses.asdict(docker_config))], stdout=subprocess.PIPE
    )
    try:
        assert worker.stdout is not None
        token = worker.stdout.readline().decode().strip()
        assert token, "the worker did not start"
        owned = {"label": [f"{containers.LABEL_OWNER}={token}"]}
        # Its pool and the container of the job in flight (which holds it up, sleeping).
        wait_for(lambda: len(api.containers(all=True, filters=owned)) >= docker_config.pool_size, "containers up")
        # The job is in its container (a process beside the idle runner) only some time
        # after `run` is called: killed before, the worker would leave nothing behind.
        wait_for(lambda: any(_processes(api, c["Id"]) > 1 for c in api.containers(filters=owned)), "job running")
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
    # A create request the worker sent just before it died is still carried out by the
    # daemon: let those land (a janitor that ran before them leaves them to the next run).
    settled(lambda: {c["Id"] for c in api.containers(all=True, filters=owned)})
    return owned


def test_a_killed_worker_leaves_no_container_once_the_janitor_ran(docker_config: DockerConfig) -> None:
    api = containers.sdk().APIClient(base_url=docker_config.url)
    # What a killed worker leaves depends on where its death finds the daemon: tried
    # again until something is left for the janitor.
    for _ in range(KILLED_WORKER_TRIES):
        owned = _killed_worker_leftovers(docker_config, api)
        if api.containers(all=True, filters=owned):
            break
    assert api.containers(all=True, filters=owned), "nothing was left to clean: the test proves nothing"
    janitor = DockerSandbox(docker_config)  # a worker starting again on this host
    try:
        assert api.containers(all=True, filters=owned) == []
    finally:
        janitor.close()
    assert api.containers(all=True, filters={"label": [f"{containers.LABEL_OWNER}={janitor.owner.token}"]}) == []


def test_a_split_jobs_program_cannot_touch_its_test_half(docker_config: DockerConfig) -> None:
    # The halves have different uids: had any of these reached the test half before it
    # took the job, the item would be masked; after, it would fail. Refused by the
    # kernel, the right program passes (tests/sandboxes/test_hostile_both_backends.py
    # has the many other routes).
    program = (
        "import os, resource, signal\n"
        "parent = os.getppid()\n"
        "for target in (parent, 1):\n"
        "    try:\n"
        "        os.kill(target, signal.SIGKILL)\n"
        "    except OSError:\n"
        "        pass\n"
        "for target in (parent, 1):\n"
        "    try:\n"
        "        resource.prlimit(target, resource.RLIMIT_CPU, (0, 0))\n"
        "    except OSError:\n"
        "        pass\n"
        "def f(x):\n"
        "    return 2 * x\n"
    )
    test = "def check(candidate):\n    for x in range(3):\n        assert candidate(x) == 2 * x\n"
    out = grade(docker_config, program, {"test": test, "entry_point": "f"})
    assert out.details["mode"] == "split" and out.score == 1.0 and not out.mask, out
