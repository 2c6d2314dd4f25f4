"""What each test of a ground truth is, as atoms (`atoms`), for `literals`: a *probe*
holds the test's input in each form a program may key its answer by (the whole input; a
stdin's first or last line; a sized argument's length) and its expected output."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from rlvr.verifiers.code.atoms import atoms, code_text, node_atoms

__all__ = [
    "MAX_SIZE_FORMS",
    "Probe",
    "assert_probes",
    "call_probe",
    "compare_probe",
    "expression_atoms",
    "expression_probe",
    "text_probe",
    "value_probe",
]

# A call test's sized arguments whose lengths are forms of its input (`call_probe`).
MAX_SIZE_FORMS = 2

# A test as the atoms of its input, in each form a program may key it by (the whole
# input first; a stdin's first or last line), and of its expected output, in order.
Probe = tuple[tuple[list[str], ...], list[str]]


def assert_probes(sources: Iterable[str]) -> list[Probe]:
    """The probe of each comparing `assert` in `sources`' statements (`check` functions
    included): its left side's literals as the input, the compared values' as the output."""
    probes: list[Probe] = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                probes.extend(compare_probe(c) for c in ast.walk(node.test) if isinstance(c, ast.Compare))
    return probes


def compare_probe(node: ast.Compare) -> Probe:
    expected = [atom for side in node.comparators for atom in node_atoms(side)]
    return (node_atoms(node.left), *_sizes(_literal_arguments(node.left))), expected


def call_probe(arguments: object, expected: object) -> Probe:
    """A call test's probe: its arguments, then each sized argument's length."""
    given = arguments if isinstance(arguments, list) else [arguments]
    return (atoms(code_text(arguments)), *_sizes(given)), atoms(code_text(expected))


def _sizes(arguments: list[object]) -> list[list[str]]:
    """The length of each sized argument, a form a program may key its answers by
    (`{11: 'world hello'}[len(s)]`), the first `MAX_SIZE_FORMS`."""
    sized = [argument for argument in arguments if isinstance(argument, str | list | tuple | dict)]
    return [[str(len(argument))] for argument in sized[:MAX_SIZE_FORMS]]


def _literal_arguments(node: ast.expr) -> list[object]:
    """The literal arguments of the call `node` is (a test's `f('hello world')`)."""
    if not isinstance(node, ast.Call):
        return []
    found: list[object] = []
    for argument in node.args:
        try:
            found.append(ast.literal_eval(argument))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return found


def expression_atoms(source: str) -> list[str]:
    """The atoms of an expression source's literals (a values test's call)."""
    try:
        return node_atoms(ast.parse(source, mode="eval"))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []


def text_probe(given: str, expected: str) -> Probe:
    """A stdin test's probe: the whole input, then its first and its last line, each a
    form a program may special-case the test by."""
    lines = [line for line in given.splitlines() if line.strip()]
    forms = [atoms(given)] + [atoms(line) for line in (lines[:1] + lines[-1:] if len(lines) > 1 else [])]
    return tuple(forms), atoms(expected)


def value_probe(source: str, expected: object) -> Probe:
    """A values test's probe: its call's literals and sized arguments' lengths, and the
    expected value."""
    try:
        call = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ([],), atoms(code_text(expected))
    return (node_atoms(call), *_sizes(_literal_arguments(call))), atoms(code_text(expected))


def expression_probe(source: str) -> Probe | None:
    """The probe of a comparison expression's source (a HumanEval check's assert); None
    for another shape."""
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return compare_probe(tree.body) if isinstance(tree.body, ast.Compare) else None
