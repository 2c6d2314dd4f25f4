"""`atoms`: a program's literals as a stream, each atom with the box that holds it and
whether it is a key, in Python and in C-like text."""

from __future__ import annotations

import ast

import pytest

from rlvr.verifiers.code import atoms as atoms_module
from rlvr.verifiers.code.atoms import atoms, holds_data_string, literal_atoms, read


def test_a_minus_joined_to_a_number_or_word_is_no_sign() -> None:
    assert atoms("4-6 x-1 -5 (-7) 2.50 3.0 3.500000") == ["4", "6", "x", "1", "-5", "-7", "2.5", "3", "3.5"]


def test_python_boxes_and_keys() -> None:
    stream = read(
        "T = {12: 144, 37: 1369}\ndef f(x):\n    if x == 5:\n        return 25\n    return [1, 2]\n", "python"
    )
    assert stream.atoms == ["12", "144", "37", "1369", "5", "25", "1", "2"]
    assert stream.keys == [True, False, True, False, True, False, False, False]
    table, body, listed = stream.boxes[0], stream.boxes[4], stream.boxes[6]
    assert stream.boxes == [table] * 4 + [body] * 2 + [listed] * 2
    assert table in stream.tables and listed in stream.tables and body not in stream.tables


def test_python_thresholds_are_read_as_nothing() -> None:
    assert literal_atoms("def f(s):\n    if s >= 90: return 'A'\n    if 0 < s <= 10: return 'B'\n", "python") == [
        "a",
        "b",
    ]


@pytest.mark.parametrize(
    ("program", "keys"),
    [
        ("const t = {12: 144, 'x': 7};", [True, False, True, False]),
        ("switch (n) { case 12: return 144; }", [True, False]),
        ("if (h === 12) return 144;", [True, False]),
        ("return n ? 12 : 144;", [False, False]),
    ],
)
def test_c_like_keys(program: str, keys: list[bool]) -> None:
    assert read(program, "javascript").keys == keys


def test_c_like_tables_are_brackets_where_a_value_starts() -> None:
    # (The index read, `[2]`, is no literal at all.)
    stream = read("int main() { int a[3] = {12, 144}; v = f(x)[2]; auto m = {{1, 7}}; }", "cpp")
    assert stream.atoms == ["3", "12", "144", "1", "7"]
    size, table, pair = stream.boxes[0], stream.boxes[1], stream.boxes[3]
    assert table in stream.tables and pair in stream.tables
    assert size not in stream.tables


def test_c_like_raw_strings_and_thresholds() -> None:
    assert literal_atoms('auto s = R"(first line\n12 144)"; if (x >= 90) y = 3; cout << 5;', "cpp") == [
        "first",
        "line",
        "12",
        "144",
        "3",
        "5",
    ]


@pytest.mark.parametrize(
    ("program", "language", "spelt"),
    [
        ("t = [49, 48, 49, 48]\nd = (5, 5)\ne = [49] + [48] * 3\nk = [300, 400]\n", "python", ["1010", "55", "1000"]),
        ("const t = [49,48,49,48]; const d = [5, 5]; const k = [300, 400];", "javascript", ["1010", "55"]),
    ],
)
def test_joined_lists_of_small_numbers_read_as_what_they_spell(program: str, language: str, spelt: list[str]) -> None:
    joined = literal_atoms(program, language, joined=True)
    assert joined[: len(spelt)] == spelt
    assert joined[len(spelt) :] == ["300", "400"]
    assert "1010" not in literal_atoms(program, language)


@pytest.mark.parametrize(
    ("program", "data"),
    [
        ('def f():\n    """Return 4 for 2."""\n    return 4\n', False),
        ("def f():\n    '''Docs.'''\n", False),
        ('TABLE = """\n2 4\n3 9\n"""\n', True),
        ("TABLE = r'''2 4'''\n", True),
        ('print(f("""a""", 2))\n', True),
        ('rows = [\n    """2 4""",\n]\n', True),
        ('x = 1\n"""A module note."""\n', False),
        ("", False),
    ],
)
def test_a_triple_quoted_value_is_data_and_a_docstring_is_not(program: str, data: bool) -> None:
    assert holds_data_string(program) is data


@pytest.mark.parametrize(
    "program",
    [
        "match x:\n    case {'a': 1, **rest}:\n        pass\n    case Point(x=0, y=[1, 2]):\n        pass\n",
        "f = lambda *a, k=3, **kw: f'{a!r:>{k}}'\nimport os as o\nfrom m import (n as p)\n",
        "async def g():\n    async with a as b:\n        yield [i async for i in b if i > 2]\n",
        "try:\n    pass\nexcept* ValueError as e:\n    global q\n    del q[1:2:3]\n",
        "x: int = 5\nclass C(B, metaclass=M):\n    @d(7)\n    def m(self) -> 'T': return {1, 2}\n",
    ],
)
def test_the_walk_sees_every_child_the_standard_one_does(program: str) -> None:
    for node in ast.walk(ast.parse(program)):
        expected = [child for child in ast.iter_child_nodes(node) if type(child) not in atoms_module._LEAVES]
        assert atoms_module._child_nodes(node) == expected


@pytest.mark.parametrize(
    ("program", "language", "expected"),
    [
        # A place read is no datum; a place written keys a table.
        ("if n == 6 and a[0] == 10:\n    print(3)\nd[5] = 7\nx = g[1][2]\n", "python", ["6", "10", "3", "5", "7"]),
        (
            "if (n == 6 && a[0] == 10) cout << 3; m[5] = 7; m[8] += 2; x = g[1][2] + f()[3];",
            "cpp",
            ["6", "10", "3", "5", "7", "8", "2"],
        ),
        ("if (nums.length === 3 && nums[0] === 2) return 1; memo[5] = 8;", "javascript", ["3", "2", "1", "5", "8"]),
        ("x = [10, 20, 30][1]\ny = {1: 2}[1]\n", "python", ["10", "20", "30", "1", "2"]),
    ],
)
def test_an_index_read_is_no_literal_and_one_written_is(program: str, language: str, expected: list[str]) -> None:
    assert literal_atoms(program, language) == expected
