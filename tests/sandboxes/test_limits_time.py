"""Per-test time limits a program cannot stretch (issue 30, class 3).

Call and values jobs: a program that switches the runner's SIGALRM off (ignored,
blocked, swallowed, its timer disarmed) is still stopped at its test's limit, by the
trusted client's clock (`local.pacing`). Stdio jobs: nothing of a test's run (a
`setsid()` daemon) lives on into the next test, and no test's process reads another
test's input (from the runner's memory, its /proc files, or a file).

No assertion here is on the machine's speed: a slow test is busy for longer than its
limit plus the client's slack, so that it is late however fast the machine is, and what
is asserted is the verdict and that the job ended.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.jobs import CallJob, NativeStdioJob, StdioJob, ValuesJob
from rlvr.sandboxes.local import pacing
from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from tests.services import require

LIMIT_S = 1.0
# Longer than the limit and the client's slack together: late on any machine. Shorter
# than what the client allowed before (1.5 x the limit + 0.25 s).
SLOW_S = LIMIT_S + pacing.TEST_SLACK_S + 0.2
WALL = Limits(wall_s=120, cpu_s=120)


@pytest.fixture(scope="module")
def box() -> Iterator[LocalSandbox]:
    sandbox = get_local_sandbox()
    if sandbox.isolation()["isolation"] != "full":
        require(False, "full isolation (run as root)")
    yield sandbox


# Each takes SIGALRM out of the runner's hands in its own way, then is busy on input 1
# for `seconds` (the program's own clock: it cannot see the client's).
DISARMS = {
    "ignored": "signal.signal(signal.SIGALRM, signal.SIG_IGN)",
    "blocked": "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})",
    "swallowed": "signal.signal(signal.SIGALRM, lambda *a: None)",
    "timer_off": "signal.setitimer(signal.ITIMER_REAL, 0)",
}
BUSY = {
    "python_loop": "while time.monotonic() < end:\n            pass",
    # The exception the alarm raises, caught and the work resumed.
    "catches_timeout": (
        "while time.monotonic() < end:\n"
        "            try:\n"
        "                while time.monotonic() < end:\n"
        "                    pass\n"
        "            except BaseException:\n"
        "                pass"
    ),
    # Blocked in C (libc's sleep, in a thread the main thread waits on).
    "c_sleep_in_thread": (
        "t = threading.Thread(target=ctypes.CDLL(None).usleep, args=(int((end - time.monotonic()) * 1e6),))\n"
        "        t.start()\n"
        "        while t.is_alive():\n"
        "            try:\n"
        "                t.join()\n"
        "            except BaseException:\n"
        "                pass"
    ),
}


def _program(disarm: str, busy: str, seconds: float) -> str:
    return (
        "import ctypes, signal, threading, time\n"
        "def f(x):\n"
        f"    {DISARMS[disarm]}\n"
        "    if x == 1:\n"
        f"        end = time.monotonic() + {seconds}\n"
        f"        {BUSY[busy]}\n"
        "    return x\n"
    )


def _job(mode: str, code: str, stop: bool | None = None) -> CallJob | ValuesJob:
    if mode == "call":
        return CallJob(code=code, fn_name="f", inputs=[[0], [1], [2]], timeout_s=LIMIT_S, stop_on_failure=stop)
    return ValuesJob(code=code, exprs=["f(0)", "f(1)", "f(2)"], timeout_s=LIMIT_S, stop_on_failure=stop)


def _by_index(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {r["i"]: r for r in records if type(r.get("i")) is int}


@pytest.mark.parametrize("busy", sorted(BUSY))
@pytest.mark.parametrize("disarm", sorted(DISARMS))
@pytest.mark.parametrize("mode", ["call", "values"])
def test_a_disarmed_alarm_does_not_stretch_a_test(box: LocalSandbox, mode: str, disarm: str, busy: str) -> None:
    result = box.run(RunSpec(_job(mode, _program(disarm, busy, SLOW_S)), WALL))
    tests = _by_index(result.records)
    assert tests[0]["s"] == "ok", result
    # Its record came late (graded a timeout, the job ran on) or never came (the job
    # was killed at the test's deadline, not the job's).
    if 1 in tests:
        assert tests[1]["s"] == "timeout", result
    else:
        assert result.status == Status.TIMEOUT and 2 not in tests, result


@pytest.mark.parametrize("disarm", sorted(DISARMS))
def test_a_test_that_never_ends_ends_its_job(box: LocalSandbox, disarm: str) -> None:
    """Busy far past the job's wall time, in a job that stops at its first failure: the
    client kills the job once the test's own deadline passes (were it the wall time,
    this would wait 120 s)."""
    result = box.run(RunSpec(_job("call", _program(disarm, "catches_timeout", 10_000), stop=True), WALL))
    tests = _by_index(result.records)
    assert result.status == Status.TIMEOUT and tests[0]["s"] == "ok", result
    assert tests.get(1, {}).get("s") != "ok" and 2 not in tests, result


def test_a_test_that_never_ends_fails_at_the_wall_time_elsewhere(box: LocalSandbox) -> None:
    """Where the other tests would count, the job runs on to its wall time."""
    limits = Limits(wall_s=LIMIT_S * 4, cpu_s=120)
    result = box.run(RunSpec(_job("call", _program("ignored", "catches_timeout", 10_000)), limits))
    tests = _by_index(result.records)
    assert result.status == Status.TIMEOUT and tests[0]["s"] == "ok" and tests.get(1, {}).get("s") != "ok", result


@pytest.mark.parametrize("mode", ["call", "values"])
def test_a_slow_load_with_the_alarm_off_is_a_timeout(box: LocalSandbox, mode: str) -> None:
    code = (
        "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        f"end = time.monotonic() + {SLOW_S}\nwhile time.monotonic() < end:\n    pass\n"
        "def f(x):\n    return x\n"
    )
    result = box.run(RunSpec(_job(mode, code), WALL))
    loads = [r for r in result.records if "load" in r]
    # Graded late, or killed at the load's deadline before its record came.
    assert (loads[0]["load"] == "timeout") if loads else result.status == Status.TIMEOUT, result
    assert not [r for r in result.records if r.get("s") == "ok"], result


@pytest.mark.parametrize("mode", ["call", "values"])
def test_honest_programs_pass(box: LocalSandbox, mode: str) -> None:
    code = "import time\ndef f(x):\n    time.sleep(0.05)\n    return x\n"
    result = box.run(RunSpec(_job(mode, code), WALL))
    assert result.status == Status.OK and [r["s"] for r in _by_index(result.records).values()] == ["ok"] * 3


# ------------------------------------------------------------------ stdio

SECRET = "SECRET-INPUT-7f3a9c"
# Each test's input: its index, then, for input 2, a secret no other test may see.
STDIO_INPUTS = ["0\n", "1\n", f"2 {SECRET}\n"]

# Python: looks for the secret everywhere a test's process could: the objects its
# memory holds (what the runner's fork left it), every /proc/<pid> it can open (the
# runner's `mem`, `environ`, `cmdline`, its fds), and /tmp. Prints where it was found.
PY_HUNT = r"""
import gc, os, stat, sys
secret = bytes.fromhex(%r)
text = secret.decode()
found = []
for obj in gc.get_objects():
    members = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
    for m in members:
        if m is not secret and m is not text and isinstance(m, (str, bytes)):
            if (text if isinstance(m, str) else secret) in m:
                found.append('heap')
                break
