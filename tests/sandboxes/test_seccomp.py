"""The seccomp filters' meaning (an allow list), checked by running them in a small classic-BPF
interpreter for every syscall number: what a job may do is what the zygote's filter and
the job's filter allow together."""

from __future__ import annotations

import errno
import os
import re
import struct

import pytest

from rlvr.sandboxes.local import linux, seccomp, syscalls

SYSCALLS = range(0, 512)
AF_INET = 2
RET_ALLOW = seccomp.SECCOMP_RET_ALLOW
RET_KILL = seccomp.SECCOMP_RET_KILL_PROCESS
# Higher wins when several filters answer (kernel order, the actions used here).
PRECEDENCE = {RET_KILL: 3, seccomp.SECCOMP_RET_ERRNO: 1, RET_ALLOW: 0}


def run_filter(program: bytes, nr: int, arch: int = seccomp.AUDIT_ARCH_X86_64, arg0: int = 0) -> int:
    insns = [struct.unpack_from("=HBBI", program, offset) for offset in range(0, len(program), 8)]
    data = struct.pack("=IIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    acc, pc = 0, 0
    for _ in range(len(insns) + 1):  # classic BPF only jumps forward
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            (acc,) = struct.unpack_from("=I", data, k)
            pc += 1
        elif code == 0x06:  # ret k
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x25: acc > k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)
    raise AssertionError("filter ran off its end")


def combined(nr: int, **kwargs: int) -> int:
    answers = [run_filter(seccomp.build_filter(stage), nr, **kwargs) for stage in ("zygote", "job")]
    return max(answers, key=lambda ret: PRECEDENCE[ret & 0xFFFF0000])


def eperm() -> int:
    return seccomp.SECCOMP_RET_ERRNO | errno.EPERM


ENOSYS = seccomp.SECCOMP_RET_ERRNO | errno.ENOSYS


@pytest.mark.parametrize("stage", ["zygote", "job"])
def test_filters_fit_bpf_limits(stage: str) -> None:
    code = seccomp.build_filter(stage)
    assert len(code) % 8 == 0 and 0 < len(code) // 8 < 256


def test_a_job_is_allowed_exactly_the_allow_list() -> None:
    allowed = set(syscalls.ALLOWED.values())
    for nr in SYSCALLS:
        if nr in (seccomp.SYS_SOCKET, seccomp.SYS_CLONE):
            continue  # decided by their arguments, below
        expected = RET_ALLOW if nr in allowed else eperm() if nr in syscalls.JOB_ONLY.values() else ENOSYS
        assert combined(nr) == expected, nr


@pytest.mark.parametrize("name", sorted(syscalls.NOTABLY_REFUSED))
def test_dangerous_calls_are_refused(name: str) -> None:
    assert name not in syscalls.ALLOWED
    assert combined(syscalls.NOTABLY_REFUSED[name]) == ENOSYS, name


@pytest.mark.parametrize("nr", [451, 457, 458, 463, 470, 511, 512, 1000, 4095, 65535, 0x3FFFFFFF, 0xFFFFFFFF])
def test_unknown_and_future_numbers_are_refused(nr: int) -> None:
    assert combined(nr) == ENOSYS


def test_arguments_that_matter_are_checked() -> None:
    assert combined(seccomp.SYS_CLONE3) == ENOSYS  # libc falls back to clone(2)
    assert combined(seccomp.SYS_SOCKET, arg0=seccomp.AF_UNIX) == RET_ALLOW
    assert combined(seccomp.SYS_SOCKET, arg0=AF_INET) == seccomp.SECCOMP_RET_ERRNO | errno.EACCES
    assert combined(seccomp.SYS_CLONE, arg0=0x11) == RET_ALLOW  # fork's flags (SIGCHLD)
    assert combined(seccomp.SYS_CLONE, arg0=0x3D0F00) == RET_ALLOW  # pthread_create's flags
    for flag in (linux.CLONE_NEWUSER, linux.CLONE_NEWNS, linux.CLONE_NEWPID, linux.CLONE_NEWNET):
        assert combined(seccomp.SYS_CLONE, arg0=flag | 0x11) == eperm()


def test_other_abis_are_refused() -> None:
    assert combined(1, arch=0x40000003) == RET_KILL  # i386
    for nr in (0, 1, 59, 101):
        assert combined(seccomp.X32_SYSCALL_BIT | nr) == ENOSYS


def test_the_zygote_keeps_what_it_needs_for_jobs() -> None:
    zygote = seccomp.build_filter("zygote")
    for name, nr in syscalls.JOB_ONLY.items():
        assert run_filter(zygote, nr) == RET_ALLOW, name
    assert run_filter(zygote, seccomp.SYS_CLONE, arg0=linux.CLONE_NEWPID | 0x11) == RET_ALLOW
    assert run_filter(zygote, syscalls.NOTABLY_REFUSED["ptrace"]) == ENOSYS
    assert run_filter(zygote, syscalls.NOTABLY_REFUSED["io_uring_setup"]) == ENOSYS


def test_ipc_objects_cannot_be_created() -> None:
    # Jobs share the zygote's IPC namespace: nothing may be left in it for a later job.
    for name in ("shmget", "semget", "msgget", "mq_open"):
        assert combined(syscalls.NOTABLY_REFUSED[name]) == ENOSYS, name


def test_the_tables_agree_with_the_kernel_headers() -> None:
    header = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
    if not os.path.exists(header):
        pytest.skip("no kernel headers to check the numbers against")
    with open(header) as f:
        numbers = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+) (\d+)", f.read())}
    for table in (syscalls.ALLOWED, syscalls.JOB_ONLY, syscalls.NOTABLY_REFUSED):
        for name, nr in table.items():
            assert numbers.get(name, nr) == nr, name
    assert not set(syscalls.ALLOWED) & (set(syscalls.JOB_ONLY) | set(syscalls.NOTABLY_REFUSED))
