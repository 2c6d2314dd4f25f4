"""Mode ``split``: tests that must run next to the program (assert statements,
HumanEval's `check`), without trusting the program.

The job is split into two processes. The *program* half is forked first, before the
test code has been read, so its memory never held a test or an expected value; it
drops to the untrusted uid and answers requests over a socket (call this function,
get this attribute) with exact-type plain data (`wire`). The *test* half drops to a
different uid, reads the tests, and runs them against proxies of the program's
top-level names. Only the test half holds the record channel, and it decides pass or
fail on plain values it decoded itself: an `__eq__` that is always True, a subclass
of int, a patched builtin, a frame walk or `sys.exit(0)` in the program all stay in
the other process.

What the test half takes from the program, and nothing more:

- Names: the tests run with the test half's own builtins and imports, and see only
  the program names they use (`rlvr.sandboxes.runner.names`).
- Exceptions: a builtin `Exception` the program raised is raised again as itself
  (tests may expect a `ValueError`), except those that steer control flow
  (`StopIteration` ends a `for`/`map`/`zip` early, an `AssertionError` is the test's own
  verdict); those, and every non-`Exception`, come as `ProgramAborted`, which no loop
  and no `except Exception` takes for normal flow.
- Files: the test half imports only from the sys.path the zygote checked (read-only
  places), and runs in a mount namespace whose /tmp is empty and read-only
  (`Privileges.drop_trusted`), so the program has no directory it shares with it.
"""

from __future__ import annotations

# `_socket`, not `socket`: the zygote holds what the runner imports, and every job's
# fork copies it (see `rlvr.sandboxes.local.zygote`).
import _socket
import builtins
import contextlib
import os
import sys

# Bound here at import, before the program runs in the program half, which answers
# with these after the program's code has run (see `wire`).
from builtins import (  # noqa: UP029
    BaseException,
    Exception,
    OverflowError,
    StopIteration,
    TypeError,
    bool,
    dict,
    enumerate,
    getattr,
    id,
    isinstance,
    iter,
    len,
    list,
    next,
    setattr,
    str,
    type,
)
from collections.abc import Callable
from types import CodeType
from typing import Any

from rlvr.sandboxes.runner import audit, core, inplace, names, python, wire
from rlvr.sandboxes.runner.foreign import foreign_type
from rlvr.sandboxes.runner.link import CONTROL_FLOW, Link, ProgramGone, recv_msg, send_msg

MAX_ITER_ITEMS = 1_000_000

# ---------------------------------------------------------------- program half


class _Handles:
    """The program's objects that the test half refers to by number: one number per
    object, so the test half's proxies keep the program's identities (`is`)."""

    def __init__(self) -> None:
        self.objects: list[Any] = []
        self.numbers: dict[int, int] = {}  # id(object) -> its number; `objects` keeps it alive

    def add(self, obj: Any) -> int:
        number = self.numbers.get(id(obj))
        if number is None:
            self.objects.append(obj)
            number = self.numbers[id(obj)] = len(self.objects) - 1
        return number

    def get(self, index: int, _type: str) -> Any:
        return self.objects[index]


def _serve(job: core.Frame, program: CodeType | None, sock: _socket.socket) -> None:
    """Load the program, send its top-level names, then answer requests until the test
    half hangs up."""
    handles = _Handles()
    try:
        ns = python.program_namespace(job, "solution")
        if job.get("watch", True):
            audit.watch(None, builtins, ns["__builtins__"])
        exec(program if program is not None else python.compile_source(job["code"], "solution.py"), ns)
        names = {k: wire.encode(v, handles.add, rich=True) for k, v in list(ns.items()) if not k.startswith("__")}
        send_msg(sock, {"ready": names, "a": audit.drain()})
    except BaseException as exc:
        send_msg(sock, {"load_error": python.load_failure(exc), "a": audit.drain()})
        return
    while True:
        try:
            req = recv_msg(sock)
        except (ProgramGone, OSError, ValueError):
            return
        # The test half's last request: what the program did to the process by then.
        final = type(req) is dict and req.get("op") == "audit"
        out: dict[str, Any] = {"ok": None} if final else _answer(req, handles)
        found = audit.drain(final)
        if found:
            out["a"] = found
        try:
            send_msg(sock, out)
        except (wire.Unsupported, ValueError, RecursionError) as exc:
            send_msg(sock, {"err": "TypeError", "msg": f"unsupported return value: {exc}", "base": True})


