"""Sessions on the local backend: state kept between calls, each call's own output and
limits, and the walls around a session (red team: another session's state, files and
processes, and anything left after its end)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from rlvr.sandboxes.local.sessions import LocalSession, LocalSessions
from rlvr.sandboxes.sessions import Call, CallResult, SessionBusy, SessionEnded, SessionFileError, SessionLimits
from tests.services import require

Scene = Callable[[LocalSessions], Awaitable[Any]]


def play(scene: Scene) -> Any:
    async def main() -> Any:
        sessions = LocalSessions()
        try:
            return await scene(sessions)
        finally:
            await sessions.aclose()

    return asyncio.run(main())


@pytest.fixture(scope="module", autouse=True)
def _full_isolation() -> None:
    async def level(sessions: LocalSessions) -> str:
        await sessions.end(await sessions.open(SessionLimits()))
        return sessions.isolation()

    require(play(level) == "full", "full isolation (run as root)")


async def run(sessions: LocalSessions, session: LocalSession, code: str, **call: Any) -> CallResult:
    return await sessions.call(session, Call(code, **call))


def processes_of(uid: int) -> list[int]:
    """The host's processes that run as `uid`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
            except FileNotFoundError:
                pass
    return found


def test_state_persists_between_calls() -> None:
    async def scene(sessions: LocalSessions) -> list[CallResult]:
        s = await sessions.open(SessionLimits())
        return [
            await run(sessions, s, "import math\nx = 41"),
            await run(sessions, s, "def f(n):\n    return n + x\nf(1)"),
            await run(sessions, s, "open('notes.txt', 'w').write('kept')"),
            await run(sessions, s, "print(open('/tmp/notes.txt').read(), math.pi > 3)"),
            await run(sessions, s, "class P:\n    pass\np = P()\np.v = [1, 2]"),
            await run(sessions, s, "p.v + [3]"),
        ]

    results = play(scene)
    assert [r.status for r in results] == ["ok"] * 6
    assert results[1].value == "42" and results[0].value is None
    assert results[3].stdout == "kept True\n"
    assert results[5].value == "[1, 2, 3]"


@pytest.mark.parametrize(
    ("code", "value", "stdout"),
    [
        ("1 + 1", "2", ""),
        ("print('a'); 'b'", "'b'", "a\n"),
        ("x = 3\nx", "3", ""),
        ("None", None, ""),
        ("for i in range(2):\n    print(i)", None, "0\n1\n"),
        ("[i * i for i in range(4)]", "[0, 1, 4, 9]", ""),
        ("import sys; sys.stdout.write('no newline')", "10", "no newline"),
        ("import os; os.system('echo from a shell')", "0", "from a shell\n"),
        ("import subprocess; subprocess.run(['echo', 'child']).returncode", "0", "child\n"),
        ("", None, ""),
        ("# only a comment", None, ""),
        ("'é' * 3", "'ééé'", ""),
    ],
)
def test_value_and_output_as_a_notebook_shows_them(code: str, value: str | None, stdout: str) -> None:
    async def scene(sessions: LocalSessions) -> CallResult:
        return await run(sessions, await sessions.open(SessionLimits()), code)

    result = play(scene)
    assert (result.status, result.value, result.stdout) == ("ok", value, stdout)


