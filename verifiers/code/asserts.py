"""Assert tests whose expected values can stay out of the sandbox: each becomes an
expression the program's process evaluates (values mode), and a literal the grader
compares its value with.

`assert EXPR == LITERAL` (either side) is one such test. So is a HumanEval `check` whose
every statement is `assert candidate(LITERALS) == LITERAL` (or `assert True`, or a
docstring), in a test module that holds nothing else but `check` and literal
assignments (`METADATA = {...}`): about 87% of HumanEval. Such a check runs in one
process, where `split` needs two and a socket round trip per call.
"""

from __future__ import annotations

import ast
from typing import Any

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
            return ast.unparse(expr), value
    return None


def check_calls(test: str, entry_point: str) -> tuple[list[str], list[Any]] | None:
    """A HumanEval test module as calls of `entry_point` (expression sources) and the
    values they must equal; None unless every statement of `check` has that shape."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    checks = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "check"]
    others = [node for node in tree.body if node not in checks]
    if len(checks) != 1 or not all(_inert(node) for node in others):
        return None
    candidate = _only_parameter(checks[0])
    if candidate is None:
        return None
    exprs: list[str] = []
    expected: list[Any] = []
    for statement in checks[0].body:
        if _docstring(statement) or _assert_true(statement):
            continue
        call = _call_equals_literal(statement, candidate)
        if call is None:
            return None
        args, value = call
        exprs.append(f"{entry_point}({', '.join(args)})")
        expected.append(value)
    return (exprs, expected) if exprs else None


def _inert(node: ast.stmt) -> bool:
    """A top-level statement that binds or does nothing the check can depend on."""
    if _docstring(node):
        return True
    return (
        isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets) and _literal(node.value)[0]
    )


def _docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _assert_true(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assert) and isinstance(node.test, ast.Constant) and node.test.value is True


def _only_parameter(check: ast.FunctionDef) -> str | None:
    a = check.args
    if check.decorator_list or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults:
        return None
    return a.args[0].arg if len(a.args) == 1 else None


def _call_equals_literal(node: ast.stmt, candidate: str) -> tuple[list[str], Any] | None:
    """`assert candidate(LITERALS) == LITERAL` (either side, any message): the
    arguments' sources and the literal's value."""
    if not isinstance(node, ast.Assert):
        return None
    sides = _equality(node.test)
    if sides is None:
        return None
    for call, lit in (sides, sides[::-1]):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == candidate):
            continue
        if call.keywords or not all(isinstance(arg, ast.expr) and _literal(arg)[0] for arg in call.args):
            continue
        if any(isinstance(arg, ast.Starred) for arg in call.args):
            continue
        ok, value = _literal(lit)
        if ok:
            return [ast.unparse(arg) for arg in call.args], value
    return None
