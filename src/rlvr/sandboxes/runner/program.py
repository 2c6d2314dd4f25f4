"""``program`` jobs: run one program as a user wrote it (SandboxFusion's `run_code`),
with its files, its stdin, and its stdout, stderr, exit code and time reported back.

The job holds `language` (python, cpp, javascript), `code`, `stdin`, `files` (relative
path -> bytes, written under the job's private /tmp, its working directory),
`fetch_files` (paths read back after the run: relative, or under /tmp or /mnt), `compile_timeout_s`,
`run_timeout_s`, `memory_mb`, `max_output`, `max_fetch_bytes` and the toolchains
(`gxx`, `node`). Records, one per step:

- ``{"step": "compile", "s", "code", "out", "t"}`` (cpp; `out` merges the compiler's
  stdout and stderr),
- ``{"step": "run", "s", "code", "out", "err", "t"}``,
- ``{"file": path, "b64": content}`` for each fetched file that exists.

`s` is `run_child`'s status (ok, error, memory, timeout, output_limit); `t` is wall
seconds. The program runs in a child whose only fds are its stdin, stdout and stderr,
so it cannot write records; it can only make its own run fail.

A Python program with no files to fetch runs as the job's own process instead
(`runs_as_job`), which costs one fork less: its run record is `IN_JOB_RECORD`, written
before its first line, and the run itself is what the sandbox saw of the job
(`rlvr.sandboxes.program_steps`).
"""

from __future__ import annotations

import atexit
import io
import linecache
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import NoReturn

from rlvr.sandboxes.runner import core, native, pch, python

MODES = ("program",)
WORKDIR = "/tmp"
SCRATCH_ALIAS = "/mnt"
SOURCE = {"cpp": "/tmp/main.cpp", "javascript": "/tmp/main.js"}
# SandboxFusion's C++ standard, which programs written for its API expect.
RUN_CODE_STD = "c++17"
# The record a program run as the job itself (`runs_as_job`) has for its run step: the
# client reads the run from the job's own outputs and exit.
IN_JOB_RECORD: core.Record = {"step": "run", "in_job": True}
# Python's own exit code where flushing stdout or stderr at exit fails.
EXIT_FLUSH_FAILED = 120


# Words of a program that may start processes or signal itself, which runs under the
# runner. Its run ends once no process holds its output, as with `python main.py | ...`,
# where the job's own process is its PID namespace's init, whose end ends every other
# process of the job; and that init is kept from signals it sends itself and does not
# handle (`os.kill(os.getpid(), 9)` would return).
PROCESS_WORDS = (
    "fork", "subprocess", "system", "popen", "spawn", "multiprocessing", "ProcessPool", "pty",
    "kill", "signal", "abort",
)  # fmt: skip


def runs_as_job(language: str, fetch_files: list[str], code: str) -> bool:
    """Whether the program runs as the job's own process (see `_as_job`): Python with no
    files to fetch after it (what needs a trusted process to outlive it), and that
    starts no process and signals none by any of the usual names."""
    return language == "python" and not fetch_files and not any(word in code for word in PROCESS_WORDS)


def run(job: core.Frame, priv: core.Privileges, channel: core.Channel) -> int:
    priv.drop_untrusted()
    if runs_as_job(job["language"], job["fetch_files"], job["code"]):
        try:
            stdin = core.stdin_file(job["stdin"].encode())
        except OSError:
            stdin = -1  # past the job's file size limit: the runner pipes it in
        if stdin >= 0:
            _as_job(job, stdin, channel)
    core.detach_stdin()
    channel.accept()
    _restore(job["files"])
    target = _prepare(job, channel)
    if target is not None:
        started = time.monotonic()
        result = core.run_child(
            target, job["stdin"].encode(), float(job["run_timeout_s"]), int(job["max_output"]), extra_fd3=True
        )
        result["err"] = result.pop("chan", "")
        t = time.monotonic() - started
        # Nothing of the run (a daemon it left) changes the files fetched below.
        core.end_strays()
        channel.write({"step": "run", **result, "t": t})
    _fetch(job["fetch_files"], int(job["max_fetch_bytes"]), channel)
    return 0


def _as_job(job: core.Frame, stdin: int, channel: core.Channel) -> NoReturn:
    """Run the program in this process, with the job's own stdout and stderr, the
    sandbox's, and its stdin on fd 0; never returns. The channel closes first: the
    program writes no record, and its run is what the trusted client sees of the job
    (its outputs, exit and time), so there is nothing in here it could forge. One fork
    per run instead of two."""
    os.dup2(stdin, 0)
    os.close(stdin)
    channel.accept()
    _restore(job["files"])
    channel.write(IN_JOB_RECORD)
    target = _python(job["code"], as_job=True)
    core.close_fds_except(0, 1, 2)
    target()
    core.hard_exit(0)  # `target` ends the process itself


def _restore(files: dict[str, bytes]) -> None:
    for path, content in files.items():
        full = _inside(path)
        if full is None:
            continue  # the service refuses such paths; never write outside the workdir
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(content)


