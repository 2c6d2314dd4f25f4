"""Python jobs whose expectations stay outside the sandbox.

- ``call``: call `fn_name(*args)` for each input, record the returned value.
- ``values``: evaluate each expression (the left side of `assert EXPR == LITERAL`; the
  literal never comes in), record the value.
- ``stdio``: run the program once per input in a fresh fork, record its stdout.

In all three the program runs in this very process (no second fork: that is what
makes a run cost one fork of the zygote). It may forge records, but a record only says
what value it produced, and the grader compares that with what it alone knows.
Python tests that must run in here (``split``) are in `rlvr.sandboxes.runner.split`,
which compiles its program with this module.
"""

from __future__ import annotations

import atexit
import builtins
import functools
import io
import sys
import traceback
from builtins import str, type  # noqa: UP029  (see `core`)
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import CodeType
from typing import Any

from rlvr.sandboxes.runner import audit, core, names, preludes, wire
from rlvr.sandboxes.runner.foreign import foreign_type
from rlvr.sandboxes.runner.inputs import Inputs, Steps, job_inputs

# The modes `run` handles; `split` jobs carry a Python program too (`precompile`).
MODES = ("call", "values", "stdio")
PROGRAM_MODES = (*MODES, "split")
COMPILE_ERRORS = (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError)
# What the trusted client compiles (`precompile`); anything bigger compiles inside the
# job, under its limits. CPython's compiler is superlinear on some shapes (300 KB of
# f-string took 7 s; 16 KB of nested lambdas 0.5 s) and deep nesting has crashed it;
# under these caps it takes milliseconds. Nested lambdas are the one deep nesting that
# neither the tokenizer (200 brackets, 100 indents) nor the parser's stack stops soon.
PRECOMPILE_MAX_CHARS = 16 * 1024
PRECOMPILE_MAX_LAMBDAS = 64
COMPILED_EXPRS_ENTRIES = 256
# What the runners of Python jobs read (here and in `split`); `precompile` sends no more.
PYTHON_JOB_KEYS = frozenset(
    {
        "mode", "timeout_s", "stop_on_failure", "max_output", "environment",
        "code", "program", "prelude", "prelude_program",
        "exprs", "compiled_exprs", "expr_reads", "fn_name", "inputs", "input_sizes", "steps",
    }
)  # fmt: skip


def compile_source(source: str, filename: str, mode: str = "exec") -> CodeType:
    # dont_inherit: the program must not get this module's `from __future__` flags.
    return compile(source, filename, mode, dont_inherit=True)


def precompile(job: core.Frame) -> core.Record | None:
    """Compile a Python job's program (and its test expressions) in the trusted client,
    before the job is sent: compiling allocates a lot, and in a freshly forked job
    every page it touches is a copy. The code objects travel in the marshalled job.
    Returns the load-error record, with no job to run, if the program does not compile.
    Compiling runs none of the program's code. A program past the caps above is sent
    as source and compiled in the job."""
    if job.get("mode") not in PROGRAM_MODES or type(job.get("code")) is not str:
        return None
    code = job["code"]
    if len(code) <= PRECOMPILE_MAX_CHARS and code.count("lambda") <= PRECOMPILE_MAX_LAMBDAS:
        try:
            job["program"] = compile_source(code, "solution.py")
        except COMPILE_ERRORS as exc:
            return {"load": "error", "e": core.describe(exc)}
    if job["mode"] == "values":
        job["compiled_exprs"] = _compiled_exprs(tuple(job["exprs"]))
        job["expr_reads"] = _expr_reads(tuple(job["exprs"]))
    if type(job.get("prelude")) is str:
        job["prelude_program"] = _compiled_prelude(job["prelude"])
    _keep_only_what_runs(job)
    return None


def _keep_only_what_runs(job: core.Frame) -> None:
    """Leave out of a Python job what its runner never reads (the native toolchains and
    limits the verifier sends every job, the source once it is compiled): each object
    the freshly forked job unmarshals writes, and so copies, more of its pages."""
    for key in [key for key in job if key not in PYTHON_JOB_KEYS]:
        del job[key]
    if type(job.get("program")) is CodeType:
        del job["code"]