def _answer(req: Any, handles: _Handles) -> dict[str, Any]:
    """Carry out one request on the program's objects: the reply holds the value, or
    the exception the program raised."""
    try:
        op = req["op"]
        target = handles.objects[req["h"]]
        if op == "call":
            return _call(target, req, handles)
        if op == "next":
            try:
                value = next(target)
            except StopIteration:
                return {"stop": True}
        elif op == "getattr":
            value = getattr(target, req["n"])
        elif op == "setattr":
            setattr(target, req["n"], _decode(req["v"], handles))
            value = None
        elif op == "compare":
            value = COMPARISONS[req["c"]](target, handles.objects[req["o"]])
        elif op in UNARY:
            value = UNARY[op](target)
        elif op == "getitem":
            value = target[_decode(req["k"], handles)]
        else:
            return {"err": "RuntimeError", "msg": f"bad op {op}", "base": True}
        return _value_answer(value, handles)
    except BaseException as exc:
        # `base`: an exception a test may catch; a control-flow one never is (even a
        # subclass), whatever its name. The program may lie here, which only ever makes
        # its exception a plain failure, never control flow in the test half.
        plain = isinstance(exc, Exception) and not isinstance(exc, CONTROL_FLOW)
        return {"err": type(exc).__name__[:100], "msg": _describe(exc), "base": plain}


def _describe(exc: BaseException) -> str:
    # The program may have broken what `core.describe` uses (`builtins.type = None`).
    try:
        return core.describe(exc)
    except BaseException:
        return type(exc).__name__[:100]


def _encode(value: Any, handles: _Handles) -> Any:
    return wire.encode(value, handles.add, rich=True)


def _value_answer(value: Any, handles: _Handles) -> dict[str, Any]:
    """The answer that carries `value`, naming (`c`) a class with comparison of its own
    that it is or holds (`foreign`): telemetry the test half puts in the test's record."""
    answer = {"ok": _encode(value, handles)}
    custom = foreign_type(value)
    if custom is not None:
        answer["c"] = custom
    return answer


def _decode(data: Any, handles: _Handles) -> Any:
    return wire.decode(data, handles.get, rich=True)


def _call(target: Any, req: dict[str, Any], handles: _Handles) -> dict[str, Any]:
    """Call `target` with the test half's arguments; the answer holds the value and
    the new state of each mutable argument the call changed (`inplace`)."""
    args, kwargs = _decode(req["a"], handles), _decode(req["k"], handles)
    if type(args) is not list or type(kwargs) is not dict:
        raise TypeError("bad call arguments")
    for later, first in req.get("same", ()):
        value = args[first] if type(first) is int else kwargs[first]
        if type(later) is int:
            args[later] = value
        else:
            kwargs[later] = value
    passed = [*enumerate(args), *kwargs.items()]
    before = {position: _encode(arg, handles) for position, arg in passed if inplace.is_mutable(arg)}
    answer = _value_answer(target(*args, **kwargs), handles)
    changed = []
    for position, arg in passed:
        if position in before:
            state = _encode(arg, handles)
            if state != before[position]:
                changed.append([position, state])
    if changed:
        answer["m"] = changed
    return answer


# What the test half may ask of a program object besides calls and attributes: each
# answer crosses as data (`wire`) and is judged there; `bool` and `str` must be exactly
# a bool and a str (see `Remote`).
UNARY: dict[str, Callable[[Any], Any]] = {
    "iter": lambda target: _iterate(target),
    "len": len,
    "bool": bool,
    "str": str,
}
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _iterate(target: Any) -> Any:
    """An iterator itself (the test half then draws one item per request), or the
    items of another iterable."""
    iterator = iter(target)
    return target if iterator is target else _items(iterator)


def _items(iterable: Any) -> list[Any]:
    items = []
    for item in iterable:
        items.append(item)
        if len(items) > MAX_ITER_ITEMS:
            raise OverflowError("iterator too long")
    return items


# ---------------------------------------------------------------- test half


GO = b"g"