def scan(pid):
    try:
        maps = open(f'/proc/{pid}/maps').read().splitlines()
        mem = open(f'/proc/{pid}/mem', 'rb', 0)
    except OSError:
        return False
    for line in maps:
        span, perms = line.split()[:2]
        if 'r' not in perms:
            continue
        lo, hi = (int(x, 16) for x in span.split('-'))
        try:
            mem.seek(lo)
            if secret in mem.read(min(hi - lo, 1 << 26)):
                return True
        except (OSError, ValueError, OverflowError):
            pass
    return False
me = int(os.readlink('/proc/self'))  # as /proc numbers it (its PID namespace may not be /proc's)
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    if int(pid) != me and scan(pid):
        found.append('mem of ' + pid)
    for name in ('environ', 'cmdline'):
        try:
            if secret in open(f'/proc/{pid}/{name}', 'rb').read():
                found.append(name + ' of ' + pid)
        except OSError:
            pass
    try:
        fds = os.listdir(f'/proc/{pid}/fd') if int(pid) != me else []
    except OSError:
        fds = []
    for fd in fds:
        path = f'/proc/{pid}/fd/{fd}'
        try:
            if stat.S_ISREG(os.stat(path).st_mode) and secret in open(path, 'rb').read(1 << 26):
                found.append(f'fd {fd} of {pid}')
        except OSError:
            pass
