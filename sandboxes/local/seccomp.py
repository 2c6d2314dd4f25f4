"""A seccomp-BPF deny-list, assembled by hand and installed with prctl.

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

from sandboxes.local import linux

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
}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


@functools.cache
def build_filter() -> bytes:
    eperm = SECCOMP_RET_ERRNO | errno.EPERM
    prog = [
        _insn(_LD_W_ABS, 0, 0, _OFF_ARCH),
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _insn(_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, _OFF_NR),
        # The x32 ABI numbers the same calls differently: refuse it outright.
        _insn(_JGE_K, 0, 1, X32_SYSCALL_BIT),
        _insn(_RET_K, 0, 0, eperm),
    ]
    for nr in sorted(DENIED.values()):
        prog += [_insn(_JEQ_K, 0, 1, nr), _insn(_RET_K, 0, 0, eperm)]
    # clone3 passes its flags in memory the filter cannot read; ENOSYS makes libc and
    # runtimes fall back to clone(2), whose flags it can.
    prog += [_insn(_JEQ_K, 0, 1, SYS_CLONE3), _insn(_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS)]
    prog += [
        _insn(_JEQ_K, 0, 4, SYS_CLONE),
        _insn(_LD_W_ABS, 0, 0, _OFF_ARG0),
        _insn(_JSET_K, 0, 1, linux.NAMESPACE_FLAGS),
        _insn(_RET_K, 0, 0, eperm),
        _insn(_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    prog += [
        _insn(_JEQ_K, 0, 3, SYS_SOCKET),
        _insn(_LD_W_ABS, 0, 0, _OFF_ARG0),
        _insn(_JEQ_K, 1, 0, AF_UNIX),
        _insn(_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EACCES),
    ]
    prog.append(_insn(_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.cache
def _program() -> tuple[ctypes.Array[ctypes.c_char], _SockFprog]:
    # Built once in the zygote, so a job only pays for the two prctl calls.
    code = build_filter()
    buf = ctypes.create_string_buffer(code, len(code))
    return buf, _SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p).value)


def prepare() -> None:
    _program()


def install() -> None:
    """Install the filter on the calling thread (and everything it later forks).
    Sets no_new_privs first, which the kernel requires and which also stops setuid
    binaries from regaining privilege."""
    _buf, prog = _program()
    linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
    linux.prctl_ptr(linux.PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog))
