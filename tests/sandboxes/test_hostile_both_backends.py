"""The program half of a split job against its test half, on both backends (issue 30,
class 1): /proc files, every route a signal takes, the other calls that name a
process, and races from the program's first line. Each program's test expects a secret
only the test half holds; an attack that worked would pass it, mask the item (the test
half killed before it took the job), hang it (stopped) or forge its records. Each test
asserts the opposite: a complete, unmasked run whose one test failed, with the
program's own account of each attempt (`hostile_programs.NOTE`) where the kernel
refuses it outright."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rlvr.sandboxes import RunSpec, Sandbox, Status
from rlvr.sandboxes.base import Limits, RunResult
from rlvr.sandboxes.jobs import CheckSuite, SplitJob
from tests.sandboxes import hostile_programs as hp
from tests.sandboxes.backends import BACKENDS, open_backend

# A test half stopped or never answering would hold the job to this; a run that ends
# so is a failure here (status TIMEOUT), not a wait.
WALL_S = 20.0
TIMEOUT_S = 5.0
# Jobs per race: a race that wins 1 in 50 is a working exploit.
RACE_JOBS = 60
# Containers at once for the races on the Docker backend.
DOCKER_POOL = 4


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    yield from open_backend(request.param, pool_size=DOCKER_POOL)


def spec(code: str, secret: str) -> RunSpec:
    job = SplitJob(code=code, timeout_s=TIMEOUT_S)
    return RunSpec(job, Limits(wall_s=WALL_S), CheckSuite(test=hp.CHECK.format(secret=secret), entry_point="f"))


def run(box: Sandbox, *attacks: str) -> tuple[RunResult, str]:
    secret = hp.secret()
    return box.run(spec(hp.program(*attacks), secret)), secret


def failed_whole(result: RunResult, secret: str) -> list[str]:
    """The run was the program's alone (not masked, not cut off), the test half loaded
    it and reported its one test as failed, with no forged record beside; returns the
    attempts the program noted."""
    assert result.infra_error is None, result
    assert result.status == Status.OK, result
    assert result.records[0] == {"load": "ok"}, result.records
    assert len(result.records) == 2, result.records
    test = result.records[1]
    assert test["i"] == 0 and test["s"] == "fail", result.records
    said = str(test.get("e", "")).removeprefix("AssertionError: ")
    assert secret not in said
    return said.split("; ")


def refused(result: RunResult, secret: str, *attempts: str) -> None:
    """`failed_whole`, and the kernel said no to every attempt the program noted, of
    which there is at least one for each of `attempts`."""
    notes = failed_whole(result, secret)
    assert all(": refused " in note for note in notes), notes
    for attempt in attempts:
        assert any(note.startswith(attempt) for note in notes), (attempt, notes)


def survived(result: RunResult, secret: str) -> None:
    """Whatever the program did to itself, the test half ran to the end: it reported the
    program's load and no passing test, and nothing was masked or cut off."""
    assert result.infra_error is None, result
    assert result.status == Status.OK, result
    loads = [r for r in result.records if "load" in r]
    assert len(loads) == 1, result.records
    assert not [r for r in result.records if r.get("s") == "pass"], result.records
    assert secret not in str(result.records)


# ---------------------------------------------------------------- the harness can fail


def test_a_program_that_has_the_secret_passes(backend: Sandbox) -> None:
    # What every attack below is after: with the secret, the test passes. So a leak
    # would show as a pass, which the tests below refuse.
    secret = hp.secret()
    result = backend.run(spec(hp.program(f"LATER.append(lambda: {secret!r})"), secret))
    assert result.infra_error is None and result.records == [{"load": "ok"}, {"i": 0, "s": "pass"}], result


def test_a_program_that_signals_itself_is_noted_as_done(backend: Sandbox) -> None:
    # The notes tell a refusal from a call that went through.
    result, secret = run(backend, "NOTE('self', lambda: os.kill(os.getpid(), signal.SIGCONT))")
    assert failed_whole(result, secret) == ["self: done"]


# ---------------------------------------------------------------- /proc of the test half


@pytest.mark.parametrize("name", hp.PROC_FILES)
def test_proc_files_of_the_test_half_do_not_open(backend: Sandbox, name: str) -> None:
    result, secret = run(backend, hp.proc_file(name))
    refused(result, secret, name)


@pytest.mark.parametrize("name", ["mem", "fd/3", "fd/1", "task/{pid}/mem"])
def test_proc_files_of_the_test_half_do_not_open_for_writing(backend: Sandbox, name: str) -> None:
    result, secret = run(backend, hp.proc_file(name, write=True))
    refused(result, secret, name)


@pytest.mark.parametrize("name", ["fd/0", "environ", "fd/3"])
def test_proc_files_drained_on_the_first_line(backend: Sandbox, name: str) -> None:
    # fd/0 is the pipe the tests come on: read out first, the test half would get none.
    result, secret = run(backend, hp.proc_file_drained(name))
    refused(result, secret, name)


@pytest.mark.parametrize("name", hp.PROC_DIRS)
def test_proc_folders_of_the_test_half_do_not_list(backend: Sandbox, name: str) -> None:
    result, secret = run(backend, hp.proc_dir(name))
    refused(result, secret, name)