for root, _, files in os.walk('/tmp'):
    for name in files:
        try:
            if secret in open(os.path.join(root, name), 'rb').read():
                found.append(os.path.join(root, name))
        except OSError:
            pass
line = sys.stdin.readline()
print('FOUND ' + ','.join(found) if found and not line.startswith('2') else 'clean')
"""


def _stdio(code: str, inputs: list[str] = STDIO_INPUTS) -> StdioJob:
    return StdioJob(code=code, inputs=inputs, timeout_s=LIMIT_S * 5, max_output=1 << 16)


def test_a_stdio_test_reads_no_other_input(box: LocalSandbox) -> None:
    result = box.run(RunSpec(_stdio(PY_HUNT % SECRET.encode().hex()), WALL))
    outs = [r.get("out", "") for r in sorted(_by_index(result.records).values(), key=lambda r: r["i"])]
    assert outs[:2] == ["clean\n", "clean\n"], result


# A daemon left by the test of input 0 (each way out of its process group), its pid in
# /tmp; the test of input 1 says whether it still lives.
DAEMONS = {
    "setsid": "os.setsid()",
    "double_fork": "os.setsid()\n        if os.fork():\n            os._exit(0)",
    "own_group": "os.setpgid(0, 0)",
}
PY_DAEMON = """
import os, sys, time
line = sys.stdin.readline().strip()
if line == '0':
    pid = os.fork()
    if pid == 0:
        {escape}
        open('/tmp/daemon.pid', 'w').write(str(os.getpid()))
        for fd in (0, 1, 2):
            os.close(fd)
        while True:
            pass
    while not os.path.exists('/tmp/daemon.pid'):
        time.sleep(0.01)
    print('left')
else:
    pid = int(open('/tmp/daemon.pid').read())
    try:
        os.kill(pid, 0)
        print('alive')
    except ProcessLookupError:
        print('gone')
