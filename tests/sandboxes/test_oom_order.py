"""Whom the kernel's OOM killer takes first: every process of a job (oom_score_adj 1000),
never the zygote, whose death would fail every job in flight as the sandbox's own.

The /proc a job sees is read-only, so a job's process cannot set its own value there;
it sets it through the zygote's writable copy before it runs untrusted code. Without
that, a job would keep the zygote's value: -1000 (never killed) where the zygote may
protect itself, so a host short of memory would kill anything but the job.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from rlvr.sandboxes import RunResult, RunSpec
from rlvr.sandboxes.jobs import AssertSuite, SplitJob, StdioJob, ValuesJob
from rlvr.sandboxes.local import isolate, jobroot, linux
from rlvr.sandboxes.local.sandbox import LocalSandbox
from tests.sandboxes.jobs import native_job, returned
from tests.services import require

JOB = isolate.OOM_JOB.decode()
READ = "open('/proc/self/oom_score_adj').read().strip()"


def call(sb: LocalSandbox, body: str) -> Any:
    return returned(sb, body, "os, subprocess, sys, threading")


# Each body returns what one kind of process of a job reads as its own oom_score_adj.
IN_THE_PROGRAM = {
    "the program's process": f"return {READ}",
    "a thread of the program": (
        f"out = []\nt = threading.Thread(target=lambda: out.append({READ}))\nt.start()\nt.join()\nreturn out[0]"
    ),
    "a forked child": (
        "r, w = os.pipe()\nif os.fork() == 0:\n"
        f"    os.write(w, {READ}.encode())\n    os._exit(0)\n"
        "os.close(w)\nos.wait()\nreturn os.read(r, 100).decode()"
    ),
    "a grandchild": (
        "r, w = os.pipe()\nif os.fork() == 0:\n    if os.fork() == 0:\n"
        f"        os.write(w, {READ}.encode())\n        os._exit(0)\n    os.wait()\n    os._exit(0)\n"
        "os.close(w)\nos.wait()\nreturn os.read(r, 100).decode()"
    ),
    "a fresh interpreter": (
        # The zygote's sys.executable may be a virtualenv's, outside the job's root.
        "python = next(p for p in (sys.executable, sys._base_executable, '/usr/bin/python3') if os.path.exists(p))\n"
        f"return subprocess.run([python, '-c', {'print(' + READ + ')'!r}], capture_output=True, text=True)"
        ".stdout.strip()"
    ),
    "a shell": (
        "return subprocess.run(['sh', '-c', 'cat /proc/self/oom_score_adj'], capture_output=True, text=True)"
        ".stdout.strip()"
    ),
}


@pytest.mark.parametrize("where", list(IN_THE_PROGRAM))
def test_every_process_of_a_job_goes_first(sb: LocalSandbox, where: str) -> None:
    if where == "a shell":
        require(shutil.which("sh") is not None, "sh")
    assert call(sb, IN_THE_PROGRAM[where]) == JOB


@pytest.mark.parametrize("value", ["-1000", "-1", "0", "999"])
def test_a_job_cannot_make_itself_harder_to_kill(sb: LocalSandbox, value: str) -> None:
    body = (
        "try:\n    fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)\n"
        f"    os.write(fd, b'{value}')\nexcept OSError as e:\n    pass\n"
        f"return {READ}"
    )
    assert call(sb, body) == JOB


def test_values_and_stdio_jobs_go_first(sb: LocalSandbox) -> None:
    values = sb.run(RunSpec(ValuesJob(code="", exprs=[READ], timeout_s=10)))
    assert values.records[-1] == {"i": 0, "s": "ok", "v": JOB}, values
    stdio = sb.run(RunSpec(StdioJob(code=f"print({READ})", inputs=["", ""], timeout_s=10, max_output=1000)))
    assert [r.get("out", "").strip() for r in stdio.records if "i" in r] == [JOB, JOB], stdio


def split(sb: LocalSandbox, tests: list[str]) -> RunResult:
    code = f"def program_side():\n    return {READ}\n"
    spec = SplitJob(code=code, timeout_s=10)
    return sb.run(RunSpec(spec, tests=AssertSuite(tests=tests)))


def test_both_halves_of_a_split_job_go_first(sb: LocalSandbox) -> None:
    result = split(sb, [f"assert program_side() == {JOB!r}", f"assert {READ} == {JOB!r}"])
    assert [r.get("s") for r in result.records if "i" in r] == ["pass", "pass"], result


def test_a_native_program_goes_first(sb: LocalSandbox) -> None:
    require(shutil.which("g++") is not None, "g++")
    code = (
        "#include <fstream>\n#include <iostream>\n#include <string>\n"
        'int main() { std::ifstream f("/proc/self/oom_score_adj"); std::string s; f >> s; std::cout << s; }\n'
    )
    result = sb.run(RunSpec(native_job("cpp", code, [""])))
    assert [r.get("out") for r in result.records if "i" in r] == [JOB], result


def zygote_values(parent: int) -> dict[int, str]:
    """oom_score_adj of the zygote processes `parent` started (the one it runs and, in
    the zygote's own PID namespace, the one that forks jobs)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = open(f"/proc/{name}/cmdline", "rb").read().split(b"\0")
            value = open(f"/proc/{name}/oom_score_adj").read().strip()
        except OSError:
            continue
        if b"--parent" in cmdline and cmdline[cmdline.index(b"--parent") + 1] == str(parent).encode():
            found[int(name)] = value
    return found


def test_the_zygote_never_goes_first(sb: LocalSandbox) -> None:
    call(sb, f"return {READ}")
    values = zygote_values(os.getpid())
    assert values, "no zygote found"
    assert JOB not in values.values(), values
    if _may_lower():
        assert set(values.values()) == {isolate.OOM_ZYGOTE.decode()}, values


def _may_lower() -> bool:
    """Whether this host lets root lower an oom_score_adj (CAP_SYS_RESOURCE)."""
    with open("/proc/self/status") as status:
        caps = next(line for line in status if line.startswith("CapEff:"))
    return bool(int(caps.split()[1], 16) >> 24 & 1)


@pytest.mark.parametrize("open_tree", ["allowed", "refused"])
def test_the_writable_proc_survives_the_root_going_read_only(open_tree: str, tmp_path: Any) -> None:
    """`jobroot.writable_proc` in a throw-away mount namespace: by open_tree, or where
    that is refused (Docker's default seccomp profile) by a bind mount it detaches. Once
    every mount is read-only, a job's process still sets its oom_score_adj through it."""
    require(os.geteuid() == 0 and linux.SUPPORTED, "root on x86_64 Linux")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        outcome = b"?"
        try:
            linux.unshare(linux.CLONE_NEWNS)
            linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)
            if open_tree == "refused":
                linux.open_tree_clone = _refuse  # type: ignore[assignment]
            fd = jobroot.writable_proc(str(tmp_path / "proc"))
            gone = not os.path.exists(tmp_path / "proc")
            linux.mount_setattr_recursive("/", linux.MOUNT_ATTR_RDONLY)
            isolate.set_oom_score_adj(isolate.OOM_JOB, fd)
            with open("/proc/self/oom_score_adj") as now:
                outcome = f"{gone} {now.read().strip()}".encode()
        finally:
            os.write(w, outcome)
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 100) == f"True {JOB}".encode()
    os.close(r)


def _refuse(path: str) -> int:
    raise PermissionError(1, "open_tree refused")
