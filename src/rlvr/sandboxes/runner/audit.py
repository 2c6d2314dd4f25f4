"""Runtime evidence for the code verifier's signals: a PEP 578 audit hook in each
process that runs a graded Python program, which notes what the program reached for
however its source spelt it (`getattr(os, '_ex' + 'it')`, `'/' + 'etc'`).

What it notes is named by the signal it supports (`EXIT`, `TAMPERING`, `DENIED`) and
goes out in records' `a` field. It runs in the program's own process, where the
program could forge or silence it: it is telemetry, never part of a verdict, and it
decides nothing about what the program may do (the sandbox's walls do that).

An audit hook stays for the life of its process, so `watch` is called once, in the
job's process, after the runner's own setup and right before the program's first line.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sys

# Bound at import, before any program runs in this process (see `wire`).
from builtins import BaseException, frozenset, getattr, isinstance, len, list, set, str, tuple, type, vars  # noqa: UP029
from collections.abc import Callable, Iterator
from typing import Any

EXIT = "exit_before_tests"
# Where a stdio program's process writes what it noted (a pipe of its own).
EVIDENCE_FD = 3
TAMPERING = "harness_tampering"
DENIED = "sandbox_denied"
NAMES = frozenset((EXIT, TAMPERING, DENIED))
# The program's own source files, as the runner compiles them.
PROGRAM_FILES = frozenset(("solution.py", "prelude.py", "main.py"))
_RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))
_PACKAGE_DIR = os.path.dirname(os.path.dirname(_RUNNER_DIR))
# Host places a graded program has no business reading or listing. /proc/self and the
# standard streams' device nodes are its own.
_HOST_ROOTS = ("/etc", "/root", "/home", "/proc", "/sys", "/var", "/run", "/boot", "/srv", "/mnt", "/media", "/dev")
_OWN_PATHS = (
    "/proc/self",
    "/proc/thread-self",
    "/dev/null",
    "/dev/zero",
    "/dev/std",
    "/dev/fd",
    "/dev/urandom",
    "/dev/random",
    "/dev/shm",
)
_PATH_EVENTS = frozenset(
    (
        "open",
        "os.listdir",
        "os.scandir",
        "os.chdir",
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.link",
        "os.symlink",
        "os.utime",
        "glob.glob",
        "shutil.rmtree",
        "shutil.copyfile",
        "shutil.move",
    )
)
_REACH_EVENTS = frozenset(
    (
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.sendto",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.cdata",
        "ctypes.string_at",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "subprocess.Popen",
        "pty.spawn",
    )
)
_TAMPER_EVENTS = frozenset(
    (
        "sys._current_frames",
        "sys.settrace",
        "sys.setprofile",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys.addaudithook",
        "code.__new__",
        "function.__new__",
    )
)
_FRAME_ATTRS = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame", "__code__"))
_TEST_FILES = ("test_", "test.py", "setup.py")
_KILL_EVENTS = frozenset(("os.kill", "os.killpg", "signal.pthread_kill"))
# The builtins tests compare and convert with, whose rebinding `drain(final=True)`
# notes. Not all of them: reading a value writes its reference count, and in a freshly
# forked job every object touched costs a copied page.
WATCHED_BUILTINS = (
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "enumerate",
    "float",
    "frozenset",
    "getattr",
    "hash",
    "int",
    "isinstance",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "print",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "zip",
    "__import__",
)
# Taken here, at import in the process jobs are forked from: what a job's `watch` does
# first costs it copied pages (each object read writes its reference count).
_BUILTIN_VALUES = {key: vars(builtins)[key] for key in WATCHED_BUILTINS}
# Where the interpreter and its libraries live (under /root on a pyenv host): reading
# them is importing.
_PYTHON_DIRS = tuple(
    place.rstrip("/") + "/"
    for place in (sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path)
    if type(place) is str and place.startswith("/") and place != "/"
)
# Bound here: the program may rebind these module attributes.
_getframe = sys._getframe
_getpid = os.getpid
_fspath = os.fspath
_join = os.path.join
_normpath = os.path.normpath
_getcwd = os.getcwd

_EVENTS = frozenset(
    (
        *_PATH_EVENTS,
        *_REACH_EVENTS,
        *_KILL_EVENTS,
        *_TAMPER_EVENTS,
        "sys._getframe",
        "object.__getattr__",
        "object.__setattr__",
    )
)
_found: set[str] = set()
_fresh: list[str] = []
_state = {"on": False, "busy": False, "paused": False}
_on_exit: list[Callable[[list[str]], None]] = []
_watched: list[dict[str, Any]] = []


def watch(on_exit: Callable[[list[str]], None] | None = None, *namespaces: Any) -> None:
    """Start noting, in this process, from here on. `on_exit` gets the evidence at once
    when the program signals its own process (it may never write a record again);
    `namespaces` are builtins (modules or dicts) whose names the program must not rebind,
    checked by `drain(final=True)` (the module table is left to the code's reading: a
    copy of it, compared twice a job, costs more than the signal is worth)."""
    if _state["paused"]:
        return
    if on_exit is not None:
        _on_exit.append(on_exit)
    for space in namespaces:
        names = space if isinstance(space, dict) else vars(space)
        if all(names is not kept for kept in _watched):
            _watched.append(names)
    if not _state["on"]:
        _state["on"] = True
        sys.addaudithook(_hook)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No `watch` within: for the zygote's warm-up, which runs jobs' code in the
    process every job is forked from (a hook there would be every job's)."""
    _state["paused"] = True
    try:
        yield
    finally:
        _state["paused"] = False