def test_each_call_has_its_own_output_and_stdin() -> None:
    async def scene(sessions: LocalSessions) -> list[CallResult]:
        s = await sessions.open(SessionLimits())
        return [
            await run(sessions, s, "print('one'); import sys; print('err', file=sys.stderr)"),
            await run(sessions, s, "print('two')"),
            await run(sessions, s, "input() + input()", stdin="a\nb\n"),
            await run(sessions, s, "import sys; sys.stdin.read()"),
            await run(sessions, s, "print('x' * 100_000)"),
        ]

    one, two, read, empty, big = play(scene)
    assert (one.stdout, one.stderr, two.stdout, two.stderr) == ("one\n", "err\n", "two\n", "")
    assert read.value == "'ab'" and empty.value == "''"
    assert big.stdout_bytes == 100_001 and len(big.stdout) == SessionLimits().keep_output_bytes


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("1/0", "ZeroDivisionError: division by zero"),
        ("def f(:\n  pass", "SyntaxError"),
        ("undefined_name", "NameError"),
        ("import sys; sys.exit(3)", "SystemExit: 3"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("import no_such_module_here", "ModuleNotFoundError"),
    ],
)
def test_errors_leave_the_session_alive(code: str, error: str) -> None:
    async def scene(sessions: LocalSessions) -> tuple[CallResult, CallResult, CallResult]:
        s = await sessions.open(SessionLimits())
        await run(sessions, s, "kept = 7")
        return await run(sessions, s, code), await run(sessions, s, "kept"), await run(sessions, s, "1")

    failed, kept, _ = play(scene)
    assert failed.status == "error" and failed.error is not None and failed.error.startswith(error)
    assert failed.traceback is not None and "<cell " in failed.traceback
    assert kept.value == "7"


@pytest.mark.parametrize(
    "code",
    [
        "while True:\n    pass",
        "import time\ntime.sleep(30)",
        "sum(i for i in range(10**10))",
        "import threading\nthreading.Event().wait()",
    ],
)
def test_a_timeout_interrupts_the_call_not_the_session(code: str) -> None:
    async def scene(sessions: LocalSessions) -> tuple[CallResult, CallResult]:
        s = await sessions.open(SessionLimits())
        await run(sessions, s, "kept = 'yes'")
        return await run(sessions, s, code, timeout_s=0.5), await run(sessions, s, "kept")

    timed_out, kept = play(scene)
    assert timed_out.status == "timeout" and kept.value == "'yes'"


def test_cpu_per_call_is_bounded_apart_from_the_wall() -> None:
    async def scene(sessions: LocalSessions) -> CallResult:
        s = await sessions.open(SessionLimits(call_cpu_s=0.3))
        return await run(sessions, s, "while True:\n    pass", timeout_s=20)

    result = play(scene)
    # Its CPU ran out, long before its wall time would have.
    assert result.status == "timeout" and result.execution_time < 10


@pytest.mark.parametrize(
    "code",
    [
        # the timer's exception caught, over and over
        "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass",
        # the alarm ignored
        "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGPROF, signal.SIG_IGN)\ntime.sleep(30)",
    ],
)
def test_a_call_that_outstays_its_timeout_ends_its_session(code: str) -> None:
    async def scene(sessions: LocalSessions) -> tuple[CallResult, int, list[int]]:
        s = await sessions.open(SessionLimits())
        uid = int((await run(sessions, s, "import os; os.getuid()")).value or 0)
        result = await run(sessions, s, code, timeout_s=0.3)
        with pytest.raises(SessionEnded):
            await run(sessions, s, "1")
        return result, uid, processes_of(uid)

    result, uid, left = play(scene)
    assert (result.status, result.limit) == ("killed", "timeout")
    assert uid > 0 and left == []


@pytest.mark.parametrize(
    ("code", "limit"),
    [
        ("import os; os._exit(0)", "exited"),
        ("import ctypes; ctypes.string_at(0)", "exited"),
        ("import os; os.abort()", "exited"),
        ("while True:\n    pass", "cpu"),
    ],
)
def test_a_session_whose_interpreter_dies_is_killed_with_its_reason(code: str, limit: str) -> None:
    async def scene(sessions: LocalSessions) -> CallResult:
        s = await sessions.open(SessionLimits(cpu_s=1))
        return await run(sessions, s, code, timeout_s=10)

    result = play(scene)
    assert (result.status, result.limit) == ("killed", limit)


