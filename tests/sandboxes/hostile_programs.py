"""Programs that attack the test half of their own split job from the program half,
for `test_hostile_both_backends`: each is the Python source of a program whose `f()`
returns what its attack observed, or the tests' secret if it got hold of it.

Every attack starts on the program's first line (the test half may still be dropping
its privileges) and keeps what it opened for `f()`, which runs while the test half
holds the tests. `NOTE` lines record each attempt: `<what>: refused <error>` when the
kernel said no, `<what>: done` when the call went through (for the routes that fail
silently, such as SIGIO, the test half's survival is the evidence).
"""

from __future__ import annotations

import signal
import uuid

SECRET_PREFIX = "rlvr-secret-"
# How long a racing program repeats its attack from its first line: longer than the
# test half takes to drop its privileges and accept the job.
RACE_S = 0.5

# A test whose expected value is the secret: the program passes only with it.
CHECK = "def check(candidate):\n    got = candidate()\n    assert got == {secret!r}, got\n"

PRELUDE = f"""
import ctypes, fcntl, os, re, resource, signal, time
PARENT = os.getppid()
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
PATTERN = re.compile(rb"{SECRET_PREFIX}[0-9a-f]{{32}}")
SEEN = {{}}
KEPT = {{}}

def NOTE(what, call):
    try:
        result = call()
    except BaseException as exc:
        SEEN[what + ": refused " + type(exc).__name__] = None
        return None
    SEEN[what + ": done"] = None
    return result

def PATH(name):
    return "/proc/%d/%s" % (PARENT, name.replace("{{pid}}", str(PARENT)))

def pidfd_signal(fd, sig):
    try:
        signal.pidfd_send_signal(fd, sig)
    finally:
        os.close(fd)

def content(fd):
    try:
        return os.pread(fd, 1 << 22, 0)
    except OSError:
        os.set_blocking(fd, False)
        try:
            return os.read(fd, 1 << 22)
        except OSError:
            return b""

def syscall(nr, *args):
    rc = LIBC.syscall(nr, *args)
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc

def regions():
    # The test half's layout if its maps opens; else this process's own, which it
    # forked from, so most of the same addresses.
    for path in ("/proc/%d/maps" % PARENT, "/proc/self/maps"):
        try:
            with open(path) as maps:
                lines = maps.read().splitlines()
        except OSError:
            continue
        out = []
        for line in lines:
            span, perms = line.split()[:2]
            if perms.startswith("r"):
                start, end = (int(x, 16) for x in span.split("-"))
                out.append((start, end))
        return out
    return []

def scan(read):
    for start, end in regions():
        for at in range(start, end, 1 << 20):
            try:
                chunk = read(at, min(1 << 20, end - at))
            except (OSError, ValueError, OverflowError):
                continue
            found = PATTERN.search(chunk or b"")
            if found:
                return found.group().decode()
    return None

def leak(data):
    found = PATTERN.search(data or b"")
    return found.group().decode() if found else None

def f():
    for fn in LATER:
        try:
            secret = fn()
        except BaseException as exc:
            SEEN["later: " + type(exc).__name__] = None
            continue
        if secret:
            return secret
    return "; ".join(SEEN)

LATER = []
"""

