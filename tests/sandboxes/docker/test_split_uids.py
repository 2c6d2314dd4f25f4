"""The Docker backend's wall between a split job's halves: a uid each (and pid 1 a third),
no capability left anywhere, and no result trusted from an image that does not drop
them. The attacks on that wall run on both backends in
tests/sandboxes/test_hostile_both_backends.py."""

from __future__ import annotations

import os
from typing import Any

import pytest

from rlvr.sandboxes import RunSpec, Status
from rlvr.sandboxes.base import SandboxUnavailable
from rlvr.sandboxes.config import DockerConfig
from rlvr.sandboxes.docker import containers, inside, protocol
from rlvr.sandboxes.docker import sandbox as docker_sandbox
from rlvr.sandboxes.docker.sandbox import DockerSandbox
from rlvr.sandboxes.jobs import CheckSuite, SplitJob
from tests.services import require

# The program reports its uids, and the test half's as it saw them on its first line
# (root or the test half's own uid: never the program's).
PROGRAM = """
import os
def status(pid):
    with open("/proc/%d/status" % pid) as f:
        return {k: v.split() for k, _, v in (line.partition(":") for line in f.read().splitlines())}
FIRST = status(os.getppid())["Uid"]
def f():
    return [list(os.getresuid()), list(os.getresgid()), FIRST, status(os.getppid())["Uid"], status(1)["Uid"]]
"""
# Runs in the test half: its own status, pid 1's, and the program's report.
CHECK = """
def check(candidate):
    def status(pid):
        with open("/proc/%s/status" % pid) as f:
            return {k: v.split() for k, _, v in (line.partition(":") for line in f.read().splitlines())}
    me, init = status("self"), status(1)
    uids, gids, first, parent, pid1 = candidate()
    program = int(uids[0])
    assert uids == [program] * 3 and gids[0] == gids[1] == gids[2] and program > 0, (uids, gids)
    assert int(first[0]) != program and first[0] in ("0", str(program + 1)), first
    assert me["Uid"] == parent == [str(program + 1)] * 4, (me["Uid"], parent)
    assert init["Uid"] == pid1 == [str(program + 2)] * 4, (init["Uid"], pid1)
    for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(me[caps][0], 16) == 0 and int(init[caps][0], 16) == 0, (caps, me[caps], init[caps])
    assert me["NoNewPrivs"] == ["1"] and me["Seccomp"] == ["2"], me
"""


def test_each_half_and_pid_1_run_as_a_uid_of_their_own(sandbox: DockerSandbox) -> None:
    job = SplitJob(code=PROGRAM, timeout_s=10)
    result = sandbox.run(RunSpec(job, tests=CheckSuite(test=CHECK, entry_point="f")))
    assert result.infra_error is None and result.status == Status.OK, result
    assert result.records == [{"load": "ok"}, {"i": 0, "s": "pass"}], result.records


def test_the_program_uid_is_the_configured_user(docker_config: DockerConfig) -> None:
    box = DockerSandbox(docker_config.__class__(**{**_fields(docker_config), "user": "23001:23005"}))
    try:
        job = SplitJob(code=PROGRAM, timeout_s=10)
        result = box.run(RunSpec(job, tests=CheckSuite(test=CHECK, entry_point="f")))
    finally:
        box.close()
    assert result.records == [{"load": "ok"}, {"i": 0, "s": "pass"}], result


def _fields(config: DockerConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in config.__dataclass_fields__}


@pytest.mark.parametrize(("user", "ids"), [("10001:10001", (10001, 10001)), ("20000", (20000, 20000)), ("3:4", (3, 4))])
def test_job_ids_are_numeric(user: str, ids: tuple[int, int]) -> None:
    assert containers.job_ids(DockerConfig(user=user)) == ids


@pytest.mark.parametrize("user", ["0:0", "0", "10001:0", "0:10001", "sandbox", "sandbox:sandbox", "", "-5:-5", "²:²"])
def test_job_ids_are_never_root_nor_names(user: str) -> None:
    with pytest.raises(SandboxUnavailable):
        containers.job_ids(DockerConfig(user=user))


def _job() -> docker_sandbox._Job:
    return docker_sandbox._Job(RunSpec(SplitJob(code="", timeout_s=1)))


@pytest.mark.parametrize(
    "first",
    [(protocol.STDOUT, b"x"), (protocol.CHANNEL, b"+\n"), (protocol.EXIT, b"{}"), (protocol.HELLO, b"1")],
)
def test_no_result_is_taken_from_an_image_that_does_not_drop_uids(first: tuple[bytes, bytes]) -> None:
    # An image from before the uid drop says no HELLO (its pid 1 would run the job as
    # root): whatever it says first ends the job as the sandbox's failure.
    job = _job()
    docker_sandbox._on_message(job, *first)
    assert job.infra is not None and not job.out and job.exit is None


def test_a_hello_comes_first_then_the_job() -> None:
    job = _job()
    docker_sandbox._on_message(job, protocol.HELLO, protocol.VERSION)
    docker_sandbox._on_message(job, protocol.CHANNEL, b"+\n")
    assert job.infra is None and job.hello and bytes(job.out[protocol.CHANNEL]) == b"+\n"


def _in_child(steps: Any) -> int:
    """Run `steps` in a forked child; its exit code: 0 if they raised PermissionError,
    1 if they returned, 2 for anything else (a failed assertion)."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            steps()
            code = 1
        except PermissionError:
            code = 0
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_drop_to_refuses_root_and_fails_without_the_capabilities() -> None:
    require(os.geteuid() == 0, "root (to drop from)")
    assert _in_child(lambda: inside.drop_to(inside.Ids(0, 0))) == 0
    assert _in_child(lambda: inside.drop_to(inside.Ids(10001, 0))) == 0

    def unprivileged_first() -> None:
        os.setresuid(65534, 65534, 65534)
        inside.drop_to(inside.Ids(10001, 10001))

    assert _in_child(unprivileged_first) == 0


def test_drop_to_leaves_no_capability() -> None:
    require(os.geteuid() == 0, "root (to drop from)")

    def drop_and_check() -> None:
        inside.drop_to(inside.Ids(23001, 23002))
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f.read().splitlines())
        assert fields["Uid"].split() == ["23001"] * 4 and fields["Gid"].split() == ["23002"] * 4
        assert fields["Groups"].split() == []
        assert all(int(fields[c], 16) == 0 for c in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))

    assert _in_child(drop_and_check) == 1