def run(job: core.Frame, priv: core.Privileges, channel: core.Channel) -> int:
    core.stay_on_this_cpu()
    parent_sock, child_sock = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    if os.fork() == 0:
        try:
            parent_sock.close()
            # The program half must never read the tests (fd 0) or write records (fd 3).
            core.detach_stdin()
            core.close_fds_except(0, 1, 2, child_sock.fileno())
            # No line of the program runs before the test half is under its own uid,
            # not dumpable and has taken the job: its /proc/<pid> (mem, environ, fd/0)
            # is never open to the program, not even on the program's first line, and
            # nothing the program does can stop the job being accepted.
            if child_sock.recv(len(GO)) != GO:
                return 0  # the test half gave up (a bad job): `finally` exits
            priv.drop_untrusted()
            program = job.get("program")
            _serve(job, program if type(program) is CodeType else None, child_sock)
            sys.stdout.flush()
        finally:
            core.hard_exit(0)
    child_sock.close()
    link = Link(parent_sock)
    try:
        priv.drop_trusted()
        trusted_sys_path()
        try:
            tests = core.read_frame()
            sources = _sources(tests)
        except (EOFError, ValueError, OSError, KeyError, TypeError):
            return core.EXIT_BAD_JOB  # before `accept`: the sandbox's failure, not the program's
        # Nothing the program half does reaches this process's exit code or channel, so
        # the job is accepted only now, with the tests in hand.
        channel.accept()
        with contextlib.suppress(OSError):  # a program half already gone fails its load
            parent_sock.sendall(GO)
        _run_tests(job, tests, sources, link, channel)
        return 0
    finally:
        link.kill()


def trusted_sys_path() -> None:
    """Check, do not assume, that the test half imports from no place a job can write:
    only absolute paths, none at or under /tmp (the zygote has already kept only
    read-only directories; a relative entry would resolve in the working directory)."""
    sys.path[:] = [p for p in sys.path if p.startswith("/") and p != "/" and p != "/tmp" and not p.startswith("/tmp/")]


# Tests frames made by `prepare_tests`, by their tests: the G responses to one prompt
# share them.
PREPARED_TESTS_ENTRIES = 256
_prepared_tests: dict[tuple[Any, ...], core.Frame] = {}


def prepare_tests(tests: core.Frame) -> core.Frame:
    """The tests frame with what the trusted client can work out once for every job
    with these tests, where each forked job would pay for it in copied pages: the
    names the tests read (`reads`), the one they take from the program whatever it is
    (`entry`, see `names`) and their code objects (`code`,
    None where a source is past the compile cap or does not compile: the job compiles
    it and reports the error). Total: tests it cannot read go as they are."""
    try:
        key = (
            tests["kind"],
            tests.get("test"),
            tests.get("entry_point"),
            tests.get("setup"),
            tests.get("helpers"),
            *tests.get("tests", ()),
        )
        hit = _prepared_tests.get(key)
        if hit is not None:
            return hit
        sources = _sources(tests)
    except (KeyError, TypeError):
        return tests
    code: list[CodeType | None] = []
    for source, filename in sources:
        try:
            code.append(python.compile_source(source, filename) if len(source) <= python.PRECOMPILE_MAX_CHARS else None)
        except python.COMPILE_ERRORS:
            code.append(None)
    prepared = {**tests, "reads": names.global_reads(sources), "entry": _entry(tests, sources), "code": code}
    if len(_prepared_tests) >= PREPARED_TESTS_ENTRIES:
        _prepared_tests.pop(next(iter(_prepared_tests)))
    _prepared_tests[key] = prepared
    return prepared


def _sources(tests: core.Frame) -> list[tuple[str, str]]:
    """The tests' code as (source, filename) pairs, in the order it runs: the trusted
    setup first, if there is one (`_setup`)."""
    setup = _setup(tests)
    pairs = [(str(setup), "setup.py")] if setup else []
    if tests["kind"] == "check":
        return [*pairs, (str(tests["test"]) + f"\n\ncheck({tests['entry_point']})\n", "test.py")]
    return pairs + [(str(test), f"test_{index}") for index, test in enumerate(tests["tests"])]


_NOT_PREPARED = object()


def _entry(tests: core.Frame, sources: list[tuple[str, str]]) -> str | None:
    """The name the tests take from the program whatever it is (`names`): a check's
    entry point, or the one an assert suite's tests are about."""
    if tests["kind"] == "check":
        return str(tests["entry_point"])
    return names.assert_entry(sources)


def _setup(tests: core.Frame) -> Any:
    """What runs before the tests, in their namespace: assert tests' `setup`, or the
    helpers a check takes from the task's prompt. The names it binds are the tests' own,
    never the program's (`names.global_reads`)."""
    return tests.get("helpers") if tests["kind"] == "check" else tests.get("setup")


