"""What jobs run, run under the sandbox's seccomp allow list (and, at `full`
isolation, in the job's own minimal root): CPython, g++ with cc1plus, as and ld, the
programs g++ builds, node and coqc. And what the allow list refuses fails softly, with
ENOSYS, in a real job."""

from __future__ import annotations

import errno
import os
import shutil
import sys
from typing import Any

import pytest

from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.jobs import CallJob
from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from rlvr.sandboxes.local.syscalls import NOTABLY_REFUSED
from rlvr.sandboxes.runner import wire
from tests.sandboxes.jobs import native_job
from tests.services import require

BIG = Limits(wall_s=120, cpu_s=100, memory_mb=4096)


@pytest.fixture(scope="module")
def sb() -> LocalSandbox:
    box = get_local_sandbox()
    require(box.isolation()["isolation"] == "full", "full isolation (run as root)")
    return box


def call(sb: LocalSandbox, code: str, limits: Limits = BIG, timeout_s: int = 90) -> Any:
    job = CallJob(code=code, fn_name="f", inputs=[[]], timeout_s=timeout_s)
    result = sb.run(RunSpec(job, limits))
    assert result.status == Status.OK and result.records[-1].get("s") == "ok", result
    return wire.decode(result.records[-1]["v"])


def native(sb: LocalSandbox, language: str, code: str, **extra: Any) -> Any:
    tool = shutil.which("g++" if language == "cpp" else "node")
    require(tool is not None, f"{language} toolchain")
    job = native_job(language, code, ["7\n"], timeout_s=10, compile_timeout_s=90, **extra)
    result = sb.run(RunSpec(job, BIG))
    assert result.status == Status.OK and result.infra_error is None, result
    return result.records


REFUSED = sorted({**NOTABLY_REFUSED, "future_451": 451, "future_470": 470, "unknown_1000": 1000}.items())


def test_refused_calls_fail_with_enosys_in_a_job(sb: LocalSandbox) -> None:
    code = (
        "import ctypes\ndef f():\n    libc = ctypes.CDLL(None, use_errno=True)\n    out = []\n"
        f"    for nr in {[nr for _, nr in REFUSED]!r}:\n"
        "        ctypes.set_errno(0)\n        rc = libc.syscall(nr, 0, 0, 0, 0, 0)\n"
        "        out.append([rc, ctypes.get_errno()])\n    return out\n"
    )
    got = dict(zip([name for name, _ in REFUSED], call(sb, code), strict=True))
    assert got == {name: [-1, errno.ENOSYS] for name, _ in REFUSED}


CPP_REFUSED = r"""
#include <cerrno>
#include <cstdio>
#include <sys/syscall.h>
#include <unistd.h>
int main() {
    long calls[] = {SYS_modify_ldt, 447 /* memfd_secret */, SYS_ptrace, SYS_bpf, SYS_io_uring_setup, 999};
    for (long nr : calls) { errno = 0; long rc = syscall(nr, 0, 0, 0, 0, 0); std::printf("%ld %d\n", rc, errno); }
}
"""


def test_a_compiled_program_is_refused_the_same(sb: LocalSandbox) -> None:
    records = native(sb, "cpp", CPP_REFUSED)
    run = next(r for r in records if r.get("i") == 0)
    assert run["s"] == "ok", records
    assert run["out"].split("\n")[:-1] == [f"-1 {errno.ENOSYS}"] * 6


CPP_PROGRAM = r"""
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>
int main() {
    int n; std::cin >> n;
    std::vector<std::thread> threads; std::vector<long> part(4);
    for (int t = 0; t < 4; t++) threads.emplace_back([&, t] { for (int i = t; i <= n; i += 4) part[t] += i; });
    for (auto &t : threads) t.join();
    std::random_device rd; std::mt19937 gen(rd());
    { std::ofstream("/tmp/scratch") << n; }
    std::map<std::string, long> m{{"sum", 0}};
    for (long p : part) m["sum"] += p;
    auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    std::cout << m["sum"] << " " << (now > 0) << " " << (gen() >= 0) << std::endl;
}
"""


