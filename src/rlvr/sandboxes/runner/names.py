"""The namespace a split job's tests run in (`rlvr.sandboxes.runner.split`): their own
builtins and imports, and of the program's top-level names exactly those the test
format says come from the program.

A test sees a program name where it reads it as a global and does not bind it itself
(found with `symtable`, in every scope), unless it is a builtin or names a module the
test half has itself (then it gets its own copy: a program's `math` is never the
tests' `math`). The entry point always comes from the program, whatever its name.
`from solution import f`, `import solution` and `from solution import *` get a
`solution` module made here from the program's names (never one from disk); `*`
takes no builtin.
"""

from __future__ import annotations

import builtins
import symtable
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

SOLUTION_MODULE = "solution"


def test_namespace(
    names: dict[str, Any],
    decode: Callable[[Any], Any],
    entry: str | None,
    sources: list[tuple[str, str]],
    reads: list[str] | None = None,
) -> dict[str, Any]:
    """The globals the tests (`sources`) run in: `names` are the program's top-level
    names as sent (wire data), `decode` turns one into the test half's value, `entry`
    is the entry point. A `solution` module holds the program's names. `reads`, if
    the trusted client found them already, are `global_reads(sources)`."""
    own = set(vars(builtins))
    program: dict[str, Any] = {}
    for name in reads if reads is not None else global_reads(sources):
        if name not in names or (name in own and name != entry):
            continue
        module = None if name == entry else _own_module(name)
        program[name] = module if module is not None else decode(names[name])
    if any(SOLUTION_MODULE in source for source, _ in sources):  # `from solution import f` binds no `solution`
        _install_solution(names, decode, program)
    return {"__name__": "__test__", "__builtins__": builtins, **program}


def global_reads(sources: list[tuple[str, str]]) -> list[str]:
    """The module-level names the tests read and do not bind themselves, sorted."""
    wanted, bound = _global_names(sources)
    return sorted(wanted - bound)


def _global_names(sources: list[tuple[str, str]]) -> tuple[set[str], set[str]]:
    """The module-level names the code reads, and those it binds itself."""
    wanted: set[str] = set()
    bound: set[str] = set()
    for source, filename in sources:
        try:
            table = symtable.symtable(source, filename, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # that test fails on its own when it is compiled to run
        _scan(table, wanted, bound, top=True)
    return wanted, bound


def _scan(table: symtable.SymbolTable, wanted: set[str], bound: set[str], top: bool) -> None:
    for sym in table.get_symbols():
        name = sym.get_name()
        if (top or sym.is_global()) and sym.is_referenced():
            wanted.add(name)
        if (top or sym.is_declared_global()) and (sym.is_assigned() or sym.is_imported() or sym.is_namespace()):
            bound.add(name)
    for child in table.get_children():
        _scan(child, wanted, bound, top=False)


def _is_module(name: str) -> bool:
    """Whether the test half has a module `name` of its own (on its checked sys.path).
    Asks the import system's finders directly: `importlib.util` is not loaded in the
    zygote, and importing it would cost every split job."""
    if name in sys.modules:
        return True
    for finder in sys.meta_path:
        try:
            if finder.find_spec(name, None) is not None:
                return True
        except Exception:
            continue
    return False


def _own_module(name: str) -> Any:
    """The test half's own module `name`, or None if it has none."""
    if not _is_module(name):
        return None
    try:
        return __import__(name)
    except Exception:
        return None


def _install_solution(names: dict[str, Any], decode: Callable[[Any], Any], program: dict[str, Any]) -> None:
    """`import solution` in the tests: a module of the program's names, made here (the
    test half never looks for it on disk). It holds no name of a module the test half
    has, and `*` takes no builtin."""
    module = ModuleType(SOLUTION_MODULE)
    public = []
    for name, value in names.items():
        if _is_module(name):
            continue
        setattr(module, name, program[name] if name in program else decode(value))
        if not name.startswith("_") and name not in vars(builtins):
            public.append(name)
    module.__all__ = public  # type: ignore[attr-defined]
    sys.modules[SOLUTION_MODULE] = module