def test_memory_over_the_limit_fails_the_call_or_ends_the_session_clearly() -> None:
    async def scene(sessions: LocalSessions) -> tuple[CallResult, CallResult, CallResult]:
        s = await sessions.open(SessionLimits(memory_mb=128))
        one = await run(sessions, s, "a = bytearray(512 * 1024 * 1024)")
        # Under the address-space limit per process, over the cgroup's together.
        many = (
            "import os, time\npids = []\nfor _ in range(4):\n    pid = os.fork()\n    if pid == 0:\n"
            "        b = bytearray(100 * 1024 * 1024)\n        time.sleep(5)\n        os._exit(0)\n"
            "    pids.append(pid)\n[os.waitpid(p, 0)[1] for p in pids]"
        )
        return one, await run(sessions, s, many, timeout_s=10), await run(sessions, s, "'alive'")

    one, many, after = play(scene)
    assert one.status == "error" and one.error == "MemoryError"
    # The kernel kills the biggest of the session's processes: a child here.
    assert many.status == "ok" and many.value is not None and "9" in many.value
    assert after.value == "'alive'"


def test_output_past_the_file_size_limit_is_cut_and_the_session_goes_on() -> None:
    async def scene(sessions: LocalSessions) -> tuple[CallResult, CallResult]:
        s = await sessions.open(SessionLimits(fsize_mb=1))
        return await run(sessions, s, "print('y' * (4 * 1024 * 1024))"), await run(sessions, s, "print('small')")

    flood, small = play(scene)
    assert flood.status == "error" and len(flood.stdout) <= SessionLimits().keep_output_bytes
    assert small.stdout == "small\n"


def test_a_second_call_while_one_runs_is_refused() -> None:
    async def scene(sessions: LocalSessions) -> CallResult:
        s = await sessions.open(SessionLimits())
        slow = asyncio.ensure_future(run(sessions, s, "import time; time.sleep(0.5); 'slow'"))
        await asyncio.sleep(0.1)
        with pytest.raises(SessionBusy):
            await run(sessions, s, "1")
        return await slow

    assert play(scene).value == "'slow'"


# ---------------------------------------------------------------- red team


def test_sessions_do_not_see_each_other() -> None:
    async def scene(sessions: LocalSessions) -> dict[str, Any]:
        a, b = await sessions.open(SessionLimits()), await sessions.open(SessionLimits())
        await run(sessions, a, "secret = 'a-only'\nopen('/tmp/secret.txt', 'w').write('a-file')")
        await run(sessions, a, "import subprocess; p = subprocess.Popen(['sleep', '60'])")
        a_pid = (await run(sessions, a, "import os; (os.getpid(), p.pid, os.getuid())")).value
        probes = {
            "variable": "'secret' in globals()",
            "file": "import os; os.listdir('/tmp')",
            "procs": "import os; sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
            "uid": "import os; os.getuid()",
            "signal": (
                "import os\ntry:\n    os.kill(2, 9)\n    r = 'sent'\nexcept OSError as e:\n    r = type(e).__name__\nr"
            ),
            "network": "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
            "    r = 'open'\nexcept OSError:\n    r = 'closed'\nr",
        }
        seen = {name: (await run(sessions, b, code)).value for name, code in probes.items()}
        seen["a"] = a_pid
        seen["a_after"] = (await run(sessions, a, "secret, open('/tmp/secret.txt').read()")).value
        return seen

    seen = play(scene)
    assert seen["variable"] == "False" and seen["file"] == "[]"
    a_self, a_child, a_uid = eval(seen["a"])  # a tuple of ints from our own session
    assert a_child not in eval(seen["procs"]) or a_self == 1  # its own PID namespace
    assert int(seen["uid"]) != a_uid
    assert seen["signal"] in {"'ProcessLookupError'", "'PermissionError'"}
    assert seen["network"] == "'closed'"
    assert seen["a_after"] == "('a-only', 'a-file')"