def _run_tests(
    job: core.Frame, tests: core.Frame, sources: list[tuple[str, str]], link: Link, channel: core.Channel
) -> None:
    timeout_s = float(job["timeout_s"])
    try:
        _load_and_run(job, tests, sources, link, channel, timeout_s)
    finally:
        _final_evidence(link, timeout_s, channel)


def _load_and_run(
    job: core.Frame,
    tests: core.Frame,
    sources: list[tuple[str, str]],
    link: Link,
    channel: core.Channel,
    timeout_s: float,
) -> None:
    ns = _load(link, timeout_s, channel, tests, sources)
    if ns is None:
        return
    compiled = tests.get("code")
    thunks = [_runs(pair, compiled[i] if type(compiled) is list else None, ns) for i, pair in enumerate(sources)]
    if _setup(tests):
        setup, thunks = thunks[0], thunks[1:]
        failure = _one(-1, setup, timeout_s, channel, link, quiet=True)
        if failure is not None:
            channel.write({"load": "error", "e": f"test setup failed: {failure}"})
            return
    for index, thunk in enumerate(thunks):
        if _one(index, thunk, timeout_s, channel, link) is not None and job.get("stop_on_failure"):
            break


def _final_evidence(link: Link, timeout_s: float, channel: core.Channel) -> None:
    """Ask a program half still there what it did to its process after its last test
    (a builtin rebound inside a call), and record it with what came before."""
    with contextlib.suppress(BaseException), core.TimeLimit(timeout_s):
        if link.alive:
            link.request({"op": "audit", "h": 0})
    if link.evidence - link.recorded:
        channel.write({"a": sorted(link.evidence)})


def _runs(source: tuple[str, str], code: Any, ns: dict[str, Any]) -> Callable[[], None]:
    """A test to run in `ns`: its code object from the trusted client, or its (source,
    filename) compiled inside the test's time limit, like the rest of the test."""
    if type(code) is CodeType:
        return lambda: exec(code, ns)
    return lambda: exec(python.compile_source(*source), ns)


def _load(
    link: Link, timeout_s: float, channel: core.Channel, tests: core.Frame, sources: list[tuple[str, str]]
) -> dict[str, Any] | None:
    """Wait for the program half to load, and record how that went. The namespace for
    the tests, holding the program names they may see; None if it did not load."""
    core.set_alarm_handler()
    try:
        with core.TimeLimit(timeout_s):
            ready = recv_msg(link.sock)
    except core.TestTimeout:
        channel.write({"load": "timeout", "e": "loading the program timed out"})
        return None
    except (ProgramGone, OSError, ValueError, RecursionError) as exc:
        channel.write({"load": "error", "e": f"program process failed to load: {exc}"})
        return None
    link.note(ready)
    if type(ready) is not dict or type(ready.get("ready")) is not dict:
        error = ready.get("load_error", "bad hello") if type(ready) is dict else "bad hello"
        channel.write({"load": "error", "e": str(error)[:2000]})
        return None
    channel.write({"load": "ok"})
    try:
        reads, entry = tests.get("reads"), tests.get("entry", _NOT_PREPARED)
        return names.test_namespace(
            ready["ready"],
            lambda v: wire.decode(v, link.proxy),
            entry if entry is None or type(entry) is str else _entry(tests, sources),
            sources,
            reads if type(reads) is list else None,
        )
    except (ValueError, TypeError, KeyError, RecursionError):
        channel.write({"load": "error", "e": "malformed hello from program"})
        return None


def _one(
    index: int, thunk: Callable[[], None], timeout_s: float, channel: core.Channel, link: Link, quiet: bool = False
) -> str | None:
    """Run one test under its time limit and record (unless `quiet`) how it went: None
    if it passed, else what went wrong. The record names a class with comparison of
    its own that the program answered the test with (`c`, telemetry only)."""
    record: core.Record = {"i": index, "s": "pass"}
    link.custom = None
    try:
        with core.TimeLimit(timeout_s):
            thunk()
    except core.TestTimeout:
        record = {"i": index, "s": "timeout"}
    except MemoryError:
        record = {"i": index, "s": "memory"}
    except AssertionError as exc:
        record = {"i": index, "s": "fail", "e": core.describe(exc)}
    except BaseException as exc:
        record = {"i": index, "s": "error", "e": core.describe(exc)}
    if link.custom is not None:
        record["c"] = link.custom
    if link.evidence:
        record["a"] = sorted(link.evidence)
        link.recorded = set(link.evidence)
    if not quiet:
        channel.write(record)
    return None if record["s"] == "pass" else str(record.get("e", record["s"]))