# The frame's keys that hold a call or values job's tests' inputs, which go apart from
# it, one frame per test (`inputs.Steps`); a values test's, as the tuple `ValuesTest`.
STEP_KEYS = {"call": ("inputs",), "values": ("exprs", "compiled_exprs", "expr_reads")}


def steps_apart(job: core.Frame) -> list[bytes] | None:
    """Take a call or values job's tests' inputs out of its frame, in place, and return
    them, a frame each, for the client to send one at a time (`inputs.Steps`); None,
    the frame untouched, for any other job."""
    keys = STEP_KEYS.get(job.get("mode"))  # type: ignore[arg-type]
    columns: list[Sequence[Any] | None] = [job.get(key) for key in keys or ()]
    first = columns[0] if columns else None
    if type(first) not in (list, tuple):
        return None
    assert first is not None
    count = len(first)
    if any(column is not None and (type(column) not in (list, tuple) or len(column) != count) for column in columns):
        return None
    for key in keys or ():
        job.pop(key, None)
    job["steps"] = count
    if len(columns) == 1:
        return [core.frame(item) for item in first]
    return [core.frame(tuple(None if c is None else c[i] for c in columns)) for i in range(count)]


@functools.lru_cache(maxsize=COMPILED_EXPRS_ENTRIES)
def _expr_reads(exprs: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The global names each test expression reads (`_values` checks them)."""
    return tuple(tuple(names.global_reads([(expr, f"test_{index}")])) for index, expr in enumerate(exprs))


@functools.lru_cache(maxsize=COMPILED_EXPRS_ENTRIES)
def _compiled_prelude(prelude: str) -> CodeType | None:
    try:
        return compile_source(prelude, "prelude.py")
    except COMPILE_ERRORS:
        return None  # compiled again in the job, which reports the error


@functools.lru_cache(maxsize=COMPILED_EXPRS_ENTRIES)
def _compiled_exprs(exprs: tuple[str, ...]) -> tuple[CodeType | None, ...]:
    """The test expressions' code objects (None where one does not compile: the job
    compiles it again and reports the error). Cached: the G responses to one prompt
    share their tests; a tuple, so no job can change what the next one gets."""
    compiled: list[CodeType | None] = []
    for index, expr in enumerate(exprs):
        try:
            compiled.append(compile_source(expr, f"test_{index}", "eval"))
        except COMPILE_ERRORS:
            compiled.append(None)
    return tuple(compiled)


class SetupFailed(Exception):
    """The job's trusted prelude raised: the task's fault, not the program's."""


def load_failure(exc: BaseException) -> str:
    """A load record's `e` for an exception raised while loading the program."""
    return str(exc) if type(exc) is SetupFailed else core.describe(exc)


def program_namespace(job: core.Frame, name: str) -> dict[str, Any]:
    """The globals the program runs in: its module name, its builtins (Python's, and
    those of the job's `environment`: `preludes`) and what the job's trusted `prelude`
    source binds (a HumanEval prompt's imports and helpers, as its harness runs prompt
    + completion). The program may rebind any of them."""
    environment = job.get("environment")
    own_builtins = preludes.builtins_for(environment) if type(environment) is str else builtins
    ns = core.module_namespace(name, "solution.py", own_builtins)
    prelude = job.get("prelude")
    if type(prelude) is str and prelude:
        compiled = job.get("prelude_program")
        try:
            exec(compiled if type(compiled) is CodeType else compile_source(prelude, "prelude.py"), ns)
        except Exception as exc:
            raise SetupFailed(f"test setup failed: {core.describe(exc)}") from None
    return ns


def compile_program(job: core.Frame, channel: core.Channel) -> CodeType | None:
    program = job.get("program")
    if type(program) is CodeType:
        return program
    try:
        return compile_source(job["code"], "solution.py")
    except BaseException as exc:
        channel.write({"load": "error", "e": core.describe(exc)})
        return None


