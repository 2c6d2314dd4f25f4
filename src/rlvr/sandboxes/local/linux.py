"""Thin ctypes bindings for the Linux calls Python 3.11's `os` lacks.

Everything here is x86_64 Linux specific; callers check `SUPPORTED` first and
degrade (to a lower isolation level) when a call fails.
"""

from __future__ import annotations

import ctypes
import os
import signal

SUPPORTED = os.uname().sysname == "Linux" and os.uname().machine == "x86_64"

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACE_FLAGS = (
    CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
)

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
AT_FDCWD = -100
AT_RECURSIVE = 0x8000

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

MNT_DETACH = 2
OPEN_TREE_CLONE = 1
O_CLOEXEC = 0o2000000
F_DUPFD_CLOEXEC = 1030

SYS_CLONE = 56
SYS_PIVOT_ROOT = 155
SYS_OPEN_TREE = 428
SYS_MOUNT_SETATTR = 442

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _check(rc: int, what: str) -> int:
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return rc


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def dup_cloexec_above(fd: int, lowest: int) -> int:
    """fcntl(F_DUPFD_CLOEXEC): a close-on-exec copy of `fd` at `lowest` or above. Here,
    not with the `fcntl` module, which would map one more library into the zygote,
    and so into every fork of it (5 mappings, each copied and torn down per job)."""
    return _check(_libc.fcntl(fd, F_DUPFD_CLOEXEC, lowest), "fcntl(F_DUPFD_CLOEXEC)")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(fd, nstype), "setns")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def umount2(target: str, flags: int) -> None:
    _check(_libc.umount2(target.encode(), flags), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    _check(_libc.syscall(SYS_PIVOT_ROOT, new_root.encode(), put_old.encode()), "pivot_root")


def mount_setattr_recursive(path: str, attr_set: int) -> None:
    attr = _MountAttr(attr_set, 0, 0, 0)
    rc = _libc.syscall(
        SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)
    )
    _check(rc, f"mount_setattr {path}")


def open_tree_clone(path: str) -> int:
    """An fd of a detached copy of the mount at `path` (open_tree(2), Linux 5.2):
    changes to the mount tree, such as making it read-only, do not reach it."""
    rc = _libc.syscall(SYS_OPEN_TREE, AT_FDCWD, path.encode(), OPEN_TREE_CLONE | O_CLOEXEC)
    return _check(int(rc), f"open_tree {path}")


def trim_heap() -> None:
    """Give free heap pages back: fewer pages for every later fork to map."""
    _libc.malloc_trim(0)


def prctl(option: int, arg2: int = 0, arg3: int = 0) -> int:
    return _check(_libc.prctl(option, arg2, arg3, 0, 0), f"prctl {option}")


def prctl_ptr(option: int, arg2: int, ptr: int) -> None:
    _check(_libc.prctl(option, arg2, ptr, 0, 0), f"prctl {option}")


_after_fork_child = ctypes.pythonapi.PyOS_AfterFork_Child


def clone_fork(flags: int) -> int:
    """fork(2) that also enters new namespaces, so the child is pid 1 of its own PID
    namespace without the second fork `unshare(CLONE_NEWPID)` would need (each Python
    fork costs about a millisecond here). Only for a single-threaded process with no
    fork handlers, like the zygote: the raw syscall skips glibc's fork bookkeeping,
    which matters only for other threads, and the parent skips PyOS_BeforeFork and
    PyOS_AfterFork_Parent, which only hold the import lock (no other thread could
    take it) and run fork handlers; every ctypes call in the zygote between two forks
    is more pages it copies per job.
    """
    pid = _libc.syscall(SYS_CLONE, ctypes.c_ulong(flags | signal.SIGCHLD), None, None, None, None)
    if pid == 0:
        _after_fork_child()
        return 0
    if pid < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"clone: {os.strerror(err)}")
    return int(pid)
