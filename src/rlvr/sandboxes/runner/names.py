"""The namespace a split job's tests run in (`rlvr.sandboxes.runner.split`), and
which of the names they read come from the program.

The rule. A global name a test reads and does not bind itself (found with `symtable`,
in every scope) comes from, in this order:

1. the entry point: the program's, whatever its name (a builtin's, a module's, a
   pre-import's). A check names it (`entry_point`); an assert suite's is the function
   its asserts are about (`assert_entry`);
2. the test half's own builtins;
3. a module of the standard library (or numpy, pandas) the test half has: its own
   copy, a program's `math` is never the tests';
4. the tests' pre-imports (`TESTS_ENVIRONMENT`: the public names of typing,
   collections, itertools, functools, heapq, bisect, string and math, and those
   modules and `re`, `copy`, `operator` by name, as LeetCode-style judges bind them;
   `np` and `pd` for numpy and pandas where the test half has them): MBPP's tests read
   `Counter`, `isclose`, `pi` or `List` because its reference solutions imported them,
   and a program that defines its own `Counter` must not choose what a test expects;
5. else the program, if it has the name (`Node`, `Pair`, a constant): such a name is
   one the program could redefine, and the verifier reports it (`untrusted_names`).

Names the tests bind themselves (their imports, a suite's `setup`, the helpers a
check takes from the task's prompt) are theirs before any of these.

An assert suite's entry point is read from its tests alone, never from the program:
of the names its `assert` statements call (`f(...)`) that none of 2-4 gives, the one
called outermost (not inside another such call's arguments) in the most asserts, the
first on a tie; where the asserts call none, the same over all its statements, the
last on a tie (`head = build(xs)`, `head = reverse(head)`, then asserts on `head`); where
there is still none, the pre-import its asserts call innermost on the tested (left)
side of their comparisons, else anywhere (`assert gcd(4, 6) in (2,)` tests the
program's `gcd`; `assert lcm(4, 6) == 24 // gcd(4, 6)` tests `lcm`, never `gcd`, which
computes the expected value; `isclose(area(2), 12.56)` tests `area`).

`from solution import f`, `import solution` and `from solution import *` get a
`solution` module made here from the program's names (never one from disk); `*`
takes no builtin and no pre-import but the entry point.
"""

from __future__ import annotations

import ast
import builtins
import symtable
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from rlvr.sandboxes.runner import preludes

SOLUTION_MODULE = "solution"
# The judge's pre-imports the tests find bound (`preludes.ENVIRONMENTS`), and the
# conventional aliases of modules the tests may read without importing them.
TESTS_ENVIRONMENT = "leetcode"
MODULE_ALIASES = {"np": "numpy", "pd": "pandas"}

_ABSENT = object()


def test_namespace(
    names: dict[str, Any],
    decode: Callable[[Any], Any],
    entry: str | None,
    sources: list[tuple[str, str]],
    reads: list[str] | None = None,
) -> dict[str, Any]:
    """The globals the tests (`sources`) run in: `names` are the program's top-level
    names as sent (wire data), `decode` turns one into the test half's value, `entry`
    is the entry point (a check's, or an assert suite's `assert_entry`; None if it has
    none). A `solution` module holds the program's names. `reads`, if the trusted
    client found them already, are `global_reads(sources)`."""
    ns: dict[str, Any] = {}
    for name in reads if reads is not None else global_reads(sources):
        if name == entry:
            # Never a trusted stand-in: a program without its entry point fails.
            if name in names:
                ns[name] = decode(names[name])
            elif trusted_value(name) is not _ABSENT:
                ns[name] = _Undefined(name)
            continue
        value = trusted_value(name)
        if value is _ABSENT and name in names:
            value = decode(names[name])
        if value is not _ABSENT and value is not getattr(builtins, name, _ABSENT):
            ns[name] = value
    if any(SOLUTION_MODULE in source for source, _ in sources):  # `from solution import f` binds no `solution`
        _install_solution(names, decode, ns, entry)
    return {"__name__": "__test__", "__builtins__": builtins, **ns}