def run(job: core.Frame, priv: core.Privileges, channel: core.Channel) -> int:
    priv.drop_untrusted()
    # A stdio job's inputs follow its frame: read before the program's first line. A
    # call or values job's come one at a time, each as its test is due (`inputs.Steps`).
    inputs = job_inputs(job) if job["mode"] == "stdio" else None
    steps = Steps(job["steps"]) if "steps" in job else None
    core.detach_stdin()
    channel.accept()
    program = compile_program(job, channel)
    if program is None:
        return 0
    if inputs is not None:
        return _stdio(job, program, inputs, channel)
    core.set_alarm_handler()
    try:
        with core.TimeLimit(float(job["timeout_s"])):
            ns = program_namespace(job, "solution")
            if job.get("watch", True):
                audit.watch(lambda found: channel.write({"a": found}), builtins, ns["__builtins__"])
            exec(program, ns)
    except MemoryError:
        channel.write({"load": "memory", "e": "MemoryError while loading the program"})
        return core.EXIT_MEMORY
    except BaseException as exc:
        channel.write({"load": "timeout" if isinstance(exc, core.TestTimeout) else "error", "e": load_failure(exc)})
        return 0
    channel.write(_with_evidence({"load": "ok"}))
    if job["mode"] == "call":
        _call(job, ns, channel, job["inputs"] if steps is None else steps)
    else:
        _values(job, ns, channel, _inline_exprs(job) if steps is None else steps)
    _flush(sys.stdout)
    found = audit.drain(final=True)
    if found:
        channel.write({"a": found})
    return 0


def _with_evidence(record: core.Record) -> core.Record:
    """`record` with what the audit hook noted since the last record (`audit`)."""
    found = audit.drain()
    if found:
        record["a"] = found
    return record


def _flush(stream: Any) -> bool:
    """Flush what the program left as one of `sys`'s streams (it may have replaced it
    with anything); whether that went through."""
    try:
        stream.flush()
    except BaseException:
        return False
    return True


def resolve(ns: dict[str, Any], name: str) -> Any:
    """`fn_name` as APPS/LiveCodeBench mean it: a top-level function, or a method of
    the conventional `Solution` class."""
    if name in ns:
        return ns[name]
    cls = ns.get("Solution")
    if cls is not None and hasattr(cls, name):
        return getattr(cls(), name)
    raise NameError(f"the program defines no {name!r} (nor Solution.{name})")


def _timed(index: int, timeout_s: float, fn: Callable[..., Any], args: Sequence[Any], channel: core.Channel) -> None:
    """Call `fn(*args)`, one test, under its time limit and record the value it returns.
    The value is encoded inside the limit too: reading a numpy value runs code the
    program may have replaced."""
    try:
        with core.TimeLimit(timeout_s):
            record = _value_record(index, fn(*args))
    except core.TestTimeout:
        record = {"i": index, "s": "timeout"}
    except MemoryError:
        record = {"i": index, "s": "memory"}
    except BaseException as exc:
        record = {"i": index, "s": "error", "e": core.describe(exc)}
    channel.write(_with_evidence(record))


def _value_record(index: int, value: Any) -> core.Record:
    try:
        record: core.Record = {"i": index, "s": "ok", "v": wire.encode(value)}
    except (wire.Unsupported, ValueError, RecursionError) as exc:
        record = {"i": index, "s": "unsupported", "e": str(exc)[:200]}
    custom = foreign_type(value)
    if custom is not None:
        record["c"] = custom
    return record


def _call(job: core.Frame, ns: dict[str, Any], channel: core.Channel, inputs: Iterable[Any]) -> None:
    timeout_s = float(job["timeout_s"])
    try:
        fn = resolve(ns, job["fn_name"])
    except BaseException as exc:
        channel.write({"load": "error", "e": core.describe(exc)})
        return
    for index, args in enumerate(inputs):
        _timed(index, timeout_s, fn, args, channel)


# A values test as it comes: its expression, code object (None: compiled here) and the
# global names it reads (None: found here).
ValuesTest = tuple[str, CodeType | None, tuple[str, ...] | None]


def _inline_exprs(job: core.Frame) -> Iterator[ValuesTest]:
    """A values job's tests from its own frame (one sent whole: see `inputs.Steps`)."""
    exprs = job["exprs"]
    compiled = job.get("compiled_exprs") or [None] * len(exprs)
    reads = job.get("expr_reads")
    for index, expr in enumerate(exprs):
        yield expr, compiled[index], reads[index] if type(reads) is tuple else None