@pytest.mark.parametrize("name", hp.PROC_PUBLIC)
def test_what_any_uid_may_read_of_the_test_half_holds_no_secret(backend: Sandbox, name: str) -> None:
    result, secret = run(backend, hp.proc_public(name))
    failed_whole(result, secret)


def test_every_proc_file_at_once_kept_open(backend: Sandbox) -> None:
    attacks = [hp.proc_file(name) for name in hp.PROC_FILES]
    result, secret = run(backend, *attacks)
    refused(result, secret, *hp.PROC_FILES)


# ---------------------------------------------------------------- signals


@pytest.mark.parametrize("sig", sorted(hp.SIGNALS))
@pytest.mark.parametrize("route", hp.SIGNAL_ROUTES)
def test_no_signal_reaches_the_test_half_or_pid_1(backend: Sandbox, route: str, sig: str) -> None:
    result, secret = run(backend, hp.signal_route(route, hp.SIGNALS[sig]))
    refused(result, secret, route)


@pytest.mark.parametrize("route", hp.OTHER_ROUTES)
def test_no_call_that_names_a_process_reaches_the_test_half_or_pid_1(backend: Sandbox, route: str) -> None:
    result, secret = run(backend, hp.signal_route(route, 0))
    refused(result, secret, route)


@pytest.mark.parametrize("owner", ["PARENT", "1"])
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSTOP", "SIGTERM"])
def test_sigio_reaches_neither_the_test_half_nor_pid_1(backend: Sandbox, sig: str, owner: str) -> None:
    # F_SETOWN names any process; the kernel checks the sender when the signal goes.
    result, secret = run(backend, hp.sigio(hp.SIGNALS[sig], owner))
    notes = failed_whole(result, secret)
    assert "write: done" in notes, notes


@pytest.mark.parametrize("owner", ["-os.getpgid(PARENT)", "-os.getpgid(0)"])
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSTOP", "SIGTERM"])
def test_sigio_to_a_group_stops_at_the_program(backend: Sandbox, sig: str, owner: str) -> None:
    result, secret = run(backend, hp.sigio(hp.SIGNALS[sig], owner))
    survived(result, secret)


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSTOP", "SIGTERM"])
@pytest.mark.parametrize("route", hp.GROUP_ROUTES)
def test_signals_to_groups_and_everyone_stop_at_the_program(backend: Sandbox, route: str, sig: str) -> None:
    # These may take down the program's own processes (its fault: the test fails),
    # never the test half.
    result, secret = run(backend, hp.group_signal(route, hp.SIGNALS[sig]))
    survived(result, secret)


# ---------------------------------------------------------------- memory and fds


@pytest.mark.parametrize("fd", [0, 1, 3])
def test_no_fd_of_the_test_half_can_be_taken(backend: Sandbox, fd: int) -> None:
    result, secret = run(backend, hp.steal_fd(fd))
    refused(result, secret, f"pidfd_getfd({fd})")


def test_the_test_half_memory_cannot_be_read_across(backend: Sandbox) -> None:
    result, secret = run(backend, hp.process_vm_readv())
    refused(result, secret, "process_vm_readv")


# ---------------------------------------------------------------- races

RACES: dict[str, list[str]] = {
    "kill": [hp.signal_route("kill", hp.SIGNALS["SIGKILL"]), hp.signal_route("kill", hp.SIGNALS["SIGSTOP"])],
    "pidfd": [
        hp.signal_route("pidfd_of_proc_dir", hp.SIGNALS["SIGKILL"]),
        hp.signal_route("pidfd_open", hp.SIGNALS["SIGSTOP"]),
    ],
    "thread_signals": [
        hp.signal_route("tgkill", hp.SIGNALS["SIGKILL"]),
        hp.signal_route("rt_sigqueueinfo", hp.SIGNALS["SIGSTOP"]),
        hp.signal_route("prlimit_cpu", 0),
    ],
    "proc_mem": [hp.proc_file("mem"), hp.proc_file("fd/0"), hp.proc_file("environ")],
}


@pytest.mark.parametrize("attack", sorted(RACES))
def test_races_from_the_first_line_never_win(backend: Sandbox, attack: str) -> None:
    secrets = [hp.secret() for _ in range(RACE_JOBS)]
    code = hp.program(hp.race(*RACES[attack]))
    results = backend.run_many([spec(code, secret) for secret in secrets])
    lost: list[Any] = []
    for result, secret in zip(results, secrets, strict=True):
        try:
            refused(result, secret)
        except AssertionError as exc:
            lost.append(exc)
    assert not lost, f"{len(lost)} of {RACE_JOBS} runs: {lost[:3]}"


def test_a_race_on_sigio_never_wins(backend: Sandbox) -> None:
    # One pipe, written to (and emptied) in a loop from the first line, with the test
    # half as owner.
    write = "NOTE('write', lambda: os.write(W, b'x') and os.read(R, 1 << 16))"
    attack = hp.sigio(hp.SIGNALS["SIGKILL"], "PARENT") + "\n" + hp.race(write)
    secrets = [hp.secret() for _ in range(RACE_JOBS)]
    results = backend.run_many([spec(hp.program(attack), secret) for secret in secrets])
    for result, secret in zip(results, secrets, strict=True):
        assert "write: done" in failed_whole(result, secret)
