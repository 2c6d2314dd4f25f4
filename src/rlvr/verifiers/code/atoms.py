"""A program's literals read in order, for `literals`: numbers, and the words and numbers
inside its strings (comments and docstrings left out), each as what it stands for
(`folding`), into one stream of atoms.

Each atom also carries where it sits: its *box* (the table, list or function body that
holds it; the stream knows which boxes are tables of data) and whether it is a *key* (a
dict key, a value compared for equality, a `case`) rather than a value, so that a rule
can ask how much of one table the tests' answers make up (`Indexed`). Every scan is one
pass of a linear regular expression or of CPython's parser.
"""

from __future__ import annotations

import ast
import json
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rlvr.verifiers.code import folding

__all__ = [
    "MAX_ANCHORS",
    "MAX_INT_BITS",
    "MIN_BOX_ATOMS",
    "Indexed",
    "Stream",
    "atoms",
    "code_text",
    "docstring",
    "holds_data_string",
    "literal_atoms",
    "node_atoms",
    "read",
]

# Of the places a run may start at (its first atom's, from the lowest allowed), how many
# are tried: a table of one repeated atom would otherwise be tried at every place.
MAX_ANCHORS = 64
MAX_INT_BITS = 4096
# A box is read as a table of what was found only if it holds this many of its atoms.
MIN_BOX_ATOMS = 3
# An array is read as the text it spells (`_join_sequence`) only if its numbers are this
# short: a character code has at most three digits.
MAX_CODE_DIGITS = 3
_INTEGER = re.compile(r"-?\d{1,18}")
# A minus is a sign only where no word or number runs into it (`4-6` is 4 and 6).
_ATOM = re.compile(r"(?:(?<![\w.])-)?\d+(?:\.\d+)?|[^\W\d_]\w*")
# Literals of a C-like program, in order: comments, directives other than `#define` and
# a line's self-check (`assert(...)`, `console.assert(...)`) skipped; strings, numbers,
# and the brackets that open and close a box. Each alternative consumes what it matches without
# backtracking into it, and an unclosed string runs to its line's end rather than failing
# to be retried: linear. A C++ raw string (`R"(...)"`) may span lines. A number compared
# by order (`x >= 90`) is a threshold, not a key: it is consumed and read as nothing
# (`<<`, `=>` and `->` are not comparisons). So is an index read (`a[0] == 10`), as in
# Python; an index written (`m[5] = 7`) keys a table. A JavaScript object's unquoted key
# (`{III: 3}`) is a literal of its own.
_C_LIKE = re.compile(
    r"//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/)?|#(?![ \t]*define\b)[^\n]*"
    r"|\b(?:console\.)?assert\w*(?:\.\w+)?[ \t]*\([^\n]*"
    r"|(?<!\w)R\"\(((?:[^)]|\)(?!\"))*)(?:\)\")?"
    r"|\"((?:[^\"\\\n]|\\.)*)\"?|'((?:[^'\\\n]|\\.)*)'?|`((?:[^`\\]|\\.)*)`?"
    r"|(?<![<>=-])[<>]=?[ \t]*-?\d+(?:\.\d+)?"
    r"|(?<=[\w\])])\[[ \t]*-?\d+[ \t]*\](?![ \t]*(?:[-+*/%&|^]|<<|>>)?=(?!=))"
    r"|(?<![\w.])(-?\d+(?:\.\d+)?)"
    r"|([{\[])|[}\]]"
    r"|(?<=[{,])\s{0,80}([A-Za-z_$][\w$]{0,63})(?=[ \t]*:(?!:))"
)
# A C-like literal is a key where a colon follows it (an object's key, a `case`), an
# equality test comes before it, or it opens a row of a table (`{{5, 7}, {4, 9}}`, a
# map's pairs; JavaScript's `new Map([[5, 7], ...])`).
_C_KEY_AFTER = re.compile(r"[ \t]*:(?!:)")
_C_KEY_BEFORE = re.compile(r"(?:[!=]==?|\bcase|[{\[,][ \t]*[{\[])[ \t]*$")
# A colon after a ternary's first value (`? 23 :`) follows a value.
_C_TERNARY_BEFORE = re.compile(r"\?[ \t]*$")
# A bracket opens a table of data where a value may start (after `=`, `,`, `(`, `[`,
# `{`, `:` or `return`); elsewhere (after `)`, `else`, a name) it opens code or an index.
_C_TABLE_BEFORE = re.compile(r"(?:[=,(\[{:?]|\breturn)\s*$")
_C_LOOKBACK = 8