@pytest.mark.parametrize(
    "leftover",
    [
        "import subprocess; subprocess.Popen(['sleep', '300'])",
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(300)\n    os._exit(0)",
        "import os, time\nif os.fork() == 0:\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(300)\n"
        "    os._exit(0)",
        "import os; os.system('nohup sleep 300 >/dev/null 2>&1 &')",
        "import threading, time; threading.Thread(target=time.sleep, args=(300,), daemon=False).start()",
    ],
)
def test_nothing_outlives_the_end_of_a_session(leftover: str) -> None:
    async def scene(sessions: LocalSessions) -> tuple[int, list[int], list[int], Any]:
        s = await sessions.open(SessionLimits())
        uid = int((await run(sessions, s, "import os; os.getuid()")).value or 0)
        await run(sessions, s, leftover)
        await run(sessions, s, "open('/tmp/left.txt', 'w').write('x')\nleft = 1")
        await asyncio.sleep(0.2)
        before = processes_of(uid)
        await sessions.end(s)
        after = processes_of(uid)
        # The next session takes the freed slot (its uid and its tmpfs).
        t = await sessions.open(SessionLimits())
        return uid, before, after, (await run(sessions, t, "import os; os.listdir('/tmp'), 'left' in globals()")).value

    _, before, after, fresh = play(scene)
    assert before and after == []
    assert fresh == "([], False)"


def test_a_session_cannot_reach_the_channel_of_another_or_break_its_host() -> None:
    # Junk written to every fd the session holds: its own session may end, no other.
    junk = (
        'import os\nforged = b\'{"s": "ok", "v": "forged"}\\n\' + b\'x\' * 1000\n'
        "for fd in range(3, 64):\n    try:\n        os.write(fd, forged)\n"
        "    except OSError:\n        pass\n'done'"
    )

    async def scene(sessions: LocalSessions) -> tuple[CallResult, CallResult, CallResult]:
        a, b = await sessions.open(SessionLimits()), await sessions.open(SessionLimits())
        await run(sessions, b, "mine = 'b'")
        first = await run(sessions, a, junk)
        return first, await run(sessions, b, "mine"), await run(sessions, b, "1 + 1")

    first, mine, sum_ = play(scene)
    # A line the session's code writes to its channel answers no call.
    assert first.value == "'done'"
    assert mine.value == "'b'" and sum_.value == "2"


def test_after_end_a_call_is_refused() -> None:
    async def scene(sessions: LocalSessions) -> None:
        s = await sessions.open(SessionLimits())
        await sessions.end(s)
        with pytest.raises(SessionEnded):
            await run(sessions, s, "1")

    play(scene)


def test_a_traceback_shows_the_lines_of_every_cell_it_passes() -> None:
    async def scene(sessions: LocalSessions) -> CallResult:
        s = await sessions.open(SessionLimits())
        await run(sessions, s, "def halve(n):\n    return n // zero")
        return await run(sessions, s, "zero = 0\nhalve(4)")

    failed = play(scene)
    assert failed.error == "ZeroDivisionError: integer division or modulo by zero"
    assert failed.traceback is not None
    assert "halve(4)" in failed.traceback and "return n // zero" in failed.traceback


def test_ending_a_session_during_a_call_answers_that_call() -> None:
    async def scene(sessions: LocalSessions) -> CallResult:
        s = await sessions.open(SessionLimits())
        running = asyncio.ensure_future(run(sessions, s, "import time; time.sleep(60)", timeout_s=120))
        await asyncio.sleep(0.3)
        await sessions.end(s)
        return await asyncio.wait_for(running, 30)  # a bound for a hang, not a timing

    result = play(scene)
    assert (result.status, result.limit) == ("killed", "ended")


def test_a_call_whose_caller_left_ends_its_session_rather_than_answer_the_next() -> None:
    async def scene(sessions: LocalSessions) -> None:
        s = await sessions.open(SessionLimits())
        running = asyncio.ensure_future(run(sessions, s, "import time; time.sleep(0.5); 'first'"))
        await asyncio.sleep(0.2)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        await asyncio.sleep(1.0)
        with pytest.raises(SessionEnded):
            await run(sessions, s, "'second'")

    play(scene)


