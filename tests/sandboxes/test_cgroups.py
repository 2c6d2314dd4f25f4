"""Memory and processes are bounded per job, across all its processes and its files:
each hog below stays under every per-process limit (address space, file size) and
goes over the job's `memory_mb` only in sum. Each such job ends with status `memory`,
and never as the sandbox's own failure (which would mask the item)."""

from __future__ import annotations

import os
import shutil

import pytest

from rlvr.sandboxes import Limits, RunResult, RunSpec, Status
from rlvr.sandboxes.jobs import CallJob
from rlvr.sandboxes.local import cgroups, isolate
from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from tests.sandboxes.jobs import native_job
from tests.services import require

MEMORY_MB = 128
HOG = Limits(wall_s=60, cpu_s=30, memory_mb=MEMORY_MB, tmp_mb=1024, fsize_mb=16)


@pytest.fixture(scope="module")
def sb() -> LocalSandbox:
    box = get_local_sandbox()
    require(box.isolation().get("per_job_memory") is True, "per-job cgroups (run as root)")
    return box


def call(sb: LocalSandbox, body: str, limits: Limits = HOG) -> RunResult:
    code = "import mmap, os, time\ndef f():\n" + "".join(f"    {line}\n" for line in body.split("\n"))
    return sb.run(RunSpec(CallJob(code=code, fn_name="f", inputs=[[]], timeout_s=40), limits))


# Each: 15 MiB pieces (under the 16 MiB file-size and the address-space limits of each
# process) up to about 300 MiB in all, more than twice the job's 128 MiB.
HOGS = {
    "memfds": "fds = [os.memfd_create('m') for _ in range(20)]\nfor fd in fds:\n    os.write(fd, b'x' * (15 << 20))",
    "tmp files": "for i in range(20):\n    open(f'/tmp/f{i}', 'wb').write(b'x' * (15 << 20))",
    "hidden tmp files": (
        "os.mkdir('/tmp/.d')\nfor i in range(20):\n    open(f'/tmp/.d/{i}', 'wb').write(b'y' * (15 << 20))"
    ),
    "shared mmap in children": (
        "for _ in range(6):\n    if os.fork() == 0:\n"
        "        m = mmap.mmap(-1, 60 << 20)\n"
        "        for _ in range(60):\n            m.write(b'z' * (1 << 20))\n"
        "        time.sleep(5)\n        os._exit(0)\n"
        "os.wait()\ntime.sleep(5)"
    ),
    "forked children": (
        "pids = []\nfor _ in range(6):\n    pid = os.fork()\n    if pid == 0:\n        b = bytearray(60 << 20)\n"
        "        for i in range(0, len(b), 4096):\n            b[i] = 1\n        time.sleep(5)\n        os._exit(0)\n"
        "    pids.append(pid)\nfor p in pids:\n    os.waitpid(p, 0)"
    ),
    "children holding memfds": (
        "for _ in range(10):\n    if os.fork() == 0:\n        fd = os.memfd_create('c')\n"
        "        os.write(fd, b'c' * (15 << 20))\n        time.sleep(5)\n        os._exit(0)\n"
        "os.wait()\ntime.sleep(5)"
    ),
    "pipe buffers and files together": (
        "fds = [os.memfd_create('m') for _ in range(10)]\nfor fd in fds:\n    os.write(fd, b'x' * (15 << 20))\n"
        "for i in range(10):\n    open(f'/tmp/g{i}', 'wb').write(b'x' * (15 << 20))"
    ),
}


@pytest.mark.parametrize("name", sorted(HOGS))
def test_a_job_over_its_memory_in_sum_is_killed_as_memory(sb: LocalSandbox, name: str) -> None:
    result = call(sb, HOGS[name] + "\nreturn 1")
    assert result.infra_error is None, result
    assert result.status == Status.MEMORY, result


def test_the_next_job_in_the_slot_is_not_charged_for_the_last(sb: LocalSandbox) -> None:
    hog, small = call(sb, HOGS["tmp files"] + "\nreturn 1"), call(sb, "return len(bytearray(64 << 20))")
    assert hog.status == Status.MEMORY
    assert small.status == Status.OK and small.records[-1]["v"] == 64 << 20, small


def test_a_job_within_its_memory_is_untouched(sb: LocalSandbox) -> None:
    body = "fds = [os.memfd_create('m') for _ in range(4)]\nfor fd in fds:\n    os.write(fd, b'x' * (15 << 20))\n"
    body += "return 4"
    result = call(sb, body)
    assert result.status == Status.OK and result.records[-1]["v"] == 4, result