@dataclass(slots=True)
class Stream:
    """A program's literal atoms in order, each with its box and whether it is a key."""

    atoms: list[str] = field(default_factory=list)
    boxes: list[int] = field(default_factory=list)
    keys: list[bool] = field(default_factory=list)
    # The boxes that are tables of data (a dict, a list, an initializer), not code.
    tables: set[int] = field(default_factory=set)

    def add(self, text: str, box: int, key: bool) -> None:
        found = atoms(text)
        self.atoms.extend(found)
        self.boxes.extend([box] * len(found))
        self.keys.extend([key] * len(found))


@dataclass(slots=True)
class Indexed:
    """A `Stream`, with where each atom is: for finding runs of atoms in it, and how
    much of a box they make up."""

    stream: Stream
    places: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for index, atom in enumerate(self.stream.atoms):
            self.places.setdefault(atom, []).append(index)

    @property
    def atoms(self) -> list[str]:
        return self.stream.atoms

    def runs(self, run: list[str], low: int, high: int, values: bool = False) -> list[int]:
        """Where `run` starts, at positions in [low, high), the first `MAX_ANCHORS`;
        with `values`, only where it starts with a value, not a key."""
        positions = self.places.get(run[0], [])
        atoms, keys, found = self.stream.atoms, self.stream.keys, []
        first = bisect_left(positions, low)
        for start in positions[first : first + MAX_ANCHORS]:
            if start >= high:
                break
            if atoms[start : start + len(run)] == run and not (values and keys[start]):
                found.append(start)
        return found

    def key_share(self, covered: set[int]) -> float:
        """The share `covered` makes up of the keys of the box that holds most of it,
        where all of `covered` are keys (`if n == 14 or n == 31`)."""
        keys, boxes = self.stream.keys, self.stream.boxes
        if not covered or not all(keys[index] for index in covered):
            return 0.0
        box = Counter(boxes[index] for index in covered).most_common(1)[0][0]
        held = sum(1 for index, other in enumerate(boxes) if other == box and keys[index])
        return sum(1 for index in covered if boxes[index] == box) / held

    def indexed(self, covered: set[int]) -> bool:
        """Whether the box that holds most of `covered` is keyed by consecutive integers
        in order (`{1: 31, 2: 28, ...}`, a C++ map's rows): an array of a domain written
        as a table, which tests that ask for most of its entries pair with throughout."""
        if not covered:
            return False
        boxes, keys = self.stream.boxes, self.stream.keys
        box = Counter(boxes[index] for index in covered).most_common(1)[0][0]
        held = [self.atoms[index] for index, other in enumerate(boxes) if other == box and keys[index]]
        values = sum(1 for index, other in enumerate(boxes) if other == box and not keys[index])
        # A mapping's keys, each with its value (not a list compared whole: `xs == [1, 2, 3]`).
        if len(held) < MIN_BOX_ATOMS or values < len(held) or not all(_INTEGER.fullmatch(atom) for atom in held):
            return False
        first = int(held[0])
        return [int(atom) for atom in held] == list(range(first, first + len(held)))

    def keyed(self, low: int, high: int) -> bool:
        """Whether a key (`atoms.Stream`) sits in [low, high)."""
        return any(self.stream.keys[low:high])

    def box_share(
        self, covered: set[int], values_only: bool, code: bool = False, unheld: frozenset[str] = frozenset()
    ) -> float:
        """The share `covered` makes up of the box (`atoms.Stream`) that holds most of
        it, where that box is a table of data (or, with `code`, any box): of its values
        where `covered` are outputs, of all its atoms where they are inputs and
        outputs; atoms in `unheld` (a yes-or-no table's `true`) not counted."""
        if not covered:
            return 0.0
        boxes, keys = self.stream.boxes, self.stream.keys
        box = Counter(boxes[index] for index in covered).most_common(1)[0][0]
        if not code and box not in self.stream.tables:
            return 0.0
        held = sum(
            1
            for index, other in enumerate(boxes)
            if other == box and not (values_only and keys[index]) and self.atoms[index] not in unheld
        )
        mine = sum(1 for index in covered if boxes[index] == box)
        # A box of a pair of values says nothing of a table.
        return mine / held if held and mine >= MIN_BOX_ATOMS else 0.0


