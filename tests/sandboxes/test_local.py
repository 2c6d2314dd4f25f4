"""The local sandbox itself: isolation, limits, concurrency, failure handling."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

import pytest

from rlvr import sandboxes
from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.base import ISOLATION_LEVELS
from rlvr.sandboxes.jobs import CallJob, Job, WireFrame
from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from rlvr.sandboxes.runner import wire
from tests.services import require


def call_job(code: str, inputs: list[list[Any]] | None = None, fn: str = "f", **extra: Any) -> Job:
    """A call job; with `extra` keys no job type has, its frame as it is."""
    job = CallJob(code=code, fn_name=fn, inputs=inputs or [[]], timeout_s=2)
    return WireFrame({**job.frame(), **extra}) if extra else job


@pytest.fixture(scope="module")
def sb() -> LocalSandbox:
    box = get_local_sandbox()
    if box.isolation()["isolation"] not in ("namespaces", "full"):
        require(False, "namespace isolation (run as root)")
    return box


def test_isolation_report_is_cached_and_full(monkeypatch: pytest.MonkeyPatch) -> None:
    report = sandboxes.isolation_report()
    assert report["backend"] == "local"
    assert report["isolation"] in ISOLATION_LEVELS

    def no_second_probe(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the probe ran again")

    monkeypatch.setattr(subprocess, "run", no_second_probe)
    assert sandboxes.isolation_report() == report
    if os.geteuid() == 0:
        assert report["isolation"] == "full", report
        assert {"pid", "mount", "net", "ipc"} <= set(report["namespaces"])
        assert report["seccomp"] and report["uid_drop"]


def test_job_sees_its_own_world(sb: LocalSandbox) -> None:
    code = (
        "import os\ndef f():\n    return [os.getpid(), os.getuid() >= 1000000, os.listdir('/tmp'),"
        " sorted({os.stat('/proc/' + p).st_uid == os.getuid() for p in os.listdir('/proc') if p.isdigit()})]\n"
    )
    result = sb.run(RunSpec(call_job(code)))
    assert result.status == Status.OK
    value = wire.decode(result.records[-1]["v"])
    # pid 1 of its own namespace, an unprivileged uid, an empty /tmp, and a /proc that
    # shows no process of any other uid.
    assert value == [1, True, [], [True]]


def test_big_output_does_not_deadlock(sb: LocalSandbox) -> None:
    code = "import sys\nsys.stdout.write('x' * (1 << 20))\nsys.stderr.write('y' * (1 << 20))\ndef f():\n    return 1\n"
    result = sb.run(RunSpec(call_job(code)))
    assert result.status == Status.OK
    assert len(result.stdout) == Limits().keep_output_bytes
    assert result.records[-1]["v"] == 1


def test_output_limit_kills(sb: LocalSandbox) -> None:
    result = sb.run(RunSpec(call_job("while True:\n    print('x' * 100000)\n"), Limits(max_output_bytes=1 << 20)))
    assert result.status == Status.OUTPUT_LIMIT


def test_wall_deadline_kills_whole_job(sb: LocalSandbox) -> None:
    code = "import os, signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nos.fork()\nwhile True:\n    pass\n"
    result = sb.run(RunSpec(call_job(code), Limits(wall_s=1.0)))
    assert result.status == Status.TIMEOUT


def test_memory_limit(sb: LocalSandbox) -> None:
    result = sb.run(RunSpec(call_job("def f():\n    return len(bytearray(1 << 31))\n"), Limits(memory_mb=256)))
    assert result.records[-1]["s"] == "memory"


def test_fork_bomb_does_not_starve_concurrent_job(sb: LocalSandbox) -> None:
    bomb = call_job(
        "import os\ndef f():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n"
        "            pass\n"
    )
    forker = call_job(
        "import os\ndef f():\n    pids = []\n    for _ in range(20):\n        pid = os.fork()\n"
        "        if pid == 0:\n            os._exit(0)\n        pids.append(pid)\n    for p in pids:\n"
        "        os.waitpid(p, 0)\n    return len(pids)\n"
    )
    results = sb.run_many([RunSpec(bomb, Limits(wall_s=3)), RunSpec(forker, Limits(wall_s=20))])
    assert results[1].status == Status.OK, results[1]
    assert results[1].records[-1]["v"] == 20


def test_many_concurrent_jobs_are_independent(sb: LocalSandbox) -> None:
    specs = [
        RunSpec(call_job(f"def f():\n    open('/tmp/x', 'a').write('{i}')\n    return open('/tmp/x').read()\n"))
        for i in range(40)
    ]
    results = sb.run_many(specs)
    assert [r.records[-1]["v"] for r in results] == [str(i) for i in range(40)]


def test_zygote_death_is_an_infrastructure_failure() -> None:
    box = LocalSandbox()
    try:
        box.isolation()
        assert box._proc is not None
        pid = box._proc.pid
        job = call_job("import time\ndef f():\n    return 1\ntime.sleep(0.3)\n")
        import threading

        threading.Timer(0.15, lambda: os.kill(pid, signal.SIGKILL)).start()
        result = box.run(RunSpec(job))
        assert result.infra_error and result.status == Status.CRASHED
        # A fresh zygote is started on the next run.
        again = box.run(RunSpec(call_job("def f():\n    return 2\n")))
        assert again.records[-1]["v"] == 2
    finally:
        box.close()


@pytest.mark.parametrize(
    "value",
    [
        1,
        -2.5,
        "s",
        None,
        True,
        [1, (2, 3)],
        {"a": 1},
        {1: "x"},
        {"$x": 1},
        {1, 2},
        frozenset({3}),
        b"\x00",
        1 + 2j,
        float("inf"),
    ],
)
def test_wire_round_trip(value: Any) -> None:
    back = wire.decode(wire.encode(value))
    assert back == value and type(back) is type(value)


def test_wire_sends_subclasses_as_their_base_value_and_other_objects_as_handles() -> None:
    class Sub(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    class Spoof:
        __class__ = property(lambda self: int)  # type: ignore[assignment]

    for handle in (None, lambda obj: 7):
        back = wire.decode(wire.encode([Sub(1)], handle))
        assert back == [1] and type(back[0]) is int
    handles = wire.encode([object(), Spoof()], lambda obj: 7)
    assert handles == [{"$h": 7, "$type": "object"}, {"$h": 7, "$type": "Spoof"}]
    for value in (object(), Spoof()):
        with pytest.raises(wire.Unsupported):
            wire.encode([value])


def test_next_job_in_a_slot_finds_tmp_empty(sb: LocalSandbox) -> None:
    """Slots keep their mount namespace between jobs only while /tmp stays empty."""
    litter = call_job(
        "import os\ndef f():\n    open('/tmp/a', 'w').write('secret')\n    open('/tmp/.hidden', 'w').close()\n"
        "    os.mkdir('/tmp/d')\n    open('/tmp/d/x', 'w').close()\n    os.symlink('/etc/passwd', '/tmp/l')\n"
        "    os.mkfifo('/tmp/p')\n    return [os.getuid(), sorted(os.listdir('/tmp'))]\n"
    )
    tidy = call_job(
        "import os\ndef f():\n    open('/tmp/t', 'w').write('x')\n    os.unlink('/tmp/t')\n"
        "    return [os.getuid(), os.listdir('/tmp')]\n"
    )
    look = call_job("import os\ndef f():\n    return [os.getuid(), os.listdir('/tmp')]\n")
    results = [sb.run(RunSpec(job)) for job in (litter, look, tidy, look)]
    values = [wire.decode(r.records[-1]["v"]) for r in results]
    assert values[0][1] == [".hidden", "a", "d", "l", "p"]
    # Same uid: the same slot ran every job, so the check really covered reuse.
    assert len({v[0] for v in values}) == 1
    assert values[1][1] == [] and values[2][1] == [] and values[3][1] == []


def test_program_is_compiled_before_any_job_runs(sb: LocalSandbox) -> None:
    result = sb.run(RunSpec(call_job("def f(:\n    return 1\n")))
    [record] = result.records
    assert record["load"] == "error" and "SyntaxError" in record["e"]
    assert result.status == Status.OK and result.wall_s == 0.0


def test_program_does_not_inherit_the_runners_future_flags(sb: LocalSandbox) -> None:
    # The runner's modules use `from __future__ import annotations`; programs must not.
    code = "def f(x: int) -> int:\n    return f.__annotations__['x'] is int\n"
    result = sb.run(RunSpec(call_job(code, [[1]])))
    assert result.records[-1]["v"] is True


def test_zygote_carries_no_fork_handlers(sb: LocalSandbox) -> None:
    # threading and random register fork handlers that every job would then run.
    # Nor dataclasses (`rlvr.sandboxes.base`), socket (its enums) or selectors: every
    # page the zygote holds, each job maps.
    unwanted = ["threading", "random", "dataclasses", "rlvr.sandboxes.base", "socket", "selectors"]
    code = f"import sys\ndef f():\n    return [m for m in {unwanted!r} if m in sys.modules]\n"
    assert sb.run(RunSpec(call_job(code))).records[-1]["v"] == []


@pytest.mark.parametrize("module", ["socket", "selectors", "random", "threading"])
def test_a_program_imports_what_the_zygote_does_not_hold(sb: LocalSandbox, module: str) -> None:
    code = f"import {module}\ndef f():\n    return {module}.__name__\n"
    assert sb.run(RunSpec(call_job(code))).records[-1]["v"] == module


def test_job_larger_than_the_socket_buffer_is_fed(sb: LocalSandbox) -> None:
    big = call_job("def f():\n    return 1\n", pad="x" * (4 << 20))
    result = sb.run(RunSpec(big, Limits(wall_s=5)))
    assert result.status == Status.OK and result.records[-1]["v"] == 1
