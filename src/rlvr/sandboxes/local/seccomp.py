"""A seccomp-BPF allow list, assembled by hand and installed with prctl, in two stages.

The zygote installs the `zygote` filter on itself once: the calls of
`rlvr.sandboxes.local.syscalls.ALLOWED`, plus the few it needs to make namespaces for
jobs (`JOB_ONLY`: mount, umount2, unshare, setns, clone with namespace flags); every
other number is refused, so a call a future kernel adds is refused too. Each job
inherits it and adds the short `job` filter, which refuses `JOB_ONLY` and namespace
flags on clone. Seccomp applies every filter a process has, so a job gets only the
allow list; and the kernel's cost of attaching a filter grows with its length, which a
job pays only for its dozen instructions.

How a refused call fails: with an errno, never by killing the process. A refused call
returns ENOSYS, the answer of a kernel that lacks it: libc and the runtimes (CPython,
libuv, V8) probe new calls (clone3, rseq, statx, faccessat2, close_range, epoll_pwait2,
futex_waitv ...) and fall back to older ones on ENOSYS, where EPERM would reach the
program as an error and a kill would turn a harmless probe into a crash, which would
score a correct program 0 on a newer libc. The calls whose refusal is the point answer
EPERM (the `job` stage: new namespaces and mounts; seccomp's precedence keeps a later
filter's answer for those) or EACCES (sockets of any family but AF_UNIX; the job's
network namespace is empty anyway). Only a foreign architecture (i386 entry, where
every number means a different call) kills the process.

No libseccomp binding is needed. The zygote stage tests the allowed numbers as
ascending ranges, so the calls programs make most (read, write, mmap: low numbers)
are decided after a few instructions.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import struct
from collections.abc import Iterable

from rlvr.sandboxes.local import linux
from rlvr.sandboxes.local.syscalls import ALLOWED, JOB_ONLY

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
RET_ENOSYS = SECCOMP_RET_ERRNO | errno.ENOSYS
RET_EPERM = SECCOMP_RET_ERRNO | errno.EPERM
RET_EACCES = SECCOMP_RET_ERRNO | errno.EACCES

# BPF opcodes.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JGT_K = 0x25
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

# A filter being laid out: instructions (opcode, k, label if true, label if false) and,
# between them, labels (plain strings) that jumps name; `_link` turns labels into the
# forward offsets classic BPF wants.
_Op = tuple[int, int, str | None, str | None]
_Code = list[_Op | str]
_NEXT = None  # fall through to the next instruction


def _ranges(numbers: Iterable[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for nr in sorted(set(numbers)):
        if ranges and ranges[-1][1] == nr - 1:
            ranges[-1] = (ranges[-1][0], nr)
        else:
            ranges.append((nr, nr))
    return ranges


def _in_ranges(numbers: Iterable[int], target: str) -> _Code:
    """Jump to `target` if the loaded number is in `numbers`, else fall through."""
    code: _Code = []
    for index, (low, high) in enumerate(_ranges(numbers)):
        if low == high:
            code.append((_JEQ_K, low, target, _NEXT))
            continue
        below = f"range{index}"
        code += [(_JGE_K, low, _NEXT, below), (_JGT_K, high, below, target), below]
    return code


def _ret(value: int) -> _Op:
    return (_RET_K, value, _NEXT, _NEXT)


def _link(code: _Code) -> bytes:
    """Resolve labels into jump offsets and pack the instructions."""
    at: dict[str, int] = {}
    insns: list[_Op] = []
    for item in code:
        if isinstance(item, str):
            at[item] = len(insns)
        else:
            insns.append(item)
    out = []
    for pc, (op, k, jt, jf) in enumerate(insns):
        jumps = [0 if label is None else at[label] - pc - 1 for label in (jt, jf)]
        if any(not 0 <= jump < 256 for jump in jumps):
            raise ValueError("seccomp filter too long for BPF's 8-bit jumps")
        out.append(struct.pack("=HBBI", op, jumps[0], jumps[1], k))
    return b"".join(out)


def _head() -> _Code:
    """Refuse foreign architectures, then load the syscall number."""
    return [
        (_LD_W_ABS, _OFF_ARCH, _NEXT, _NEXT),
        (_JEQ_K, AUDIT_ARCH_X86_64, "native", _NEXT),
        _ret(SECCOMP_RET_KILL_PROCESS),
        "native",
        (_LD_W_ABS, _OFF_NR, _NEXT, _NEXT),
    ]


@functools.cache
def build_filter(stage: str = "zygote") -> bytes:
    """The `zygote` or `job` filter (see above)."""
    if stage == "job":
        return _link(
            [
                *_head(),
                *_in_ranges(JOB_ONLY.values(), "deny"),
                (_JEQ_K, SYS_CLONE, _NEXT, "allow"),
                (_LD_W_ABS, _OFF_ARG0, _NEXT, _NEXT),
                (_JSET_K, linux.NAMESPACE_FLAGS, "deny", "allow"),
                "allow",
                _ret(SECCOMP_RET_ALLOW),
                "deny",
                _ret(RET_EPERM),
            ]
        )
    if stage != "zygote":
        raise ValueError(f"unknown seccomp stage {stage!r}")
    return _link(
        [
            *_head(),
            # The x32 ABI numbers calls differently (from this bit up): refused outright.
            (_JGE_K, X32_SYSCALL_BIT, "refuse", _NEXT),
            (_JEQ_K, SYS_SOCKET, "socket", _NEXT),
            *_in_ranges([*ALLOWED.values(), *JOB_ONLY.values()], "allow"),
            "refuse",
            _ret(RET_ENOSYS),
            "socket",
            (_LD_W_ABS, _OFF_ARG0, _NEXT, _NEXT),
            (_JEQ_K, AF_UNIX, "allow", _NEXT),
            _ret(RET_EACCES),
            "allow",
            _ret(SECCOMP_RET_ALLOW),
        ]
    )


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


def filter_address(stage: str) -> int:
    """Where a stage's `struct sock_fprog` is (for `_jobstart.drop`)."""
    return ctypes.addressof(_program(stage)[1])


def install(stage: str) -> None:
    """Install a stage's filter on the calling thread (and everything it later forks).
    The zygote stage sets no_new_privs first, which jobs inherit: the kernel requires
    it of an unprivileged caller, and it stops setuid binaries regaining privilege."""
    _buf, prog = _program(stage)
    if stage == "zygote":
        linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
    linux.prctl_ptr(linux.PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog))