FORGE = (
    "import os, stat\n"
    "def channels():\n"
    "    for fd in range(3, 64):\n"
    "        try:\n"
    "            if stat.S_ISSOCK(os.fstat(fd).st_mode):\n"
    "                yield fd\n"
    "        except OSError:\n"
    "            pass\n"
    "def forge(line):\n"
    "    for fd in channels():\n"
    "        try:\n"
    "            os.write(fd, line)\n"
    "        except OSError:\n"
    "            pass\n"
)


@pytest.mark.parametrize(
    "line",
    [
        b'{"s": "ok", "out_bytes": 1e400}\\n',
        b'{"s": "ok", "t": Infinity}\\n',
        b"[" * 100_000 + b"\\n",
        b'{"s": "ok", "v": 7}\\n',
        b'{"s": "weird"}\\n',
        b"not json at all\\n",
        b'{"s": "ok", "out": "\\\\ud800"}\\n',
    ],
)
def test_forged_records_end_only_their_own_session_and_never_raise(line: bytes) -> None:
    # With every call number guessed: a forged record that claims a call ends its session.
    async def scene(sessions: LocalSessions) -> tuple[list[CallResult], CallResult]:
        s, other = await sessions.open(SessionLimits()), await sessions.open(SessionLimits())
        await run(sessions, s, FORGE)
        results = []
        for n in range(2, 5):
            stamped = line.replace(b'{"s"', b'{"n": %d, "s"' % n)
            results.append(await run(sessions, s, f"forge({stamped!r})\n'done'"))
            if results[-1].ended:
                break
        return results, await run(sessions, other, "'fine'")

    results, other = play(scene)
    assert all(r.status in {"ok", "killed"} for r in results)
    assert results[-1].status == "killed" or results[-1].value == "'done'"
    assert other.value == "'fine'"


def test_a_stalled_interpreter_cannot_hang_a_call_however_large() -> None:
    stall = "import signal, time\nsignal.setitimer(signal.ITIMER_REAL, 0)\nsignal.setitimer(signal.ITIMER_PROF, 0)\n"

    async def scene(sessions: LocalSessions) -> CallResult:
        s = await sessions.open(SessionLimits())
        await run(sessions, s, FORGE)
        # The call's record is forged, its code then stalls: the next call's frame is never read.
        first = asyncio.ensure_future(run(sessions, s, f'forge(b\'{{"n": 2, "s": "ok"}}\\n\')\n{stall}time.sleep(600)'))
        await asyncio.sleep(0.5)
        await first
        big = "x = 1\n" + "#" * (4 * 1024 * 1024)
        return await asyncio.wait_for(run(sessions, s, big, timeout_s=1.0), 60)  # a bound for a hang

    result = play(scene)
    assert (result.status, result.limit) == ("killed", "timeout")


def test_text_that_cannot_be_utf8_comes_back_escaped() -> None:
    async def scene(sessions: LocalSessions) -> list[CallResult]:
        s = await sessions.open(SessionLimits())
        return [
            await run(sessions, s, "class A:\n    def __repr__(self):\n        return '\\ud800'\nA()"),
            await run(sessions, s, "raise ValueError('\\udcff')"),
            await run(sessions, s, "exec(compile('1/0', '\\udcff', 'exec'))"),
            await run(sessions, s, "print('\\ud800')"),
        ]

    value, error, traceback, printed = play(scene)
    assert value.value == "\\ud800"
    assert error.error == "ValueError: \\udcff"
    assert traceback.traceback is not None and "\\udcff" in traceback.traceback
    for result in (value, error, traceback, printed):
        (result.stdout + (result.value or "") + (result.error or "") + (result.traceback or "")).encode("utf-8")