def drain(final: bool = False) -> list[str]:
    """The signals noted since the last drain. With `final`, also whether the program
    rebound a builtin (a dict walk: at the load and the end of a job, not per test).
    Nothing where the process was never watched."""
    if not _state["on"]:
        return []
    if final and TAMPERING not in _found and _rebound():
        _note(TAMPERING)
    if not _fresh:
        return []
    fresh = list(_fresh)
    _fresh.clear()
    return fresh


def parse(text: str) -> list[str]:
    """The evidence a stdio program's process wrote on `EVIDENCE_FD`: known names only,
    since the program holds that pipe too."""
    lines = text.split("\n")
    return [name for name in (EXIT, TAMPERING, DENIED) if name in lines]


def take(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """The records without their evidence (`a`), and the evidence: known names only,
    since the program may write records of its own."""
    kept: list[dict[str, Any]] = []
    found: set[str] = set()
    for record in records:
        if "a" not in record:
            kept.append(record)
            continue
        names = record["a"]
        if type(names) is list:
            found.update(name for name in names[:8] if type(name) is str and name in NAMES)
        rest = {key: value for key, value in record.items() if key != "a"}
        if rest:
            kept.append(rest)
    return kept, frozenset(found)


def _rebound() -> bool:
    """Whether a builtin a test uses has another value now. Compared by identity with
    the values taken at import (no `id()`: each call of it is an audit event)."""
    for names in _watched:
        try:
            if any(names.get(key, value) is not value for key, value in _BUILTIN_VALUES.items()):
                return True
        except BaseException:
            return True
    return False


def _note(signal: str) -> None:
    if signal not in _found:
        _found.add(signal)
        _fresh.append(signal)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    # Most events (imports, compiles, `exec`) are none of these: one set lookup each.
    if event not in _EVENTS or _state["busy"]:
        return
    _state["busy"] = True
    try:
        signal = _judge(event, args)
        if signal is not None and _by_program(_getframe(1)):
            _note(signal)
            if signal == EXIT:
                for report in _on_exit:
                    report(drain())
    except BaseException:
        pass
    finally:
        _state["busy"] = False


def _judge(event: str, args: tuple[Any, ...]) -> str | None:
    """The signal an event is evidence for, if any."""
    if event in _PATH_EVENTS:
        return _path_signal(args[0] if args else None) or (_path_signal(args[1]) if len(args) > 1 else None)
    if event in _REACH_EVENTS:
        return DENIED
    if event in _KILL_EVENTS:
        return _kill_signal(event, args)
    if event in _TAMPER_EVENTS:
        return TAMPERING
    if event == "sys._getframe":
        return TAMPERING if args and _harness_frame(args[0]) else None
    if event == "object.__getattr__" and len(args) > 1 and args[1] in _FRAME_ATTRS:
        if args[1] == "__code__" and not _foreign_target(args[0], "__code__"):
            return None
        return TAMPERING if _from_program(_getframe(2)) else None
    if event == "object.__setattr__" and len(args) > 1:
        return TAMPERING if _foreign_target(args[0], args[1]) else None
    return None


def _path_signal(path: Any) -> str | None:
    if isinstance(path, int) or path is None:
        return None
    text = _fspath(path)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if type(text) is not str:
        return None
    full = _normpath(text if text.startswith("/") else _join(_getcwd(), text))
    if full.startswith(_PACKAGE_DIR + "/"):
        return TAMPERING
    if full.startswith(_PYTHON_DIRS):
        return None
    if full == "/" and not text.startswith("/tmp"):
        return DENIED
    if full.startswith(_OWN_PATHS) or full.startswith(f"/proc/{_getpid()}/"):
        return None
    if any(full == root or full.startswith(root + "/") for root in _HOST_ROOTS):
        return DENIED
    return None


def _kill_signal(event: str, args: tuple[Any, ...]) -> str | None:
    if len(args) < 2 or args[1] == 0:
        return None
    if event == "signal.pthread_kill":
        return EXIT
    pid = args[0]
    own = _getpid()
    return EXIT if pid in (0, own, -own) or (event == "os.killpg" and pid in (0, own)) else DENIED


def _harness_frame(frame: Any) -> bool:
    """A frame of the runner or of a test, as the program should never hold one."""
    filename = str(frame.f_code.co_filename)
    return filename.startswith((_RUNNER_DIR, *_TEST_FILES))


def _by_program(frame: Any) -> bool:
    """Whether the program's code (not the runner's) caused the event: the nearest
    caller in the program or the runner, past the standard library's frames."""
    while frame is not None:
        filename = str(frame.f_code.co_filename)
        if filename in PROGRAM_FILES or filename.startswith(_TEST_FILES):
            return True
        if filename.startswith(_PACKAGE_DIR):
            return False
        frame = frame.f_back
    return False


def _from_program(frame: Any) -> bool:
    return frame is not None and frame.f_code.co_filename in PROGRAM_FILES


def _foreign_target(target: Any, name: Any) -> bool:
    """The program sets the code of a function it did not write, or an attribute of a
    built-in or runner class (libraries set their own classes' attributes: namedtuple's
    `__module__`)."""
    if name == "__code__":
        code = getattr(target, "__code__", None)
        return code is not None and str(code.co_filename) not in PROGRAM_FILES
    module = getattr(target, "__module__", None)
    return type(target) is type and type(module) is str and (module == "builtins" or module.startswith("rlvr"))