def atoms(text: str) -> list[str]:
    """The numbers and words of `text`, lower-cased, in order; a number's fraction
    without its trailing zeros (`144.0` is `144`, `3.500000` is `3.5`)."""
    return [_atom(match.group()) for match in _ATOM.finditer(text)]


def _atom(text: str) -> str:
    whole, dot, fraction = text.partition(".")
    if not dot or not whole[-1:].isdigit():
        return text.lower()
    fraction = fraction.rstrip("0")
    if not fraction:
        return "0" if whole in ("-0", "") else whole
    return f"{whole}.{fraction}"


def literal_atoms(program: str, language: str, reverse: bool = False, joined: bool = False) -> list[str]:
    """The atoms of `program`'s literals, in order (`read`)."""
    return read(program, language, reverse, joined).atoms


def read(program: str, language: str, reverse: bool = False, joined: bool = False, main_runs: bool = True) -> Stream:
    """`program`'s literals as a `Stream`, each as what it stands for (`folding`); with
    `reverse`, its strings read backwards; with `joined`, each list of small integers as
    the text it spells (`folding.sequence_text`). `main_runs`: whether the program runs
    as `__main__` (a script) rather than being imported for its functions."""
    if language == "python":
        try:
            tree = ast.parse(program)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
        if tree is not None:
            # A program that reads its docstrings keeps data there.
            return _python_stream(
                tree, keep_docstrings="__doc__" in program, reverse=reverse, joined=joined, main_runs=main_runs
            )
    return _c_like_stream(program, reverse, joined)


def node_atoms(node: ast.AST) -> list[str]:
    """The atoms of an expression's literals, in order."""
    return _python_stream(node, keep_docstrings=True).atoms


def _python_stream(
    tree: ast.AST, keep_docstrings: bool = False, reverse: bool = False, joined: bool = False, main_runs: bool = True
) -> Stream:
    """The literal values under `tree` in source order (one walk of CPython's tree), an
    expression of literals folded into the value it stands for; a program's checks of
    itself left out (`_self_check`)."""
    found: list[tuple[int, int, object, int, bool]] = []
    # Docstrings, and thresholds: what a value is compared with by order (`s >= 90`) is
    # a boundary of a range, not a key of one test.
    skipped: set[int] = set()
    tables: set[int] = set()
    pending: list[tuple[ast.AST, int, bool]] = [(tree, id(tree), False)]
    while pending:
        node, box, key = pending.pop()
        if type(node) not in _SPECIAL:
            # Most nodes: nothing to read but their children (one visit each).
            if id(node) not in skipped:
                pending.extend([(child, box, key) for child in _child_nodes(node)])
            continue
        if isinstance(node, _TABLES):
            tables.add(id(node))
        if _self_check(node, main_runs):
            continue
        if not keep_docstrings and isinstance(node, _BODIES) and (doc := docstring(node)) is not None:
            skipped.add(id(doc))
        elif isinstance(node, ast.Compare) and any(isinstance(op, _ORDERINGS) for op in node.ops):
            skipped.update(id(side) for side in (node.left, *node.comparators))
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Constant):
            if _is_literal(node.value):
                found.append((node.lineno, node.col_offset, node.value, box, key))
            continue
        if isinstance(node, _FOLDABLE) and _is_literal(value := folding.fold(node)):
            found.append((node.lineno, node.col_offset, value, box, key))
            continue
        if joined and isinstance(node, _SEQUENCES) and (spelt := _spelt(node)) is not None:
            found.append((node.lineno, node.col_offset, spelt, box, key))
            continue
        pending.extend(_children(node, box, key, box in tables))
    found.sort(key=lambda place: place[:2])
    stream = Stream(tables=tables)
    for _, _, value, box, key in found:
        stream.add(_text(value, reverse), box, key)
    return stream


