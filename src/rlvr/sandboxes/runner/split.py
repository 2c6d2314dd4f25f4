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
import json
import os
import struct
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any

from rlvr.sandboxes.runner import core, names, python, wire

MAX_MESSAGE = 16 * 1024 * 1024
MAX_ITER_ITEMS = 1_000_000


class ProgramGone(BaseException):
    """The program half died, timed out earlier, or broke the protocol."""


class ProgramAborted(BaseException):
    """The program raised SystemExit/KeyboardInterrupt/...: never a pass, and not
    catchable by a test's `except Exception`."""


class ProgramError(Exception):
    """A non-builtin exception raised by the program."""


# Builtin exceptions never raised again as themselves in the test half: iteration
# protocols and `with`/`for` machinery act on these, and an AssertionError is a verdict.
CONTROL_FLOW = (StopIteration, StopAsyncIteration, AssertionError)


def send_msg(sock: _socket.socket, obj: Any) -> None:
    body = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(struct.pack("!I", len(body)) + body)


def recv_msg(sock: _socket.socket) -> Any:
    head = _recv_exact(sock, 4)
    (size,) = struct.unpack("!I", head)
    if size > MAX_MESSAGE:
        raise ProgramGone("program sent an oversized message")
    return json.loads(_recv_exact(sock, size))