def test_gxx_compiles_and_its_program_runs(sb: LocalSandbox) -> None:
    records = native(sb, "cpp", CPP_PROGRAM)
    assert {"load": "ok"} in records, records
    run = next(r for r in records if r.get("i") == 0)
    assert run["s"] == "ok" and run["out"] == "28 1 1\n", records


NODE_PROGRAM = r"""
const { Worker } = require('worker_threads');
const zlib = require('zlib'), crypto = require('crypto'), fs = require('fs'), os = require('os');
const n = parseInt(fs.readFileSync(0, 'utf8'));
const buf = Buffer.alloc(1 << 20, 1);
const w = new Worker('require("worker_threads").parentPort.postMessage(6)', { eval: true });
w.on('message', (m) => {
  fs.writeFileSync('/tmp/x', 'y');
  const ok = zlib.gunzipSync(zlib.gzipSync(buf)).length === buf.length && crypto.randomBytes(4).length === 4;
  setTimeout(() => console.log(n * m, ok, os.cpus().length > 0), 5);
});
"""


def test_node_runs_workers_timers_and_buffers(sb: LocalSandbox) -> None:
    records = native(sb, "javascript", NODE_PROGRAM)
    run = next(r for r in records if r.get("i") == 0)
    assert run["s"] == "ok" and run["out"] == "42 true true\n", records


COQ = "Require Import Arith Lia List.\nLemma l (n : nat) : n + 0 = n.\nProof. lia. Qed.\n"


def test_coqc_checks_a_proof_with_its_stdlib(sb: LocalSandbox) -> None:
    coqc = shutil.which("coqc")
    require(coqc is not None, "coqc")
    code = (
        "import subprocess\nENV = {'HOME': '/tmp', 'PATH': '/usr/bin:/bin'}\n"
        "def f():\n    open('/tmp/p.v', 'w').write(" + repr(COQ) + ")\n"
        f"    done = subprocess.run([{coqc!r}, '/tmp/p.v'], capture_output=True, cwd='/tmp', timeout=80, env=ENV)\n"
        "    open('/tmp/q.v', 'w').write('Lemma x : 1 = 2. Proof. reflexivity. Qed.')\n"
        f"    bad = subprocess.run([{coqc!r}, '/tmp/q.v'], capture_output=True, cwd='/tmp', timeout=80, env=ENV)\n"
        "    refused = bad.returncode != 0 and b'Unable to unify' in bad.stderr\n"
        "    return [done.returncode, done.stderr.decode()[-500:], refused]\n"
    )
    assert call(sb, code) == [0, "", True]


# The interpreter itself, not a virtualenv's link to it: a virtualenv in a checkout
# under /tmp (a CI clone) is covered by each job's private /tmp.
PYTHON = os.path.realpath(sys.executable)


def test_python_threads_processes_and_sockets(sb: LocalSandbox) -> None:
    code = (
        "import asyncio, concurrent.futures, os, socket, subprocess, sys, threading, mmap, time\n"
        "def f():\n"
        "    with concurrent.futures.ThreadPoolExecutor(2) as ex:\n        a = sum(ex.map(abs, [-1, -2]))\n"
        "    pid = os.fork()\n    if pid == 0:\n        os._exit(7)\n"
        "    b = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
        f"    c = subprocess.run([{PYTHON!r}, '-c', 'print(5)'], capture_output=True).stdout\n"
        "    x, y = socket.socketpair()\n    x.send(b'z')\n"
        "    m = mmap.mmap(-1, 4096)\n    m[0] = 1\n    fd = os.memfd_create('x')\n    os.write(fd, b'q')\n"
        "    asyncio.run(asyncio.sleep(0.001))\n"
        "    try:\n        socket.socket(socket.AF_INET)\n        inet = 'allowed'\n"
        "    except OSError as e:\n        inet = e.errno\n"
        "    return [a, b, c, y.recv(1), m[0], os.pread(fd, 1, 0), inet, time.monotonic() > 0]\n"
    )
    assert call(sb, code) == [3, 7, b"5\n", b"z", 1, b"q", errno.EACCES, True]
