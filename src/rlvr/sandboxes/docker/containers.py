"""Sandbox containers: how one is made (every hardening option in one place), attached
to and started; and the janitor, which finds leftovers by their labels.

A container is attached to before it starts, so nothing it writes can be missed, and
its stdin closes when that attach connection does (`StdinOnce`): a container whose
worker died takes no job and exits, and the daemon removes it (`AutoRemove`).
"""

from __future__ import annotations

import contextlib
import importlib
import socket
import time
from dataclasses import dataclass
from typing import Any

from rlvr.sandboxes.base import SandboxUnavailable
from rlvr.sandboxes.config import DockerConfig

LABEL = "org.rlvr.sandbox"
LABEL_HOST = "org.rlvr.sandbox.host"
LABEL_PID = "org.rlvr.sandbox.pid"
LABEL_OWNER = "org.rlvr.sandbox.owner"
JANITOR_TIMEOUT_S = 30.0
# pid 1 starts as root with only what it takes to give the job's processes their uids
# (and to empty their bounding sets); each drops them all (`inside.drop_to`).
START_USER = "0:0"
START_CAPABILITIES = ["SETUID", "SETGID", "SETPCAP"]


def sdk() -> Any:
    """The `docker` package (an optional dependency: `pip install rlvr[docker]`), loaded
    by name: this checkout's docker/ folder would otherwise stand in for it in mypy."""
    try:
        return importlib.import_module("docker")
    except ImportError as exc:
        raise SandboxUnavailable("the docker backend needs the `docker` package (pip install rlvr[docker])") from exc


@dataclass
class Owner:
    """Who made a container: the host (a worker container's hostname), the process (its
    pid and start time, so a reused pid is told apart), and a token unique to one
    `DockerSandbox`."""

    host: str
    process: str
    token: str

    def labels(self) -> dict[str, str]:
        return {LABEL: "1", LABEL_HOST: self.host, LABEL_PID: self.process, LABEL_OWNER: self.token}


def process_id(pid: int) -> str | None:
    """`pid:start time` of a live process (its start time, in clock ticks since boot,
    is field 22 of /proc/PID/stat); None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count after the last ')'.
    fields = stat[stat.rfind(b")") + 2 :].split()
    return f"{pid}:{fields[19].decode()}" if len(fields) > 19 else None


@dataclass
class Attached:
    """A started container, waiting for its one job on the attach stream."""

    id: str
    sock: socket.socket
    # The docker SDK's response object owns the connection: kept so it is not collected.
    response: Any
    started: float


def job_ids(config: DockerConfig) -> tuple[int, int]:
    """The uid and gid a job's program runs as: `config.user`, numeric ("uid:gid" or
    "uid"), never root (the test half takes the next ones: `inside.TESTS_ID_OFFSET`).
    Raises `SandboxUnavailable`."""
    uid, _, gid = config.user.partition(":")
    try:
        ids = int(uid), int(gid or uid)
    except ValueError:
        ids = (0, 0)
    if min(ids) <= 0:
        raise SandboxUnavailable(f"the docker backend's user must be a numeric uid:gid, not root: {config.user!r}")
    return ids


def host_config(api: Any, config: DockerConfig) -> Any:
    return api.create_host_config(
        network_mode="none",
        ipc_mode="none",  # no /dev/shm: nothing shared, nothing writable outside /tmp
        read_only=True,
        tmpfs={"/tmp": f"rw,exec,nosuid,nodev,size={config.tmp_mb}m,mode=1777"},
        cap_drop=["ALL"],
        cap_add=START_CAPABILITIES,
        security_opt=["no-new-privileges"],
        pids_limit=config.pids,
        mem_limit=f"{config.memory_mb}m",
        memswap_limit=f"{config.memory_mb}m",  # no swap on top
        nano_cpus=int(config.cpus * 1e9),
        runtime=config.runtime,
        auto_remove=True,
        # The job's output travels on the attach stream only, never into the daemon's logs.
        log_config={"type": "none", "config": {}},
    )


def create(api: Any, config: DockerConfig, owner: Owner) -> Attached:
    """A new container, attached and started. Raises `SandboxUnavailable`."""
    errors = sdk().errors
    try:
        created = api.create_container(
            config.image,
            user=START_USER,
            stdin_open=True,  # not detached: the SDK sets StdinOnce and attaches all streams too
            network_disabled=True,
            working_dir="/tmp",
            environment={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
            labels=owner.labels(),
            host_config=host_config(api, config),
        )
        cid = created["Id"]
        response = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        sock = response._sock if hasattr(response, "_sock") else response
        api.start(cid)
    except (errors.DockerException, OSError) as exc:
        raise SandboxUnavailable(f"could not start a sandbox container: {exc}") from exc
    sock.setblocking(False)
    return Attached(cid, sock, response, time.monotonic())


def discard(api: Any, attached: Attached) -> None:
    """Kill the container (AutoRemove then deletes it) and close our end."""
    release(api, attached, kill=True)


def release(api: Any, attached: Attached, *, kill: bool) -> None:
    """Close our end of the container's stream, and kill it if asked."""
    # Both: the socket's fd stays open while the SDK's file object over it is.
    with contextlib.suppress(OSError):
        attached.response.close()
    with contextlib.suppress(OSError):
        attached.sock.close()
    if kill:
        with contextlib.suppress(sdk().errors.DockerException, OSError):
            api.kill(attached.id)


def sweep(api: Any, owner: Owner, *, everything_of_ours: bool = False) -> int:
    """Remove leftover sandbox containers: those this host made in processes that are
    gone; with `everything_of_ours`, this `DockerSandbox`'s own too (at shutdown).
    Containers of other hosts, and of live processes here (this one's other sandboxes
    included), are left alone: they may be busy. Returns how many were removed."""
    errors = sdk().errors
    removed = 0
    try:
        found = api.containers(all=True, filters={"label": [LABEL, f"{LABEL_HOST}={owner.host}"]})
    except (errors.DockerException, OSError):
        return 0
    for info in found:
        labels = info.get("Labels") or {}
        if not _leftover(labels, owner, everything_of_ours):
            continue
        try:
            api.remove_container(info["Id"], force=True)
        except errors.NotFound:
            continue
        except (errors.DockerException, OSError):
            # Most likely already on its way out (exited, AutoRemove under way): see it go.
            with contextlib.suppress(errors.DockerException, OSError):
                api.wait(info["Id"], timeout=JANITOR_TIMEOUT_S, condition="removed")
        removed += 1
    return removed


def _leftover(labels: dict[str, str], owner: Owner, everything_of_ours: bool) -> bool:
    if labels.get(LABEL_OWNER) == owner.token:
        return everything_of_ours
    process = labels.get(LABEL_PID, "")
    pid = process.partition(":")[0]
    return not pid.isdigit() or process_id(int(pid)) != process
