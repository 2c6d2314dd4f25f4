"""Assert tests whose expected values can stay out of the sandbox: each becomes an
expression the program's process evaluates (values mode), and a literal the grader
compares its value with.

`assert EXPR == LITERAL` (either side) is one such test. So is a HumanEval `check` whose
every assert holds one call of the candidate with constant arguments, inside pure
operations the grader can judge on the returned value (`rlvr.verifiers.code.pure`):
`candidate(3 * 5) == [3, 5]`, `not candidate('x')`, `abs(candidate(1.5) - 0.5) < 1e-6`,
`tuple(candidate([1])) == (1,)`. Its other statements may only be docstrings,
`assert True` or a bare builtin name; the module around it, only `check` and literal
assignments (`METADATA = {...}`). That is about 96% of HumanEval. Such a check runs in
one process, where `split` needs two and a socket round trip per call.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import Any

from rlvr.verifiers.code import pure

LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except LITERAL_ERRORS:
        return False, None


def _equality(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        return node.left, node.comparators[0]
    return None


def split_assert(test: str) -> tuple[str, Any] | None:
    """`assert EXPR == LITERAL` as (EXPR source, literal value); None for any other shape."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    sides = _equality(tree.body[0].test)
    if sides is None:
        return None
    for expr, lit in (sides, sides[::-1]):
        ok, value = _literal(lit)
        if ok:
            return None if _judges_in_the_program(expr) else (ast.unparse(expr), value)
    return None


# Builtins whose answer the program's objects choose (`__class__`, `__instancecheck__`).
_INTROSPECTION = frozenset(("isinstance", "issubclass"))


def _judges_in_the_program(expr: ast.expr) -> bool:
    """Whether EXPR itself decides a comparison (`(f(2) == 4) == True`, `f(3) in [6]`)
    or a type check. In values mode EXPR runs in the program's process, where the
    program's `__eq__`, `__contains__` or `__class__` answer it: only the value it
    produces crosses to the grader. Such a test goes to split mode, where it runs in
    the trusted half, on copies of the program's values."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Compare):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _INTROSPECTION:
            return True
    return False


def check_calls(test: str, entry_point: str) -> tuple[list[str], list[pure.Judged]] | None:
    """A HumanEval test module as calls of `entry_point` (expression sources, one per
    assert) and the judgements of their values; None unless every statement of
    `check` has a shape the module's docstring names."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    checks = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "check"]
    others = [node for node in tree.body if node not in checks]
    if len(checks) != 1 or not all(_inert(node) for node in others):
        return None
    candidate = _only_parameter(checks[0])
    # The grader calls its own functions by name: none of those names may mean
    # something else in the check (its parameter, the program's entry point, or a
    # global the module binds). Nor may the module rebind `check`, the entry point or a
    # dunder (`__builtins__`), which would make the check fail whatever the program.
    reserved = {*pure.FUNCTIONS, "check", entry_point}
    bound = _bound(others)
    if candidate is None or candidate in pure.FUNCTIONS or entry_point in pure.FUNCTIONS:
        return None
    if bound & reserved or any(name.startswith("__") for name in bound):
        return None
    exprs: list[str] = []
    judgements: list[pure.Judged] = []
    for statement in checks[0].body:
        if _docstring(statement) or _assert_true(statement) or _bare_builtin(statement):
            continue
        if not isinstance(statement, ast.Assert):
            return None
        try:
            call, items, judgement = pure.judged(statement.test, _candidate_call(candidate))
        except pure.Unsupported:
            return None
        source = f"{entry_point}({', '.join(ast.unparse(arg) for arg in call.args)})"
        exprs.append(f"[*{source}]" if items else source)
        judgements.append(judgement)
    return (exprs, judgements) if exprs else None


def _candidate_call(candidate: str) -> Callable[[ast.Call], bool]:
    """Whether a call is the program's: the candidate, with constant arguments."""

    def is_call(node: ast.Call) -> bool:
        named = isinstance(node.func, ast.Name) and node.func.id == candidate
        return named and not node.keywords and all(pure.constant(arg) for arg in node.args)

    return is_call


def _bound(statements: list[ast.stmt]) -> set[str]:
    """The names the module's top-level assignments bind."""
    return {
        t.id for node in statements if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)
    }


def _inert(node: ast.stmt) -> bool:
    """A top-level statement that binds or does nothing the check can depend on."""
    if _docstring(node):
        return True
    return (
        isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets) and _literal(node.value)[0]
    )


def _docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


# Builtins that `site` adds and jobs do not have (the zygote runs without `site`, and
# adds only `exit` and `quit`).
_SITE_BUILTINS = frozenset(("copyright", "credits", "license", "help"))


def _bare_builtin(node: ast.stmt) -> bool:
    """A statement that only names a builtin (HumanEval/129's `print`): it does nothing."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Name)):
        return False
    return hasattr(builtins, node.value.id) and node.value.id not in _SITE_BUILTINS


def _assert_true(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assert) and isinstance(node.test, ast.Constant) and node.test.value is True


def _only_parameter(check: ast.FunctionDef) -> str | None:
    a = check.args
    if check.decorator_list or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults or check.returns:
        return None
    # An annotation is evaluated when `check` is defined (and may raise).
    return a.args[0].arg if len(a.args) == 1 and a.args[0].annotation is None else None