def _inside(path: str) -> str | None:
    """Where `path` is in the job's filesystem, if it is in its working directory: a
    relative path is, and an absolute one under /tmp or /mnt (the jobs' root makes /mnt
    an alias of /tmp, where SandboxFusion's programs write their scratch files)."""
    full = os.path.normpath(os.path.join(WORKDIR, path))
    if full.startswith(SCRATCH_ALIAS + "/"):
        full = WORKDIR + full[len(SCRATCH_ALIAS) :]
    return full if full.startswith(WORKDIR + "/") else None


def _prepare(job: core.Frame, channel: core.Channel) -> Callable[[], None] | None:
    """What the run's child does: exec the program (compiled first for cpp); None when
    compilation failed (its record says why)."""
    language = job["language"]
    if language == "python":
        return _python(job["code"])
    with open(SOURCE[language], "w") as f:
        f.write(job["code"])
    if language == "javascript":
        # The code verifier's node flags: its heap, not the address space, bounds its memory.
        return _stderr_on_fd3(native._exec(native._node_argv(job, SOURCE[language]), None))
    started = time.monotonic()
    compile_argv = pch.compile_argv(job["gxx"], RUN_CODE_STD, SOURCE[language], "/tmp/main")
    step = core.run_child(
        native._exec(compile_argv, None, merge_stderr=True),
        b"",
        float(job["compile_timeout_s"]),
        native.MAX_COMPILE_OUTPUT,
    )
    channel.write({"step": "compile", **step, "t": time.monotonic() - started})
    if step["s"] != "ok":
        return None
    return _stderr_on_fd3(native._exec(["/tmp/main"], int(job["memory_mb"])))


def _stderr_on_fd3(target: Callable[[], None]) -> Callable[[], None]:
    """`target` with its stderr on fd 3, which `run_child` reads apart from stdout."""

    def with_stderr() -> None:
        os.dup2(3, 2)
        os.close(3)
        target()

    return with_stderr


# Bound at import: the program may rebind what `os`, `sys` and `traceback` hold (see
# `core.hard_exit`), and what reports its exit must still work.
_print_exception = traceback.print_exception


def _python(code: str, as_job: bool = False) -> Callable[[], None]:
    """Run the program in this process, as `python main.py` would: its directory first
    on the import path (a `helper.py` sent in `files` imports), exit code from
    SystemExit, a traceback on stderr and exit code 1 for an uncaught exception, its
    threads and `atexit` functions done before it ends. In `run_child`'s child its
    stderr is fd 3; `as_job`, the job's own."""

    def target() -> None:
        if not as_job:
            os.dup2(3, 2)
            os.close(3)
        # Kept alive by `sys.__stdin__`, as Python's is (see `python._stdio`).
        sys.__stdin__ = sys.stdin = io.TextIOWrapper(  # type: ignore[misc]  # Final to typeshed only
            io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8"
        )
        # And `sys.__stdout__` is what a program that restores its stdout gets back.
        out = sys.__stdout__ = sys.stdout = _writer(1)  # type: ignore[misc]
        err = sys.__stderr__ = sys.stderr = _writer(2)  # type: ignore[misc]
        sys.argv = ["main.py"]
        atexit._clear()  # the program's own handlers only
        # This process runs the program alone (no trusted code imports after it).
        sys.path.insert(0, WORKDIR)
        # Tracebacks quote the program's lines, as they would from the file.
        linecache.cache["main.py"] = (len(code), None, code.splitlines(True), "main.py")
        status = 0
        try:
            program = compile(code, "main.py", "exec", dont_inherit=True)
            exec(program, core.module_namespace("__main__", "main.py"))
        except SystemExit as exc:
            status = _exit_status(exc)
        except MemoryError:
            status = core.EXIT_MEMORY
        except BaseException as exc:
            # Without this frame, the traceback reads as `python main.py` would print it.
            frames = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
            try:
                _print_exception(type(exc), exc, frames)
            except BaseException:
                pass  # the program broke what prints it (its own stderr): exit 1 says enough
            status = 1
        python.shut_down()
        if not _flushed((sys.stdout, sys.stderr, out, err)):
            status = status or EXIT_FLUSH_FAILED
        core.hard_exit(status)

    return target


def _writer(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)), encoding="utf-8")


def _flushed(streams: tuple[object, ...]) -> bool:
    """Flush each open stream of `streams` once, as Python does at exit; whether all went
    through (the program may have put anything in `sys.stdout`)."""
    ok = True
    for stream in {id(s): s for s in streams if s is not None}.values():
        try:
            if not stream.closed:  # type: ignore[attr-defined]
                stream.flush()  # type: ignore[attr-defined]
        except BaseException:
            ok = False
    return ok


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _fetch(paths: list[str], budget: int, channel: core.Channel) -> None:
    for path in paths:
        full = _inside(path)
        if full is None or not os.path.isfile(full):
            continue
        with open(full, "rb") as f:
            content = f.read(budget + 1)
        if len(content) > budget:
            break  # past the budget the rest are not fetched
        budget -= len(content)
        channel.write({"file": path, "b64": _base64(content)})


def _base64(content: bytes) -> str:
    # Imported here, by the few jobs that fetch files (see `wire._base64`).
    import base64

    return base64.b64encode(content).decode("ascii")