def _values(job: core.Frame, ns: dict[str, Any], channel: core.Channel, tests: Iterable[ValuesTest]) -> None:
    """Evaluate each test expression in the program's globals, as they are when it runs.
    A name it reads must be the program's or a real builtin: the program's builtins
    hold its environment's names too, which no test may take for the program's."""
    timeout_s = float(job["timeout_s"])
    real = vars(builtins)
    for index, (expr, code, reads) in enumerate(tests):
        wanted = reads if type(reads) is tuple else names.global_reads([(expr, f"test_{index}")])
        missing = [name for name in wanted if name not in ns and name not in real]
        if missing:
            channel.write({"i": index, "s": "error", "e": f"NameError: name {missing[0]!r} is not defined"})
            continue
        if type(code) is not CodeType:
            try:
                code = compile_source(expr, f"test_{index}", "eval")
            except SyntaxError as exc:
                channel.write({"i": index, "s": "error", "e": core.describe(exc)})
                continue
        _timed(index, timeout_s, eval, (code, ns), channel)


def _stream(fd: int, mode: str) -> io.TextIOWrapper:
    raw = io.FileIO(fd, mode, closefd=False)
    binary = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    stream = io.TextIOWrapper(binary, encoding="utf-8")
    stream.mode = mode  # type: ignore[misc]  # as open() sets it: fast-I/O templates read it
    return stream


_print_exc = traceback.print_exc
_run_exitfuncs = atexit._run_exitfuncs


def shut_down() -> None:
    """What the interpreter does at exit and `os._exit` skips (`core.hard_exit`): wait for the program's
    threads (`threading.Thread(target=main).start()`, the large-stack idiom, is never
    joined) and run its `atexit` functions. Their errors are printed, as Python does."""
    threading = sys.modules.get("threading")
    try:
        if threading is not None:
            threading._shutdown()
    except BaseException:
        _print_exc()
    try:
        _run_exitfuncs()
    except BaseException:
        _print_exc()


def _stdio(job: core.Frame, program: CodeType, inputs: Inputs | list[bytes], channel: core.Channel) -> int:
    def target() -> None:
        # New streams on fds 0 and 1: the runner's may hold buffered data of its own.
        # `sys.__stdin__` keeps the program's stdin alive, as Python's does, where a
        # program that rewraps it (`io.TextIOWrapper(sys.stdin.buffer)`) drops the
        # first wrapper, whose close would close the buffer they share.
        sys.__stdin__ = sys.stdin = _stream(0, "r")  # type: ignore[misc]  # Final to typeshed, not to Python
        out = sys.stdout = _stream(1, "w")
        atexit._clear()  # the program's own handlers only
        code = 0
        try:
            ns = core.module_namespace("__main__", "solution.py")
            if job.get("watch", True):
                audit.watch(_evidence_out, builtins)
            exec(program, ns)
        except SystemExit as exc:
            code = 0 if exc.code is None or exc.code == 0 else 1
        except MemoryError:
            code = core.EXIT_MEMORY
        except BaseException:
            _print_exc()
            code = 1
        shut_down()
        for stream in {id(s): s for s in (sys.stdout, out, sys.__stdout__) if s is not None}.values():
            if not _flush(stream):
                code = code or 1
        _flush(sys.stderr)
        _evidence_out(audit.drain(final=True))
        core.hard_exit(code)

    cap = int(job["max_output"])
    # The runner waits while each input's process runs: one CPU for both saves a
    # wakeup of the other CPU per input and output.
    core.stay_on_this_cpu()
    # Closed to the tests' processes: its memory holds the inputs (`inputs.Inputs`).
    core.undumpable()
    for index in range(len(inputs)):
        result = core.run_child(target, inputs[index], float(job["timeout_s"]), cap, extra_fd3=True)
        # Nothing of this test's run works on while the next one runs.
        core.end_strays()
        found = audit.parse(result.pop("chan", ""))
        channel.write({"i": index, **result, **({"a": found} if found else {})})
    return 0


def _evidence_out(found: list[str]) -> None:
    """A stdio program's evidence, out on its fd 3 (a pipe of its own, read by the
    runner: `audit.parse`)."""
    if found:
        try:
            core.write_all(audit.EVIDENCE_FD, ("\n".join(found) + "\n").encode())
        except OSError:
            pass