SYS = {"tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "ptrace": 101, "process_vm_readv": 310, "pidfd_getfd": 438}
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
SI_QUEUE = -1

# /proc files of the test half: each must refuse to open (the ptrace access check), and
# what reading it gives must hold no secret.
PROC_FILES = [
    "mem",
    "environ",
    "fd/0",
    "fd/3",
    "maps",
    "smaps",
    "numa_maps",
    "auxv",
    "stack",
    "syscall",
    "pagemap",
    "io",
    "personality",
    "task/{pid}/mem",
    "task/{pid}/environ",
]
PROC_DIRS = ["fd", "map_files", "cwd", "root", "fdinfo"]
# Open to any uid by the kernel's own rules (timerslack_ns refuses the read instead):
# only what they show is checked.
PROC_PUBLIC = ["cmdline", "stat", "status", "timerslack_ns"]

SIGNALS = {
    "SIGKILL": signal.SIGKILL,
    "SIGSTOP": signal.SIGSTOP,
    "SIGTERM": signal.SIGTERM,
    "SIGALRM": signal.SIGALRM,
    "SIGINT": signal.SIGINT,
    "SIGSEGV": signal.SIGSEGV,
}


def secret() -> str:
    return SECRET_PREFIX + uuid.uuid4().hex


def program(*attacks: str) -> str:
    """The program: the prelude, then each attack's lines at the top level."""
    return PRELUDE + "\n".join(attacks) + "\n"


def proc_file(name: str, *, write: bool = False) -> str:
    """Open the test half's /proc/<pid>/<name> now; read it for the secret in `f()`.
    With `write`, open it for writing too, and write a forged record where it opened."""
    flags = "os.O_RDWR" if write else "os.O_RDONLY"
    lines = [
        f"FD = NOTE({name!r}, lambda: os.open(PATH({name!r}), {flags}))",
        "if FD is not None:",
        "    KEPT[FD] = True",
    ]
    if write:
        lines.append(r"    NOTE('forge', lambda: os.write(FD, b'{\"i\": 0, \"s\": \"pass\"}\n'))")
    if name.endswith("mem"):
        lines.append("    LATER.append(lambda fd=FD: scan(lambda at, n: os.pread(fd, n, at)))")
    else:
        lines.append("    LATER.append(lambda fd=FD: leak(content(fd)))")
    return "\n".join(lines)


def proc_file_drained(name: str) -> str:
    """Open the test half's /proc/<pid>/<name> and read all of it on the first line
    (for fd/0, the pipe its tests come on: what it took the test half would miss)."""
    return "\n".join(
        [
            f"FD = NOTE({name!r}, lambda: os.open(PATH({name!r}), os.O_RDONLY | os.O_NONBLOCK))",
            "if FD is not None:",
            "    DRAINED = b''",
            "    for _ in range(200):",
            "        try:",
            "            DRAINED += os.read(FD, 1 << 20)",
            "        except OSError:",
            "            time.sleep(0.005)",
            "    LATER.append(lambda: leak(DRAINED))",
        ]
    )


def proc_dir(name: str) -> str:
    return f"NOTE({name!r}, lambda: os.listdir(PATH({name!r})))"


def proc_public(name: str) -> str:
    return f"LATER.append(lambda: leak(open(PATH({name!r}), 'rb').read()))"


def signal_route(route: str, sig: int, targets: str = "(PARENT, 1)") -> str:
    """Send `sig` to each of `targets` by `route` (a call that names its target; the
    kernel must refuse it)."""
    calls = {
        "kill": "os.kill(T, SIG)",
        "tkill": f"syscall({SYS['tkill']}, T, SIG)",
        "tgkill": f"syscall({SYS['tgkill']}, T, T, SIG)",
        "rt_sigqueueinfo": (
            f"syscall({SYS['rt_sigqueueinfo']}, T, SIG, "
            f"ctypes.byref((ctypes.c_int * 32)(SIG, 0, {SI_QUEUE}, 0, os.getpid(), os.getuid())))"
        ),
        "pidfd_of_proc_dir": "pidfd_signal(os.open('/proc/%d' % T, os.O_RDONLY | os.O_DIRECTORY), SIG)",
        "pidfd_open": "pidfd_signal(os.pidfd_open(T), SIG)",
        "ptrace_attach": f"syscall({SYS['ptrace']}, {PTRACE_ATTACH}, T, 0, 0)",
        "ptrace_seize": f"syscall({SYS['ptrace']}, {PTRACE_SEIZE}, T, 0, 0)",
        "prlimit_cpu": "resource.prlimit(T, resource.RLIMIT_CPU, (0, 0))",
        "prlimit_nofile": "resource.prlimit(T, resource.RLIMIT_NOFILE, (0, 0))",
        "setpriority": "os.setpriority(os.PRIO_PROCESS, T, 19)",
        "sched_setaffinity": "os.sched_setaffinity(T, {max(os.sched_getaffinity(0))})",
    }
    return (
        f"for T in {targets}:\n"
        f"    if T <= 0:\n"
        f"        continue\n"
        f"    SIG = {int(sig)}\n"
        f"    NOTE('{route}(%d, %d)' % (T, SIG), lambda: {calls[route]})"
    )


# Routes that take a signal number (the others ignore `sig`).
SIGNAL_ROUTES = ["kill", "tkill", "tgkill", "rt_sigqueueinfo", "pidfd_of_proc_dir", "pidfd_open"]
OTHER_ROUTES = ["ptrace_attach", "ptrace_seize", "prlimit_cpu", "prlimit_nofile", "setpriority", "sched_setaffinity"]


def sigio(sig: int, owner: str) -> str:
    """SIGIO: make the test half (or pid 1, or a group) the owner of a pipe's async
    I/O with `sig` as its signal, then write to the pipe, now and in `f()`. The kernel
    checks the permission when the signal is sent, so these calls go through."""
    return "\n".join(
        [
            "R, W = os.pipe()",
            f"NOTE('F_SETOWN', lambda: fcntl.fcntl(R, fcntl.F_SETOWN, {owner}))",
            f"NOTE('F_SETSIG', lambda: fcntl.fcntl(R, 10, {int(sig)}))",  # F_SETSIG
            "NOTE('O_ASYNC', lambda: fcntl.fcntl(R, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK))",
            "os.set_blocking(W, False)",
            "NOTE('write', lambda: os.write(W, b'x'))",
            "LATER.append(lambda: os.write(W, b'x') and None)",
        ]
    )


def steal_fd(fd: int) -> str:
    """pidfd_getfd: take a copy of the test half's `fd` (0: the tests; 3: the record
    channel, where a forged pass would go)."""
    return "\n".join(
        [
            f"GET = lambda: syscall({SYS['pidfd_getfd']}, os.pidfd_open(PARENT), {fd}, 0)",
            f"STOLEN = NOTE('pidfd_getfd({fd})', GET)",
            "if STOLEN is not None:",
            r"    NOTE('forge', lambda: os.write(STOLEN, b'{\"i\": 0, \"s\": \"pass\"}\n'))",
            "    LATER.append(lambda: leak(os.read(STOLEN, 1 << 20)))",
        ]
    )


def process_vm_readv() -> str:
    """Read the test half's memory at the addresses it has in common with this process."""
    return "\n".join(
        [
            "class IOV(ctypes.Structure):",
            "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]",
            "def remote(at, n):",
            "    buf = ctypes.create_string_buffer(n)",
            "    here, there = IOV(ctypes.addressof(buf), n), IOV(at, n)",
            f"    got = syscall({SYS['process_vm_readv']}, PARENT, ctypes.byref(here), 1, ctypes.byref(there), 1, 0)",
            "    return buf.raw[:got]",
            "NOTE('process_vm_readv', lambda: remote(regions()[0][0], 16))",
            "LATER.append(lambda: scan(remote))",
        ]
    )


def group_signal(route: str, sig: int) -> str:
    """A signal aimed at a group (or everyone): it may take down the program's own
    processes, never the test half."""
    calls = {
        "kill_0": "os.kill(0, SIG)",
        "kill_-1": "os.kill(-1, SIG)",
        "kill_-parent": "os.kill(-PARENT, SIG)",
        "killpg_parent": "os.killpg(os.getpgid(PARENT), SIG)",
        "killpg_1": "os.killpg(1, SIG)",
    }
    return f"SIG = {int(sig)}\nNOTE({route!r}, lambda: {calls[route]})"


GROUP_ROUTES = ["kill_0", "kill_-1", "kill_-parent", "killpg_parent", "killpg_1"]


def race(*attacks: str, seconds: float = RACE_S) -> str:
    """Repeat the attacks from the first line for `seconds`, so that one lands in
    whatever window the test half has before it is protected."""
    body = "\n".join("    " + line for attack in attacks for line in attack.splitlines())
    return f"RACE_END = time.monotonic() + {seconds}\nwhile time.monotonic() < RACE_END:\n{body}"