def _self_check(node: ast.AST, main_runs: bool) -> bool:
    """A program's check of itself, whose literals are its examples, not its answers: an
    `assert`, a function named as a test (`test_...`, `_selftest`, `check`), and where
    the program is imported rather than run, its `if __name__ == "__main__":` block."""
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        name = node.name.lower().lstrip("_")
        return name.startswith(("test", "selftest", "self_test", "check"))
    return not main_runs and isinstance(node, ast.If) and _is_main_guard(node.test)


def _is_main_guard(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = (test.left, test.comparators[0])
    names = [side.id for side in sides if isinstance(side, ast.Name)]
    values = [side.value for side in sides if isinstance(side, ast.Constant)]
    return names == ["__name__"] and values == ["__main__"]


def _spelt(node: ast.AST) -> str | None:
    values = folding.int_list(node)
    return None if values is None else folding.sequence_text(values)


def _children(node: ast.AST, box: int, key: bool, in_table: bool) -> Iterator[tuple[ast.AST, int, bool]]:
    """`node`'s children, each with its box and whether it is a key. A table's rows
    (`{("evil", "vile"), ...}`, `[[2, 4], ...]`) are of its box: the table is what
    holds the data, however its entries are grouped."""
    if isinstance(node, _BOXES) and not (in_table and isinstance(node, _TABLES)):
        box = id(node)
    if isinstance(node, ast.Dict):
        yield from ((child, box, True) for child in node.keys if child is not None)
        yield from ((child, box, key) for child in node.values)
    elif isinstance(node, ast.Compare):
        # An equality or membership test's operands are what a value is matched against.
        yield from ((child, box, True) for child in (node.left, *node.comparators))
    elif isinstance(node, ast.MatchValue):
        yield node.value, box, True
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
        # A place read (`a[0] == 10`) is no datum, and would part the test's atoms
        # around it; a place written (`d[5] = 7`) keys a table.
        yield node.value, box, key
    else:
        yield from ((child, box, key) for child in _child_nodes(node))


def _child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` less the nodes that hold nothing to read (`_LEAVES`), over
    the fields that may hold nodes, listed once per node type: the walk's cost was
    mostly the standard one's generators."""
    children: list[ast.AST] = []
    fields = _NODE_FIELDS.get(type(node))
    for name in node._fields if fields is None else fields:
        value = getattr(node, name, None)
        if type(value) is list:
            children.extend([item for item in value if isinstance(item, ast.AST) and type(item) not in _LEAVES])
        elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
            children.append(value)
    return children


_FOLDABLE = (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Call)
_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_BODIES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TABLES = (ast.Dict, ast.List, ast.Tuple, ast.Set)
_SEQUENCES = (ast.List, ast.Tuple, ast.BinOp)
_BOXES = (*_BODIES, ast.Lambda, *_TABLES)
# The nodes `_python_stream` reads more of than their children; and the nodes that hold
# nothing to read (a name's context, an operator, an imported name).
_SPECIAL = frozenset(
    {*_FOLDABLE, *_BOXES, ast.Constant, ast.Compare, ast.Assert, ast.If, ast.MatchValue, ast.JoinedStr}
)
# Fields that hold names, flags or leaves, never a node with a literal under it.
_SCALAR_FIELDS = frozenset(
    {
        *("ctx", "op", "ops", "id", "name", "names", "arg", "attr", "module", "level", "asname"),
        *("type_comment", "kind", "conversion", "is_async", "simple", "tag", "kwd_attrs", "rest"),
    }
)
_NODE_FIELDS = {
    cls: tuple(name for name in cls._fields if name not in _SCALAR_FIELDS)
    for cls in vars(ast).values()
    if isinstance(cls, type) and issubclass(cls, ast.AST)
}
_LEAVES = frozenset(
    {
        *(
            cls
            for cls in vars(ast).values()
            if isinstance(cls, type)
            and issubclass(cls, ast.AST)
            and cls.__base__ in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
        ),
        ast.alias,
    }
)


def holds_data_string(program: str) -> bool:
    """Whether a triple-quoted string of `program` is a value (`DATA = '''...'''`,
    `f('''...''')`), not a docstring: an assignment's, a call's or a display's
    punctuation before its prefix and quotes. Each quote is found by C's substring
    search, and a program has few."""
    for quotes in ('"""', "'''"):
        start = program.find(quotes)
        while start >= 0:
            before = program[max(0, start - _DATA_LOOKBACK) : start].rstrip("rRbBuUfF").rstrip()
            if before[-1:] in ("=", "(", ",", "["):
                return True
            start = program.find(quotes, start + len(quotes))
    return False


# How far before a triple quote its prefix and blanks are looked for.
_DATA_LOOKBACK = 64


def docstring(node: ast.AST) -> ast.Constant | None:
    """A body's first statement when it is a string alone: a docstring, which may carry
    the task's own examples."""
    if not isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or not node.body:
        return None
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.value
    return None


def _is_literal(value: object) -> bool:
    return isinstance(value, str | bytes | int | float | complex) and not isinstance(value, bool)


def _text(value: object, reverse: bool = False) -> str:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if isinstance(value, str):
        text = folding.decoded(value) or _FORMAT_SPEC.sub(" ", value)
        return text[::-1] if reverse else text
    # Python refuses to write an int of more than 4,300 digits (a hex literal parses to
    # one): no test's value is that long, so it is no atom of one.
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        return ""
    return repr(value)


def _c_like_stream(program: str, reverse: bool = False, joined: bool = False) -> Stream:
    text = folding.unfold_c_like(program)
    stream, boxes, opened = Stream(), [(0, 0)], 0
    for match in _C_LIKE.finditer(text):
        groups = match.groups()
        if groups[5] is not None:
            table = _C_TABLE_BEFORE.search(text, max(0, match.start() - _C_LOOKBACK), match.start()) is not None
            # A table's rows (`{{2, true}, ...}`) are of its box, as in Python.
            if table and boxes[-1][0] in stream.tables:
                boxes.append((boxes[-1][0], len(stream.atoms)))
                continue
            opened += 1
            boxes.append((opened, len(stream.atoms)))
            if table:
                stream.tables.add(opened)
            continue
        if match.group().startswith(("}", "]")):
            if len(boxes) > 1:
                box, start = boxes.pop()
                if joined and match.group() == "]":
                    _join_sequence(stream, box, start)
            continue
        string = next((group for group in groups[:4] if group is not None), None)
        literal = groups[4] if string is None else _c_like_string(string, reverse)
        if groups[6] is not None:
            literal = groups[6][::-1] if reverse else groups[6]
        if literal is not None:
            stream.add(literal, boxes[-1][0], _c_like_key(text, match.start(), match.end()))
    return stream


def _join_sequence(stream: Stream, box: int, start: int) -> None:
    """The atoms of an array that closed, from `start`, as the text they spell, where
    they are all small integers of that array."""
    held = stream.atoms[start:]
    if not held or any(other != box for other in stream.boxes[start:]):
        return
    if not all(atom.isdigit() and len(atom) <= MAX_CODE_DIGITS for atom in held):
        return
    spelt = folding.sequence_text([int(atom) for atom in held])
    if spelt is None:
        return
    key = stream.keys[start]
    del stream.atoms[start:], stream.boxes[start:], stream.keys[start:]
    stream.add(spelt, box, key)


# A printf conversion (`%lld`, `%.6f`): how a value is printed, not an atom of it.
_FORMAT_SPEC = re.compile(r"%[-+ #0]{0,4}(?:\d{1,3}|\*)?(?:\.(?:\d{1,3}|\*))?(?:hh|h|ll|l|L|j|z|t)?[diouxXeEfFgGcs]")


def _c_like_string(string: str, reverse: bool) -> str:
    text = _FORMAT_SPEC.sub(" ", string.replace("\\n", "\n"))
    text = folding.decoded(text) or text
    return text[::-1] if reverse else text


def _c_like_key(text: str, start: int, end: int) -> bool:
    before = max(0, start - _C_LOOKBACK)
    if _C_KEY_AFTER.match(text, end):
        return _C_TERNARY_BEFORE.search(text, before, start) is None
    return _C_KEY_BEFORE.search(text, before, start) is not None


def code_text(value: Any) -> str:
    """A test's value (JSON-like data) as the text its atoms are read from."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
