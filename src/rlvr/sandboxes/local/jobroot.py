"""The minimal root filesystem jobs see, built by the zygote once, in its own mount
namespace, and entered with pivot_root.

What a job needs, and nothing else of the host's: /usr (the toolchains: python3, g++
with cc1plus, as and ld, node, coqc with its stdlib under /usr/lib/coq and OCaml's
runtime libraries, and the shared libraries they load), the merged-/usr links (/bin,
/lib, /lib64, /sbin), the directories the in-sandbox interpreter runs from (its prefix
and import path, bound at their own paths), a /etc written for jobs (see `ETC_COPIED`,
plus passwd and group naming the jobs' uids and no one else), a /dev with the
harmless character devices, an empty /tmp (each slot mounts its own over it), and a
/proc of the zygote's own PID namespace, where each job sees only its own uid's
processes (hidepid) and nothing of the host's, with the host-wide files that leak the
host masked (the kernel command line and the like).

Left out: /run and /var/run (no host Unix socket to connect to), /sys (no network
interfaces or MAC addresses, no cgroup tree), /var, /opt, /srv, /home, /root and every
other host directory but the interpreter's own.
"""

from __future__ import annotations

import os

from rlvr.sandboxes.local import linux
from rlvr.sandboxes.runner.pch import JOB_DIR as JOB_PCH_DIR

# Files of /etc the toolchains read (dynamic linker, alternatives links for cc/c++,
# time zone, findlib for coqc, OpenSSL's config for node), copied (links as links).
ETC_COPIED = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "ocamlfind.conf",
    "ssl/openssl.cnf",
)
MERGED_USR = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
# Host-wide files of a fresh procfs that tell about the host, covered with /dev/null.
PROC_MASKED = ("cmdline", "keys", "timer_list", "sched_debug", "kcore", "sysrq-trigger", "kallsyms", "config.gz")
PROC_FLAGS = linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC
OLD_ROOT = ".old-root"


def _bind(source: str, target: str, recursive: bool = True) -> None:
    linux.mount(source, target, None, linux.MS_BIND | (linux.MS_REC if recursive else 0))


def _under(path: str, dirs: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _copy(source: str, target: str) -> None:
    """Copy a file, a symlink (as a symlink) or a directory of them, without `shutil`
    (whose imports every job's fork would copy)."""
    if os.path.islink(source):
        os.symlink(os.readlink(source), target)
    elif os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(source):
            _copy(os.path.join(source, name), os.path.join(target, name))
    elif os.path.isfile(source):
        with open(source, "rb") as src, open(target, "wb") as dst:
            dst.write(src.read())


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _etc(root: str, uids: range) -> None:
    etc = os.path.join(root, "etc")
    os.makedirs(os.path.join(etc, "ssl"))
    for name in ETC_COPIED:
        source = os.path.join("/etc", name)
        if os.path.lexists(source):
            _copy(source, os.path.join(etc, name))
    users = ["root:x:0:0:root:/tmp:/usr/sbin/nologin", "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"]
    groups = ["root:x:0:", "nogroup:x:65534:"]
    for uid in uids:
        users.append(f"job{uid}:x:{uid}:{uid}:job:/tmp:/usr/sbin/nologin")
        groups.append(f"job{uid}:x:{uid}:")
    _write(os.path.join(etc, "passwd"), "\n".join(users) + "\n")
    _write(os.path.join(etc, "group"), "\n".join(groups) + "\n")
    _write(os.path.join(etc, "hosts"), "127.0.0.1 localhost\n::1 localhost\n")
    _write(os.path.join(etc, "hostname"), "sandbox\n")


def _dev(root: str) -> None:
    dev = os.path.join(root, "dev")
    os.makedirs(os.path.join(dev, "shm"))
    for name in DEVICES:
        target = os.path.join(dev, name)
        open(target, "w").close()
        _bind(f"/dev/{name}", target, recursive=False)
    for name, link in DEV_LINKS.items():
        os.symlink(link, os.path.join(dev, name))


def build(root: str, needed: list[str], uids: range, pch: str | None = None) -> None:
    """Fill the empty tmpfs mounted at `root` with the jobs' filesystem (see above);
    `pch`, the host's precompiled headers, is bound at `runner.pch.JOB_DIR`."""
    for name in MERGED_USR:
        source = f"/{name}"
        if os.path.islink(source):
            os.symlink(os.readlink(source), os.path.join(root, name))
        elif os.path.isdir(source):
            os.makedirs(os.path.join(root, name))
            _bind(source, os.path.join(root, name))
    own = ["/usr"]
    os.makedirs(os.path.join(root, "usr"))
    _bind("/usr", os.path.join(root, "usr"))
    for path in sorted(needed, key=len):
        if _under(path, own) or not os.path.isdir(path):
            continue
        os.makedirs(root + path, exist_ok=True)
        _bind(path, root + path)
        own.append(path)
    _etc(root, uids)
    _dev(root)
    if pch is not None and os.path.isdir(pch):
        os.makedirs(root + JOB_PCH_DIR)
        _bind(pch, root + JOB_PCH_DIR)
    for name in ("tmp", "proc"):
        os.makedirs(os.path.join(root, name))
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    # Programs written for SandboxFusion write scratch files under /mnt; here that is the
    # job's own /tmp, so it is emptied and checked with it, and the trusted half of a
    # split job sees its empty, read-only /tmp there too.
    os.symlink("tmp", os.path.join(root, "mnt"))
    os.chmod(root, 0o755)


def enter(root: str) -> None:
    """Make `root` the zygote's `/`, leaving nothing of the old one reachable."""
    old = os.path.join(root, OLD_ROOT)
    os.makedirs(old)
    linux.pivot_root(root, old)
    os.chdir("/")
    linux.umount2(f"/{OLD_ROOT}", linux.MNT_DETACH)
    os.rmdir(f"/{OLD_ROOT}")


# Where `writable_proc` briefly binds /proc, in the zygote's own root.
WRITABLE_PROC = "/.proc-writable"


def writable_proc(where: str = WRITABLE_PROC) -> int:
    """An fd of a detached, writable mount of /proc, out of reach of the read-only
    flag the tree gets next: open_tree(2), or where that is refused (Docker's default
    seccomp profile), a bind mount that is opened and then lazily unmounted. Call
    inside the minimal root, before it is made read-only."""
    try:
        return linux.open_tree_clone("/proc")
    except OSError:
        pass
    os.mkdir(where, 0o700)
    try:
        _bind("/proc", where, recursive=False)
        try:
            return os.open(where, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        finally:
            linux.umount2(where, linux.MNT_DETACH)
    finally:
        os.rmdir(where)


def mount_proc() -> None:
    """A procfs of the calling process's PID namespace at /proc, each job seeing only
    its own uid's processes, with the host-wide files that tell about the host masked."""
    linux.mount("proc", "/proc", "proc", PROC_FLAGS, "hidepid=invisible")
    for name in PROC_MASKED:
        path = f"/proc/{name}"
        if os.path.exists(path):
            _bind("/dev/null", path, recursive=False)