class _Undefined:
    """The entry point where the program has none (and a builtin or pre-import of its
    name would answer instead): any use is the NameError the test would have met."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NameError(f"name {self._name!r} is not defined by the program")

    def __getattr__(self, attr: str) -> Any:
        raise NameError(f"name {self._name!r} is not defined by the program")

    def __bool__(self) -> bool:
        raise NameError(f"name {self._name!r} is not defined by the program")


def trusted_value(name: str) -> Any:
    """What a trusted source (2-4 of the module's rule) binds `name` to in the test
    half, or `_ABSENT`."""
    if name in vars(builtins):
        return vars(builtins)[name]
    module = _own_module(name) if _trusted_module_name(name) else None
    if module is not None:
        return module
    value = _environment().get(name, _ABSENT)
    if value is not _ABSENT:
        return value
    alias = MODULE_ALIASES.get(name)
    module = _own_module(alias) if alias is not None else None
    return module if module is not None else _ABSENT


def is_trusted(name: str, is_module: Callable[[str], bool] | None = None) -> bool:
    """Whether a trusted source (2-4) gives `name`; `is_module` says whether the test
    half has a module (by default, whether this process has it)."""
    has = is_module or has_module
    if name in vars(builtins) or name in _environment():
        return True
    if _trusted_module_name(name) and has(name):
        return True
    alias = MODULE_ALIASES.get(name)
    return alias is not None and has(alias)


def _trusted_module_name(name: str) -> bool:
    """A module the tests may read without importing it (3 of the rule): one of the
    standard library's, or of the packages the aliases name. Any other module a test
    half could find (an installed `build` or `tree`) is no name a test reads unimported:
    there the program's function of that name is meant."""
    return name in sys.stdlib_module_names or name in MODULE_ALIASES.values()


def _environment() -> dict[str, Any]:
    """The pre-imports' bindings (cached by `preludes`, so shared with the zygote)."""
    return preludes.builtins_for(TESTS_ENVIRONMENT)


def untrusted_reads(
    sources: list[tuple[str, str]],
    entry: str | None,
    reads: list[str] | None = None,
    is_module: Callable[[str], bool] | None = None,
) -> list[str]:
    """The names the tests read that only the program can give them besides the entry
    point `entry` (5 of the rule), sorted."""
    wanted = reads if reads is not None else global_reads(sources)
    return [name for name in wanted if name != entry and not is_trusted(name, is_module)]


def assert_entry(sources: list[tuple[str, str]], is_module: Callable[[str], bool] | None = None) -> str | None:
    """An assert suite's entry point (see the module's docstring), or None."""
    trees = list(_parsed(sources))
    bound = _global_names(sources)[1]

    def program(name: str) -> bool:
        return name not in bound and not is_trusted(name, is_module)

    def pre_import(name: str) -> bool:
        return name not in bound and name in _environment() and name not in vars(builtins)

    asserts: list[ast.AST] = [node.test for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    statements: list[ast.AST] = [node for tree in trees for node in tree.body]
    for nodes, wanted, outermost in (
        (asserts, program, True),
        (statements[::-1], program, True),
        ([_tested_side(test) for test in asserts], pre_import, False),
        (asserts, pre_import, False),
    ):
        found = _most_called(nodes, wanted, outermost)
        if found is not None:
            return found
    return None


def _tested_side(test: ast.AST) -> ast.AST:
    """The side of an assert's comparison that holds the call under test: the left one
    (`assert f(x) == expected`), where the expected side may call a pre-import of its
    own (`assert lcm(4, 6) == 24 // gcd(4, 6)` tests `lcm`; `gcd` stays the tests')."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return test.left if isinstance(test, ast.Compare) else test


def _parsed(sources: list[tuple[str, str]]) -> Iterator[ast.Module]:
    for source, _ in sources:
        try:
            yield ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # that test fails on its own when it is compiled to run


def _most_called(nodes: list[ast.AST], wanted: Callable[[str], bool], outermost: bool) -> str | None:
    """Of the `wanted` names called by name in `nodes`, the one called outermost (or
    innermost) in the most of them, the first seen on a tie."""
    counts: dict[str, int] = {}
    for node in nodes:
        for name in dict.fromkeys(_calls(node, wanted, outermost)):
            counts[name] = counts.get(name, 0) + 1
    return max(counts, key=lambda name: counts[name]) if counts else None


def _calls(node: ast.AST, wanted: Callable[[str], bool], outermost: bool) -> list[str]:
    """The `wanted` names called in `node`, outermost: not inside the arguments of
    another such call; innermost: with no other such call inside their arguments."""
    found: list[str] = []
    for child in ast.iter_child_nodes(node):
        found += _calls(child, wanted, outermost)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and wanted(node.func.id):
        if outermost:
            return [node.func.id]
        if not found:
            return [node.func.id]
    return found


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


def has_module(name: str) -> bool:
    """Whether this process (the test half) has a module `name` of its own (on its checked sys.path).
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
    if not has_module(name):
        return None
    try:
        return __import__(name)
    except Exception:
        return None


def _install_solution(
    names: dict[str, Any], decode: Callable[[Any], Any], ns: dict[str, Any], entry: str | None
) -> None:
    """`import solution` in the tests: a module of the program's names, made here (the
    test half never looks for it on disk). It holds no name of a module the test half
    has, and `*` takes no builtin and no pre-import but the entry point."""
    module = ModuleType(SOLUTION_MODULE)
    public = []
    for name, value in names.items():
        if name != entry and _trusted_module_name(name) and has_module(name):
            continue
        setattr(module, name, ns[name] if name == entry and name in ns else decode(value))
        if not name.startswith("_") and (name == entry or not is_trusted(name)):
            public.append(name)
    module.__all__ = public  # type: ignore[attr-defined]
    sys.modules[SOLUTION_MODULE] = module
