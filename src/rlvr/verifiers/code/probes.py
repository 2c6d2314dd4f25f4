"""What each test of a ground truth is, as atoms (`atoms`), for `literals`: a *probe*
holds the test's input in each form a program may key its answer by (the whole input; a
stdin's first or last line; a sized argument's length) and its expected output."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from rlvr.verifiers.code.atoms import atoms, code_text, node_atoms

__all__ = [
    "MAX_CASES",
    "MAX_SIZE_FORMS",
    "Probe",
    "assert_probes",
    "call_probe",
    "case_probes",
    "compare_probe",
    "expression_atoms",
    "expression_probe",
    "text_probe",
    "value_probe",
]

# Of a call test's arguments, how many stand alone as forms of its input, and how many
# sized ones' lengths (`_call_forms`).
MAX_SIZE_FORMS = 2
# The most cases a stdin test is split into (`case_probes`).
MAX_CASES = 256

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
    return _call_forms(node_atoms(node.left), _literal_arguments(node.left)), expected


def call_probe(arguments: object, expected: object) -> Probe:
    """A call test's probe: its arguments, then each one's own forms (`_call_forms`)."""
    given = arguments if isinstance(arguments, list) else [arguments]
    return _call_forms(atoms(code_text(arguments)), given), atoms(code_text(expected))


def _call_forms(whole: list[str], arguments: list[object]) -> tuple[list[str], ...]:
    """A call's input forms: all its arguments' atoms; then, as a program may key its
    answers by part of them (`{9: [0, 1]}[target]`, `{3: 9}[a[0]]`,
    `{11: 'world hello'}[len(s)]`), each numeric argument of several alone, the first
    atom where it is a number, and each sized argument's length, the first
    `MAX_SIZE_FORMS` of each kind."""
    parts = [atoms(code_text(argument)) for argument in arguments[:MAX_SIZE_FORMS]] if len(arguments) > 1 else []
    if len(whole) > 1:
        parts.append(whole[:1])
    # Words alone are a vocabulary's (a planet's name beside the next ones in its table).
    numeric = [part for part in parts if part and all(_numeric(atom) for atom in part)]
    sized = [argument for argument in arguments if isinstance(argument, str | list | tuple | dict)]
    lengths = [[str(len(argument))] for argument in sized[:MAX_SIZE_FORMS]]
    return (whole, *numeric, *lengths)


def _numeric(atom: str) -> bool:
    return atom.lstrip("-")[:1].isdigit()


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


def case_probes(given: str, expected: str) -> list[Probe]:
    """A stdin test of several cases (a count `T` on its first line, then `T` cases of
    as many lines each, and one output line per case), as one probe per case, each case
    whole: a program may key its answers by case inside its loop over them
    (`{6: 4, 12: 6}[n]`). No probe for a test of another shape."""
    lines = [line for line in given.splitlines() if line.strip()]
    outputs = [line for line in expected.splitlines() if line.strip()]
    count = lines[0].strip() if lines else ""
    if not count.isdigit() or not 1 <= int(count) <= MAX_CASES or len(outputs) != int(count):
        return []
    cases, extra = divmod(len(lines) - 1, int(count))
    if cases == 0 or extra:
        return []
    # Each case whole: its first line alone (`5` of `5 / Timur`) is shared by many cases.
    return [
        ((atoms(" ".join(lines[1 + index * cases : 1 + (index + 1) * cases])),), atoms(output))
        for index, output in enumerate(outputs)
    ]


def text_probe(given: str, expected: str) -> Probe:
    """A stdin test's probe: the whole input, then its first and its last line, and its
    first two atoms where they span lines (a size and the first value: `if (n == 6 &&
    a[0] == 10)`), each a form a program may special-case the test by."""
    lines = [line for line in given.splitlines() if line.strip()]
    whole = atoms(given)
    forms = [whole] + [atoms(line) for line in (lines[:1] + lines[-1:] if len(lines) > 1 else [])]
    if len(whole) > 2 and len(forms) > 1 and len(forms[1]) == 1:
        forms.append(whole[:2])
    return tuple(forms), atoms(expected)


def value_probe(source: str, expected: object) -> Probe:
    """A values test's probe: its call's literals and sized arguments' lengths, and the
    expected value."""
    try:
        call = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ([],), atoms(code_text(expected))
    return _call_forms(node_atoms(call), _literal_arguments(call)), atoms(code_text(expected))


def expression_probe(source: str) -> Probe | None:
    """The probe of a comparison expression's source (a HumanEval check's assert); None
    for another shape."""
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return compare_probe(tree.body) if isinstance(tree.body, ast.Compare) else None
