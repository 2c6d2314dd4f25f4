"""Python jobs whose expectations stay outside the sandbox.

- ``call``: call `fn_name(*args)` for each input, record the returned value.
- ``values``: evaluate each expression (the left side of `assert EXPR == LITERAL`; the
  literal never comes in), record the value.
- ``stdio``: run the program once per input in a fresh fork, record its stdout.
- ``split``: tests that must run in here; see `sandboxes.runner.split`.

In the first three the program runs in this very process (no second fork: that is what
makes a run cost one fork of the zygote). It may forge records, but a record only says
what value it produced, and the grader compares that with what it alone knows.
"""

from __future__ import annotations

import _signal
import builtins
import io
import os
import signal
import sys
import traceback
from types import CodeType
from typing import Any

from rlvr.sandboxes.runner import core, wire

MAX_ERROR_CHARS = 2000


class TestTimeout(BaseException):
    """Raised by SIGALRM at a test's timeout (best effort: the program can catch it; the
    backend's wall deadline for the whole job is the real bound)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise TestTimeout()


def set_alarm_handler() -> None:
    # The C-level call: `signal.signal` maps the old handler to an enum, which touches
    # (and so copies) pages of the enum machinery in every freshly forked job.
    _signal.signal(_signal.SIGALRM, _on_alarm)


def describe(exc: BaseException) -> str:
    try:
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    except BaseException:
        text = type(exc).__name__
    return text[-MAX_ERROR_CHARS:]


def _detach_stdin() -> None:
    # fd 0 carried the job; the program gets an empty stdin instead.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


PYTHON_MODES = ("call", "values", "stdio", "split")
COMPILE_ERRORS = (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError)


def compile_source(source: str, filename: str, mode: str = "exec") -> CodeType:
    # dont_inherit: the program must not get this module's `from __future__` flags.
    return compile(source, filename, mode, dont_inherit=True)


def precompile(job: dict[str, Any]) -> dict[str, Any] | None:
    """Compile a Python job's program (and its test expressions) in the trusted client,
    before the job is sent: compiling allocates a lot, and in a freshly forked job
    every page it touches is a copy. The code objects travel in the marshalled job.
    Returns the load-error record, with no job to run, if the program does not compile.
    Compiling runs none of the program's code."""
    if job.get("mode") not in PYTHON_MODES or type(job.get("code")) is not str:
        return None
    try:
        job["program"] = compile_source(job["code"], "solution.py")
    except COMPILE_ERRORS as exc:
        return {"load": "error", "e": describe(exc)}
    if job["mode"] == "values":
        compiled: list[CodeType | None] = []
        for index, expr in enumerate(job["exprs"]):
            try:
                compiled.append(compile_source(expr, f"test_{index}", "eval"))
            except COMPILE_ERRORS:
                compiled.append(None)  # compiled (and reported) in the job, as before
        job["compiled_exprs"] = compiled
    return None


def compile_program(job: dict[str, Any], channel: core.Channel) -> CodeType | None:
    program = job.get("program")
    if type(program) is CodeType:
        return program
    try:
        return compile_source(job["code"], "solution.py")
    except BaseException as exc:
        channel.write({"load": "error", "e": describe(exc)})
        return None


def run(job: dict[str, Any], priv: core.Privileges, channel: core.Channel) -> int:
    if job["mode"] == "split":
        from rlvr.sandboxes.runner import split

        return split.run(job, priv, channel)
    priv.drop_untrusted()
    _detach_stdin()
    program = compile_program(job, channel)
    if program is None:
        return 0
    if job["mode"] == "stdio":
        return _stdio(job, program, channel)
    ns: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
    set_alarm_handler()
    try:
        signal.setitimer(signal.ITIMER_REAL, float(job["timeout_s"]))
        exec(program, ns)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except MemoryError:
        channel.write({"load": "memory", "e": "MemoryError while loading the program"})
        return core.EXIT_MEMORY
    except BaseException as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        channel.write({"load": "timeout" if isinstance(exc, TestTimeout) else "error", "e": describe(exc)})
        return 0
    channel.write({"load": "ok"})
    if job["mode"] == "call":
        _call(job, ns, channel)
    else:
        _values(job, ns, channel)
    sys.stdout.flush()
    return 0


def resolve(ns: dict[str, Any], name: str) -> Any:
    """`fn_name` as APPS/LiveCodeBench mean it: a top-level function, or a method of
    the conventional `Solution` class."""
    if name in ns:
        return ns[name]
    cls = ns.get("Solution")
    if cls is not None and hasattr(cls, name):
        return getattr(cls(), name)
    raise NameError(f"the program defines no {name!r} (nor Solution.{name})")


def _timed(index: int, timeout_s: float, thunk: Any, channel: core.Channel) -> None:
    try:
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        value = thunk()
        signal.setitimer(signal.ITIMER_REAL, 0)
    except TestTimeout:
        channel.write({"i": index, "s": "timeout"})
        return
    except MemoryError:
        signal.setitimer(signal.ITIMER_REAL, 0)
        channel.write({"i": index, "s": "memory"})
        return
    except BaseException as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        channel.write({"i": index, "s": "error", "e": describe(exc)})
        return
    try:
        channel.write({"i": index, "s": "ok", "v": wire.encode(value)})
    except (wire.Unsupported, ValueError, RecursionError) as exc:
        channel.write({"i": index, "s": "unsupported", "e": str(exc)[:200]})


def _call(job: dict[str, Any], ns: dict[str, Any], channel: core.Channel) -> None:
    timeout_s = float(job["timeout_s"])
    try:
        fn = resolve(ns, job["fn_name"])
    except BaseException as exc:
        channel.write({"load": "error", "e": describe(exc)})
        return
    for index, args in enumerate(job["inputs"]):
        _timed(index, timeout_s, lambda args=args: fn(*args), channel)


def _values(job: dict[str, Any], ns: dict[str, Any], channel: core.Channel) -> None:
    timeout_s = float(job["timeout_s"])
    compiled = job.get("compiled_exprs") or [None] * len(job["exprs"])
    for index, expr in enumerate(job["exprs"]):
        code = compiled[index]
        if type(code) is not CodeType:
            try:
                code = compile_source(expr, f"test_{index}", "eval")
            except SyntaxError as exc:
                channel.write({"i": index, "s": "error", "e": describe(exc)})
                continue
        _timed(index, timeout_s, lambda code=code: eval(code, ns), channel)


def _stdio(job: dict[str, Any], program: CodeType, channel: core.Channel) -> int:
    cap = int(job["max_output"])

    def target() -> None:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
        out = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
        sys.stdout = out
        code = 0
        try:
            exec(program, {"__name__": "__main__", "__builtins__": builtins})
        except SystemExit as exc:
            code = 0 if exc.code is None or exc.code == 0 else 1
        except MemoryError:
            code = core.EXIT_MEMORY
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            out.flush()
        except BaseException:
            code = code or 1
        sys.stderr.flush()
        os._exit(code)

    for index, text in enumerate(job["inputs"]):
        result = core.run_child(target, text.encode(), float(job["timeout_s"]), cap)
        channel.write({"i": index, **result})
    return 0