def _recv_exact(sock: _socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ProgramGone("program process exited")
        buf += chunk
    return bytes(buf)


# ---------------------------------------------------------------- program half


class _Handles:
    """The program's objects that the test half refers to by number."""

    def __init__(self) -> None:
        self.objects: list[Any] = []

    def add(self, obj: Any) -> int:
        self.objects.append(obj)
        return len(self.objects) - 1

    def get(self, index: int, _type: str) -> Any:
        return self.objects[index]


def _serve(job: core.Frame, program: CodeType | None, sock: _socket.socket) -> None:
    """Load the program, send its top-level names, then answer requests until the test
    half hangs up."""
    handles = _Handles()
    try:
        ns = python.program_namespace(job, "solution")
        exec(program if program is not None else python.compile_source(job["code"], "solution.py"), ns)
        names = {k: wire.encode(v, handles.add) for k, v in list(ns.items()) if not k.startswith("__")}
        send_msg(sock, {"ready": names})
    except BaseException as exc:
        send_msg(sock, {"load_error": python.load_failure(exc)})
        return
    while True:
        try:
            req = recv_msg(sock)
        except (ProgramGone, OSError, ValueError):
            return
        out = _answer(req, handles)
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
            args = wire.decode(req["a"], handles.get)
            kwargs = wire.decode(req["k"], handles.get)
            value = target(*args, **kwargs)
        elif op == "getattr":
            value = getattr(target, req["n"])
        elif op == "iter":
            value = _items(target)
        elif op == "len":
            value = len(target)
        else:
            return {"err": "RuntimeError", "msg": f"bad op {op}", "base": True}
        return {"ok": wire.encode(value, handles.add)}
    except BaseException as exc:
        # `base`: an exception a test may catch; a control-flow one never is (even a
        # subclass), whatever its name. The program may lie here, which only ever makes
        # its exception a plain failure, never control flow in the test half.
        plain = isinstance(exc, Exception) and not isinstance(exc, CONTROL_FLOW)
        return {"err": type(exc).__name__[:100], "msg": core.describe(exc), "base": plain}


def _items(iterable: Any) -> list[Any]:
    items = []
    for item in iterable:
        items.append(item)
        if len(items) > MAX_ITER_ITEMS:
            raise OverflowError("iterator too long")
    return items


# ---------------------------------------------------------------- test half


class Link:
    """The test half's end of the program's socket."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock, self.alive = sock, True

    def kill(self) -> None:
        # The program half has another uid, so it cannot be signalled from here; cut
        # it off instead. It dies with this process (pid 1 of the job's namespace).
        if self.alive:
            self.alive = False
            with contextlib.suppress(OSError):
                self.sock.close()

    def request(self, req: dict[str, Any]) -> Any:
        if not self.alive:
            raise ProgramGone("program process is gone")
        try:
            send_msg(self.sock, req)
            answer = recv_msg(self.sock)
        except (OSError, ValueError) as exc:
            self.kill()
            raise ProgramGone(str(exc)) from None
        except BaseException:
            # A timeout mid-call leaves the program busy and the stream out of step.
            self.kill()
            raise
        if type(answer) is not dict:
            self.kill()
            raise ProgramGone("malformed answer")
        if "ok" in answer:
            try:
                return wire.decode(answer["ok"], self.proxy)
            except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
                self.kill()
                raise ProgramGone(f"malformed value: {exc}") from None
        raise program_exception(answer)

    def proxy(self, index: int, type_name: str) -> Remote:
        return Remote(self, index, type_name)


def program_exception(answer: dict[str, Any]) -> BaseException:
    """What the test half raises for an exception the program raised: see the module's
    docstring. The program names the type; only a plain builtin `Exception` outside
    `CONTROL_FLOW` is raised as that type."""
    name, msg = str(answer.get("err"))[:100], str(answer.get("msg"))[:2000]
    text = f"program raised {name}: {msg}"
    if answer.get("base") is not True:
        return ProgramAborted(text)
    exc_type = vars(builtins).get(name)
    if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
        return ProgramError(text)
    if issubclass(exc_type, CONTROL_FLOW):
        return ProgramAborted(text)
    try:
        exc = exc_type(msg)
    except Exception:  # a type whose constructor wants more (UnicodeDecodeError, ...)
        return ProgramError(text)
    return exc if type(exc) is exc_type else ProgramError(text)


def _arg_handle(obj: Any) -> int:
    if type(obj) is Remote:
        return obj._h
    raise wire.Unsupported(f"cannot pass {type(obj).__name__} to the program")


class Remote:
    """An object that lives in the program's process. It has no equality but identity
    and no truth value, so it can never stand in for an expected value."""

    __slots__ = ("_h", "_link", "_type")

    def __init__(self, link: Link, index: int, type_name: str) -> None:
        self._link, self._h, self._type = link, index, type_name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._link.request(
            {
                "op": "call",
                "h": self._h,
                "a": wire.encode(list(args), _arg_handle),
                "k": wire.encode(kwargs, _arg_handle),
            }
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._link.request({"op": "getattr", "h": self._h, "n": name})

    def __iter__(self) -> Any:
        return iter(self._link.request({"op": "iter", "h": self._h}))

    def __len__(self) -> int:
        n = self._link.request({"op": "len", "h": self._h})
        if type(n) is not int:
            raise TypeError("len() of a program object is not an int")
        return n

    def __bool__(self) -> bool:
        raise TypeError(f"a {self._type} from the program has no truth value here")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<program {self._type}>"


def run(job: core.Frame, priv: core.Privileges, channel: core.Channel) -> int:
    core.stay_on_this_cpu()
    parent_sock, child_sock = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    if os.fork() == 0:
        try:
            parent_sock.close()
            # The program half must never read the tests (fd 0) or write records (fd 3).
            core.detach_stdin()
            core.close_fds_except(0, 1, 2, child_sock.fileno())
            priv.drop_untrusted()
            program = job.get("program")
            _serve(job, program if type(program) is CodeType else None, child_sock)
            sys.stdout.flush()
        finally:
            os._exit(0)
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
    names the tests read from the program (`reads`) and their code objects (`code`,
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
    prepared = {**tests, "reads": names.global_reads(sources), "code": code}
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


def _setup(tests: core.Frame) -> Any:
    """What runs before the tests, in their namespace: assert tests' `setup`, or the
    helpers a check takes from the task's prompt. The names it binds are the tests' own,
    never the program's (`names.global_reads`)."""
    return tests.get("helpers") if tests["kind"] == "check" else tests.get("setup")


def _run_tests(
    job: core.Frame, tests: core.Frame, sources: list[tuple[str, str]], link: Link, channel: core.Channel
) -> None:
    timeout_s = float(job["timeout_s"])
    ns = _load(link, timeout_s, channel, tests, sources)
    if ns is None:
        return
    compiled = tests.get("code")
    thunks = [_runs(pair, compiled[i] if type(compiled) is list else None, ns) for i, pair in enumerate(sources)]
    if _setup(tests):
        setup, thunks = thunks[0], thunks[1:]
        failure = _one(-1, setup, timeout_s, channel, quiet=True)
        if failure is not None:
            channel.write({"load": "error", "e": f"test setup failed: {failure}"})
            return
    for index, thunk in enumerate(thunks):
        if _one(index, thunk, timeout_s, channel) is not None and job.get("stop_on_failure"):
            break


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
    if type(ready) is not dict or type(ready.get("ready")) is not dict:
        error = ready.get("load_error", "bad hello") if type(ready) is dict else "bad hello"
        channel.write({"load": "error", "e": str(error)[:2000]})
        return None
    channel.write({"load": "ok"})
    try:
        reads = tests.get("reads")
        return names.test_namespace(
            ready["ready"],
            lambda v: wire.decode(v, link.proxy),
            tests.get("entry_point"),
            sources,
            reads if type(reads) is list else None,
        )
    except (ValueError, TypeError, KeyError, RecursionError):
        channel.write({"load": "error", "e": "malformed hello from program"})
        return None


def _one(
    index: int, thunk: Callable[[], None], timeout_s: float, channel: core.Channel, quiet: bool = False
) -> str | None:
    """Run one test under its time limit and record (unless `quiet`) how it went: None
    if it passed, else what went wrong."""
    record: core.Record = {"i": index, "s": "pass"}
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
    if not quiet:
        channel.write(record)
    return None if record["s"] == "pass" else str(record.get("e", record["s"]))