def test_processes_a_call_starts_end_with_it_and_count_against_the_session_cpu() -> None:
    spin = "import os\nfor _ in range(4):\n    if os.fork() == 0:\n        while True:\n            pass\n'forked'"
    burn = (
        "import os, time\npids = [os.fork() for _ in range(2)]\nif 0 in pids:\n    while True:\n        pass\n"
        "time.sleep(1.0)\n'burnt'"
    )

    async def scene(sessions: LocalSessions) -> tuple[CallResult, list[int], list[CallResult]]:
        s = await sessions.open(SessionLimits(cpu_s=3))
        uid = int((await run(sessions, s, "import os; os.getuid()")).value or 0)
        forked = await run(sessions, s, spin)
        left = processes_of(uid)
        burnt = []
        for _ in range(6):
            burnt.append(await run(sessions, s, burn, timeout_s=5))
            if burnt[-1].ended:
                break
        return forked, left, burnt

    forked, left, burnt = play(scene)
    assert forked.value == "'forked'" and len(left) == 1
    assert (burnt[-1].status, burnt[-1].limit) == ("killed", "cpu")


def test_a_deep_recursion_traceback_shows_its_innermost_frames() -> None:
    async def scene(sessions: LocalSessions) -> CallResult:
        s = await sessions.open(SessionLimits())
        code = "import sys\nsys.setrecursionlimit(60000)\ndef down(n):\n    return down(n + 1)\ndown(0)"
        return await run(sessions, s, code, timeout_s=20)

    result = play(scene)
    assert result.status == "error" and result.error is not None and result.error.startswith("RecursionError")
    assert result.traceback is not None and result.traceback.count("in down") <= 50


@pytest.mark.parametrize(
    "flood",
    [
        "os.write(fd, b'\\n' * 65536)",
        "os.write(fd, b'{\"n\": 0}\\n' * 8192)",
        "os.write(fd, b'x' * 65536)",
    ],
)
def test_a_session_flooding_its_channel_holds_up_no_other(flood: str) -> None:
    code = (
        FORGE
        + "import signal, time\nsignal.setitimer(signal.ITIMER_REAL, 0)\nsignal.setitimer(signal.ITIMER_PROF, 0)\n"
        f"t = time.time()\nwhile time.time() - t < 6:\n    for fd in channels():\n        try:\n            {flood}\n"
        "        except OSError:\n            pass\n'still here'"
    )

    async def scene(sessions: LocalSessions) -> tuple[CallResult, list[CallResult]]:
        s, other = await sessions.open(SessionLimits()), await sessions.open(SessionLimits())
        flooding = asyncio.ensure_future(run(sessions, s, code, timeout_s=1.0))
        others = []
        while not flooding.done():
            others.append(await run(sessions, other, "'fine'"))
            await asyncio.sleep(0.05)
        return await flooding, others

    flooded, others = play(scene)
    assert flooded.status == "killed" and flooded.limit in {"protocol", "timeout"}
    assert others and all(r.value == "'fine'" for r in others)


@pytest.mark.parametrize(
    "record",
    [
        b'{"n": 2, "s": "ok", "b64": "\\\\u00e9"}',
        b'{"n": 2, "s": "ok", "b64": 7}',
        b'{"n": 2, "s": "error", "e": "\\\\ud800"}',
        b'{"n": 2, "s": "maybe"}',
    ],
)
def test_a_forged_file_record_is_refused_cleanly(record: bytes) -> None:
    async def scene(sessions: LocalSessions) -> BaseException | bytes:
        s = await sessions.open(SessionLimits())
        await run(sessions, s, FORGE + f"forge(b'\\n' + {record!r} + b'\\n')")
        try:
            return await sessions.read_file(s, "anything")
        except (SessionEnded, SessionFileError) as exc:
            return exc

    outcome = play(scene)
    assert isinstance(outcome, SessionEnded | SessionFileError)
    str(outcome).encode("utf-8", "backslashreplace")