"""


@pytest.mark.parametrize("escape", sorted(DAEMONS))
def test_a_stdio_daemon_dies_with_its_test(box: LocalSandbox, escape: str) -> None:
    result = box.run(RunSpec(_stdio(PY_DAEMON.format(escape=DAEMONS[escape]), ["0\n", "1\n"]), WALL))
    outs = [r.get("out", "") for r in sorted(_by_index(result.records).values(), key=lambda r: r["i"])]
    assert outs == ["left\n", "gone\n"], result


def test_a_stdio_test_that_stops_its_runner_still_times_out(box: LocalSandbox) -> None:
    """SIGSTOP to the runner (ignored: it is its PID namespace's init), a run past the
    limit, SIGCONT: the test is a timeout all the same."""
    code = (
        "import os, signal, sys, time\n"
        "x = sys.stdin.readline().strip()\n"
        "if x == '1':\n"
        "    os.kill(os.getppid(), signal.SIGSTOP)\n"
        f"    end = time.monotonic() + {LIMIT_S * 5 + 1}\n"
        "    while time.monotonic() < end:\n        pass\n"
        "    os.kill(os.getppid(), signal.SIGCONT)\n"
        "print(x)\n"
    )
    result = box.run(RunSpec(_stdio(code, ["0\n", "1\n", "2\n"]), WALL))
    tests = _by_index(result.records)
    assert [tests[i]["s"] for i in range(3)] == ["ok", "timeout", "ok"], result


# C++: the same hunt in a compiled program (the runner's /proc files, /tmp/job.json),
# and a setsid daemon.
CPP_HUNT = r"""
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <fstream>
#include <sstream>
#include <dirent.h>
#include <unistd.h>
static const char *secret = "%s";
static bool has(const std::string &s) { return s.find(secret) != std::string::npos; }
static std::string slurp(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss; ss << f.rdbuf(); return ss.str();
}
static bool scan_mem(const std::string &pid) {
    std::ifstream maps("/proc/" + pid + "/maps");
    FILE *mem = fopen(("/proc/" + pid + "/mem").c_str(), "rb");
    if (!maps || !mem) { if (mem) fclose(mem); return false; }
    std::string line; bool hit = false;
    std::vector<char> buf;
    while (!hit && std::getline(maps, line)) {
        unsigned long lo, hi; char perms[8];
        if (sscanf(line.c_str(), "%%lx-%%lx %%7s", &lo, &hi, perms) != 3 || perms[0] != 'r') continue;
        unsigned long n = hi - lo; if (n > (1ul << 26)) n = 1ul << 26;
        buf.resize(n);
        if (fseeko(mem, (off_t)lo, SEEK_SET) != 0) continue;
        size_t got = fread(buf.data(), 1, n, mem);
        hit = memmem(buf.data(), got, secret, strlen(secret)) != nullptr;
    }
    fclose(mem);
    return hit;
}
int main() {
    std::string input; std::getline(std::cin, input);
    std::string found;
    if (has(slurp("/tmp/job.json"))) found += "job.json,";
    DIR *proc = opendir("/proc");
    char self[32] = {0};  // this process as /proc numbers it (its PID namespace may not be /proc's)
    std::string me = readlink("/proc/self", self, sizeof self - 1) > 0 ? self : std::to_string(getpid());
    while (struct dirent *e = proc ? readdir(proc) : nullptr) {
        std::string pid = e->d_name;
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid == me) continue;
        if (scan_mem(pid)) found += "mem of " + pid + ",";
        if (has(slurp("/proc/" + pid + "/environ"))) found += "environ of " + pid + ",";
    }
    if (input[0] == '2') found.clear();
    printf("%%s\n", found.empty() ? "clean" : ("FOUND " + found).c_str());
}
"""


def _cpp(code: str, inputs: list[str]) -> NativeStdioJob:
    gxx = shutil.which("g++")
    if gxx is None:
        require(False, "g++")
    return NativeStdioJob(
        language="cpp",
        code=code,
        inputs=inputs,
        timeout_s=LIMIT_S * 5,
        max_output=1 << 16,
        memory_mb=512,
        compile_timeout_s=60,
        gxx=gxx,
    )


def test_a_cpp_stdio_test_reads_no_other_input(box: LocalSandbox) -> None:
    code = CPP_HUNT.replace("#include <cstdio>", "#include <cstdio>\n#include <iostream>") % SECRET
    result = box.run(RunSpec(_cpp(code, STDIO_INPUTS), Limits(wall_s=120, cpu_s=120, memory_mb=2048)))
    outs = [r.get("out", "") for r in sorted(_by_index(result.records).values(), key=lambda r: r["i"])]
    assert outs[:2] == ["clean\n", "clean\n"], result


CPP_DAEMON = r"""
#include <cstdio>
#include <csignal>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
int main() {
    std::string line; std::getline(std::cin, line);
    if (line == "0") {
        pid_t pid = fork();
        if (pid == 0) {
            setsid();
            if (fork() != 0) _exit(0);
            { std::ofstream("/tmp/daemon.pid") << getpid(); }
            close(0); close(1); close(2);
            for (;;) {}
        }
        for (int i = 0; i < 1000 && !std::ifstream("/tmp/daemon.pid"); i++) usleep(10000);
        puts("left");
        return 0;
    }
    int pid = 0; std::ifstream("/tmp/daemon.pid") >> pid;
    puts(pid > 0 && kill(pid, 0) == 0 ? "alive" : "gone");
}
"""


def test_a_cpp_stdio_daemon_dies_with_its_test(box: LocalSandbox) -> None:
    result = box.run(RunSpec(_cpp(CPP_DAEMON, ["0\n", "1\n"]), Limits(wall_s=120, cpu_s=120, memory_mb=2048)))
    outs = [r.get("out", "") for r in sorted(_by_index(result.records).values(), key=lambda r: r["i"])]
    assert outs == ["left\n", "gone\n"], result