def test_one_big_allocation_is_the_programs_memory_error(sb: LocalSandbox) -> None:
    result = call(sb, "return len(bytearray(400 << 20))")
    assert result.infra_error is None and result.records[-1].get("s") == "memory", result


def test_node_buffers_off_its_heap_count(sb: LocalSandbox) -> None:
    require(shutil.which("node") is not None, "node")
    # Each node process reserves about 1 GiB of address space (the job's RLIMIT_AS must
    # allow it) and has its own: eight of them with 210 MiB of Buffers each.
    code = (
        "const cp = require('child_process');\n"
        "const hog = 'const b = [];"
        " for (let i = 0; i < 14; i++) b.push(Buffer.alloc(15 << 20, 1)); setTimeout(() => {}, 5000);';\n"
        "const kids = [];\nfor (let i = 0; i < 8; i++) kids.push(cp.spawn(process.execPath, ['-e', hog]));\n"
        "let left = kids.length;\n"
        "for (const k of kids) k.on('exit', (c) => { if (--left === 0) console.log('done'); });\n"
    )
    job = native_job("javascript", code, [""], timeout_s=30, compile_timeout_s=60)
    result = sb.run(RunSpec(job, Limits(wall_s=120, cpu_s=100, memory_mb=1536, nproc=512)))
    assert result.infra_error is None, result
    assert result.status == Status.MEMORY, result


def test_cpp_children_count_together(sb: LocalSandbox) -> None:
    require(shutil.which("g++") is not None, "g++")
    code = (
        "#include <cstring>\n#include <cstdlib>\n#include <unistd.h>\n#include <sys/wait.h>\n"
        "int main() { for (int i = 0; i < 6; i++) if (fork() == 0) { char *p = (char *)malloc(60 << 20);"
        " memset(p, 1, 60 << 20); sleep(5); return p[12345] + p[(60 << 20) - 1] - 2; }\n"
        " while (wait(nullptr) > 0) {} return 0; }\n"
    )
    job = native_job("cpp", code, [""], timeout_s=30, compile_timeout_s=90, memory_mb=100)
    result = sb.run(RunSpec(job, Limits(wall_s=120, cpu_s=100, memory_mb=256)))
    assert result.infra_error is None, result
    assert result.status == Status.MEMORY, result


def test_processes_and_threads_are_bounded_per_job(sb: LocalSandbox) -> None:
    body = (
        "import threading\nstop = threading.Event()\nstarted = 0\nfor _ in range(200):\n    try:\n"
        "        threading.Thread(target=stop.wait).start()\n    except RuntimeError:\n        break\n"
        "    started += 1\nstop.set()\nreturn started"
    )
    result = call(sb, body, Limits(wall_s=30, cpu_s=20, nproc=24))
    assert result.status == Status.OK and result.records[-1]["v"] < 24, result


def test_the_zygote_removes_the_cgroups_of_zygotes_that_are_gone() -> None:
    require(os.geteuid() == 0, "root")
    box = LocalSandbox()
    try:
        made = box.isolation()
        require(made.get("per_job_memory") is True, "per-job cgroups")
        first = box._hello["pid"]
        assert box._proc is not None
        box._proc.kill()  # killed: it cannot remove its own
        box.close()
        box.isolation()  # a new zygote
        version, parents = cgroups._layout()
        assert version == made["cgroups"]
        for parent in parents:
            assert not os.path.exists(os.path.join(parent, f"{cgroups.PREFIX}{first}"))
            assert os.path.isdir(os.path.join(parent, f"{cgroups.PREFIX}{box._hello['pid']}"))
    finally:
        box.close()


def test_without_cgroups_the_level_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    caps = isolate.Capabilities(root=True)
    caps.mount_ns = caps.readonly_root = caps.pid_ns = caps.net_ns = caps.uts_ns = caps.ipc_ns = True
    caps.uid_drop = caps.seccomp = True
    caps.tests_mnt = 11
    caps.cgroups = "v1"
    caps.minimal_root = caps.own_pid_ns = True
    assert caps.level == "full" and caps.to_dict()["per_job_memory"] is True
    caps.cgroups = ""
    assert caps.level == "namespaces" and caps.to_dict()["per_job_memory"] is False
    monkeypatch.setattr(cgroups, "ROOT", "/nonexistent/cgroup")
    made, why = isolate.setup_cgroups()
    assert made is None and why.startswith("cgroups:")
