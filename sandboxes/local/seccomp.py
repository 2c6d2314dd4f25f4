"""A seccomp-BPF deny-list, assembled by hand and installed with prctl, in two stages.

The zygote installs the `zygote` filter on itself once: everything below except the
calls it needs to make namespaces for jobs (mount, unshare, setns, clone with namespace
flags). Each job inherits it and adds the short `job` filter for those. Seccomp applies
every filter a process has, so a job is refused the whole list; and the kernel's cost of
attaching a filter grows with its length, which a job now pays for a dozen instructions.

No libseccomp binding is needed. The filter is a deny-list, not an allow-list, on
purpose: the sandbox runs arbitrary interpreters and compilers (Python, g++, node) whose
syscall sets change between versions, and the other layers (namespaces, unprivileged
uid, read-only filesystem) already carry the isolation. The filter removes the kernel
attack surface those layers do not: ptrace and cross-process memory access, new
namespaces (unprivileged user namespaces would hand back capabilities), mounts, BPF,
io_uring (which bypasses seccomp), keyrings, module loading, and every socket family
but AF_UNIX.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import struct

from rlvr.sandboxes.local import linux

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

# BPF opcodes.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JGT_K = 0x25
# Not a BPF bit: marks the low test of a range while the filter is laid out.
_RANGE_LOW = 0x10000
_JSET_K = 0x45
_RET_K = 0x06

# struct seccomp_data offsets.
_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0 = 16

SYS_SOCKET = 41
SYS_CLONE = 56
SYS_CLONE3 = 435
AF_UNIX = 1

DENIED: dict[str, int] = {
    "ptrace": 101,
    "syslog": 103,
    "personality": 135,
    "adjtimex": 159,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "pivot_root": 155,
    "vhangup": 153,
    "clock_settime": 227,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "fanotify_init": 300,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "clock_adjtime": 305,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_getfd": 438,
    "mount_setattr": 442,
    # Jobs share the zygote's IPC namespace: with no way to create SysV or POSIX-mq
    # objects, none can outlive a job or pass between jobs.
    "shmget": 29,
    "semget": 64,
    "msgget": 68,
    "mq_open": 240,
}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


# What the zygote itself needs; only jobs are refused these (and clone with namespace flags).
JOB_ONLY = ("mount", "unshare", "setns")


def _ranges(numbers: list[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for nr in sorted(numbers):
        if ranges and ranges[-1][1] == nr - 1:
            ranges[-1] = (ranges[-1][0], nr)
        else:
            ranges.append((nr, nr))
    return ranges


@functools.cache
def build_filter(stage: str = "zygote") -> bytes:
    """The `zygote` or `job` filter (see above). Denied numbers are tested as ranges
    that all jump to one shared return, to keep each filter short."""
    allow = _insn(_RET_K, 0, 0, SECCOMP_RET_ALLOW)
    if stage == "job":
        clone_check = [
            _insn(_JEQ_K, 0, 3, SYS_CLONE),
            _insn(_LD_W_ABS, 0, 0, _OFF_ARG0),
            _insn(_JSET_K, 0, 1, linux.NAMESPACE_FLAGS),
            _insn(_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
            allow,
        ]
        return _assemble([DENIED[name] for name in JOB_ONLY], clone_check)
    if stage != "zygote":
        raise ValueError(f"unknown seccomp stage {stage!r}")
    argument_checks = [
        # clone3 passes its flags in memory the filter cannot read; ENOSYS makes libc
        # and runtimes fall back to clone(2), whose flags it can.
        _insn(_JEQ_K, 0, 1, SYS_CLONE3),
        _insn(_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
        _insn(_JEQ_K, 0, 4, SYS_SOCKET),
        _insn(_LD_W_ABS, 0, 0, _OFF_ARG0),
        _insn(_JEQ_K, 0, 1, AF_UNIX),
        allow,
        _insn(_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EACCES),
        allow,
    ]
    return _assemble([nr for name, nr in DENIED.items() if name not in JOB_ONLY], argument_checks)


def _assemble(denied: list[int], tail: list[bytes]) -> bytes:
    """The architecture check, one test per range of denied numbers, then `tail` (what
    the numbers alone do not decide; it ends in a return), then the shared deny return."""
    eperm = _insn(_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM)
    head = [
        _insn(_LD_W_ABS, 0, 0, _OFF_ARCH),
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _insn(_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    # (opcode, k) pairs; each jumps to the shared deny return placed after `tail`.
    # The x32 ABI numbers the same calls differently: it is refused outright.
    tests: list[tuple[int, int]] = [(_JGE_K, X32_SYSCALL_BIT)]
    for low, high in _ranges(denied):
        tests += [(_JEQ_K, low)] if low == high else [(_JGE_K | _RANGE_LOW, low), (_JGT_K, high)]
    if len(tests) + len(tail) > 255:
        raise ValueError("seccomp filter too long for BPF's 8-bit jumps")
    body = []
    for index, (op, k) in enumerate(tests):
        to_deny = len(tests) - index - 1 + len(tail)
        if op & _RANGE_LOW:
            body.append(_insn(op & ~_RANGE_LOW, 0, 1, k))  # below the range: skip its top test
        elif op == _JGT_K:
            body.append(_insn(op, 0, to_deny, k))  # above the range: go on
        else:
            body.append(_insn(op, to_deny, 0, k))
    return b"".join([*head, *body, *tail, eperm])


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.cache
def _program(stage: str) -> tuple[ctypes.Array[ctypes.c_char], _SockFprog]:
    # Built once in the zygote, so a job only pays for the prctl call.
    code = build_filter(stage)
    buf = ctypes.create_string_buffer(code, len(code))
    return buf, _SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p).value)


def prepare() -> None:
    _program("zygote")
    _program("job")


def install(stage: str) -> None:
    """Install a stage's filter on the calling thread (and everything it later forks).
    The zygote stage sets no_new_privs first, which jobs inherit: the kernel requires
    it of an unprivileged caller, and it stops setuid binaries regaining privilege."""
    _buf, prog = _program(stage)
    if stage == "zygote":
        linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
    linux.prctl_ptr(linux.PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog))
