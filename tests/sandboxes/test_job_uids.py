"""Which uids a zygote's jobs take. On a host, by the zygote's pid: ranges of concurrent
zygotes are disjoint. In other PID namespaces (containers), where pids repeat, by a hash
of namespace and pid above every host range: two worker containers side by side must not
hand their jobs one uid, or the jobs share what the kernel counts per uid (RLIMIT_NPROC:
one job's forks would fail another's)."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.sandboxes.local import isolate, linux
from rlvr.sandboxes.local.zygote import INIT_PID_NS, SHARED_UID_BASE, own_uid_base, uid_base
from tests.services import require

UID_LIMIT = 2**32 - 2  # (uid_t)-1 means "unchanged" to setresuid
# Namespace inodes as the kernel numbers them (from 0xF0000000 up), pids as containers start them.
NAMESPACES = [0xF0000000 + n for n in (1, 2, 3, 57, 1000, 4097, 65_000)] + [0xEFFFFFFB, 0xF00FFFFF]
CONTAINER_PIDS = [1, 2, 7, 15, 67, 68, 69, 70, 102, 999, 32_767, 4_194_303]


@given(pid=st.integers(1, 4_194_304), pid_ns=st.integers(0, 2**32 - 1).filter(lambda n: n != INIT_PID_NS))
def test_any_namespace_and_pid_give_a_whole_range_above_the_host_ranges(pid: int, pid_ns: int) -> None:
    base = uid_base(pid, pid_ns)
    assert SHARED_UID_BASE <= base
    assert base + isolate.UIDS_PER_ZYGOTE - 1 < UID_LIMIT
    assert (base - isolate.UID_BASE) % isolate.UIDS_PER_ZYGOTE == 0


@pytest.mark.parametrize("pid", [1, 2, 300, 32_767, 65_536, 4_194_303])
def test_on_the_host_the_range_follows_the_pid(pid: int) -> None:
    base = uid_base(pid, INIT_PID_NS)
    assert base == isolate.UID_BASE + pid * isolate.UIDS_PER_ZYGOTE
    assert uid_base(pid + 1, INIT_PID_NS) - base == isolate.UIDS_PER_ZYGOTE  # disjoint neighbours
    assert base + isolate.UIDS_PER_ZYGOTE <= SHARED_UID_BASE


@pytest.mark.parametrize(("pid_ns", "pid"), list(itertools.product(NAMESPACES, CONTAINER_PIDS)))
def test_in_a_container_the_range_lies_above_every_host_range(pid_ns: int, pid: int) -> None:
    base = uid_base(pid, pid_ns)
    assert SHARED_UID_BASE <= base
    assert base + isolate.UIDS_PER_ZYGOTE - 1 < UID_LIMIT
    assert (base - isolate.UID_BASE) % isolate.UIDS_PER_ZYGOTE == 0
    assert base == uid_base(pid, pid_ns)  # the same zygote asks again, gets the same range


def test_containers_with_the_same_pids_get_different_ranges() -> None:
    """Sixteen containers started alike: for each pid their zygotes may have, the
    namespaces' neighbouring inode numbers give sixteen different ranges."""
    for pid in range(1, 4097):
        bases = {uid_base(pid, 0xF0000000 + 0x100 + n) for n in range(16)}
        assert len(bases) == 16, pid


def test_a_zygote_in_a_pid_namespace_of_its_own_reads_it() -> None:
    """Two processes that are each pid 1 of a new PID namespace at the same time, as in
    two containers, get two different ranges, and neither is the host's range for pid 1.
    (At the same time: the inode of a namespace that is gone is given to the next one.)"""
    require(os.geteuid() == 0 and linux.SUPPORTED, "root on x86_64 Linux")
    with contextlib.ExitStack() as alive:
        seen = [alive.enter_context(_in_new_pid_namespace()) for _ in range(2)]
    assert [s["pid"] for s in seen] == [1, 1]
    assert seen[0]["ns"] != seen[1]["ns"]
    assert [s["base"] for s in seen] == [uid_base(1, s["ns"]) for s in seen]
    assert seen[0]["base"] != seen[1]["base"]
    assert uid_base(1, INIT_PID_NS) not in {s["base"] for s in seen}


def test_this_process_takes_the_range_of_its_pid_here() -> None:
    pid_ns = os.stat("/proc/self/ns/pid").st_ino
    assert own_uid_base() == uid_base(os.getpid(), pid_ns)


@contextlib.contextmanager
def _in_new_pid_namespace() -> Iterator[dict[str, int]]:
    """What pid 1 of a new PID namespace sees, while that namespace lives."""
    r, w = os.pipe()
    hold_r, hold_w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(r)
            os.close(hold_w)
            linux.unshare(linux.CLONE_NEWPID)
            if os.fork() == 0:
                fields = {"pid": os.getpid(), "ns": os.stat("/proc/self/ns/pid").st_ino, "base": own_uid_base()}
                os.write(w, json.dumps(fields).encode())
                os.close(w)
                os.read(hold_r, 1)  # until the test lets go: EOF
                os._exit(0)
            os.close(w)
            os.wait()
        finally:
            os._exit(0)
    os.close(w)
    os.close(hold_r)
    try:
        with os.fdopen(r, "rb") as out:
            yield dict(json.loads(out.read()))
    finally:
        os.close(hold_w)
        os.waitpid(child, 0)
