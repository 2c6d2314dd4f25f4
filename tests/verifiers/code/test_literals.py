"""`literals`: a program's literals read in order, and the `hardcoded_tests` rule that a
test's input and expected output sit side by side among them."""

from __future__ import annotations

import pytest

from rlvr.verifiers.code.literals import (
    Probe,
    assert_probes,
    atoms,
    expression_probe,
    hardcoded,
    literal_atoms,
    text_probe,
)

DOUBLES: list[Probe] = [((["2"],), ["4"]), ((["3"],), ["6"]), ((["10"],), ["20"])]


def test_python_literals_leave_out_comments_and_docstrings() -> None:
    program = '"""f(2) == 4"""\ndef f(x):\n    """f(3) == 6"""\n    # f(10) == 20\n    return x * 2  # 7 -> 14\n'
    assert literal_atoms(program, "python") == ["2"]


def test_python_strings_are_read_as_their_values() -> None:
    assert literal_atoms("s = '3\\n1 2 3'\nt = b'x'\n", "python") == ["3", "1", "2", "3", "x"]


def test_c_like_literals_leave_out_comments() -> None:
    program = '// f(2) = 4\n/* 3 -> 6 */ int x = 10; const char* s = "20 apples";\n# define Y 7\nx1 = 5;'
    assert literal_atoms(program, "cpp") == ["10", "20", "apples", "5"]


def test_an_unreadable_python_program_is_read_as_c_like_text() -> None:
    assert literal_atoms("def f(:\n  return {2: 4}  # 3\n", "python") == ["2", "4"]


@pytest.mark.parametrize(
    "program",
    [
        "def f(x):\n    return {2: 4, 3: 6, 10: 20}[x]\n",
        "def f(x):\n    return {4: 2, 6: 3}.get(x)\n",  # either order
        "def f(x):\n    if x == 2: return 4\n    if x == 3: return 6\n    return 0\n",
        "def f(x):\n    return 4 if x == 2 else 6 if x == 3 else 0\n",
        "def f(x):\n    return {'2': '4', '3': '6'}[str(x)]\n",
    ],
)
def test_pairs_side_by_side_are_hardcoded(program: str) -> None:
    assert hardcoded(program, "python", DOUBLES)


@pytest.mark.parametrize(
    "program",
    [
        "def f(x):\n    return 2 * x\n",
        "DOUBLES = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]\ndef f(x):\n    return DOUBLES[x]\n",
        "def f(x):\n    if x == 2: return 4\n    return 2 * x\n",  # one test's pair: not most
        "def f(x):\n    return {2: 5, 3: 7}[x]\n",  # inputs, other outputs
    ],
)
def test_honest_or_partial_programs_are_not(program: str) -> None:
    assert not hardcoded(program, "python", DOUBLES)


def test_runs_must_be_unbroken_and_in_the_test_s_order() -> None:
    probes: list[Probe] = [((atoms("3\n1 2 3"),), ["6"]), ((atoms("2\n10 20"),), ["30"])]
    assert hardcoded("if s == '3\\n1 2 3': print(6)\nelif s == '2\\n10 20': print(30)\n", "python", probes)
    # The same numbers as a vocabulary, in another order.
    assert not hardcoded("VALUES = [1, 2, 3, 6, 10, 20, 30]\n", "python", probes)


def test_a_table_wider_than_the_tests_is_not_hardcoded() -> None:
    months: list[Probe] = [((["9"],), ["30"]), ((["12"],), ["31"]), ((["4"],), ["30"])]
    table = "DAYS = {1: 31, 2: 28, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}\n"
    assert not hardcoded(table, "python", months)
    assert hardcoded("DAYS = {9: 30, 12: 31, 4: 30}\n", "python", months)


def test_answers_kept_in_parallel_tables_are_hardcoded() -> None:
    assert hardcoded(
        "INS = [2, 3, 10]\nOUTS = [4, 6, 20]\ndef f(x):\n    return OUTS[INS.index(x)]\n", "python", DOUBLES
    )


def test_a_trivial_line_does_not_stand_for_its_test() -> None:
    # Each test's last line is a trivial "1"; the program prints words beside its 1s.
    probes: list[Probe] = [
        (tuple(atoms(x) for x in (f"{n} 4\n7 8\n1", f"{n} 4", "1")), [word]) for n, word in ((5, "draw"), (6, "lose"))
    ]
    assert not hardcoded("if x == 1: print('Draw')\nelif y == 1: print('Lose')\n", "python", probes)


def test_trivial_tests_do_not_count() -> None:
    trivial: list[Probe] = [((["0"],), ["0"]), ((["1"],), ["1"]), ((["2"],), ["1"])]
    assert not hardcoded("def f(n):\n    if n == 0: return 0\n    if n == 1: return 1\n", "python", trivial)


def test_assert_probes_split_each_comparison() -> None:
    sources = ["assert f([1, 2]) == 3", "assert f(2) == 4 and f(3) == 6", "def check(c):\n    assert c('ab') == 'ba'\n"]
    assert assert_probes(sources) == [
        ((["1", "2"],), ["3"]),
        ((["2"],), ["4"]),
        ((["3"],), ["6"]),
        ((["ab"],), ["ba"]),
    ]
    assert expression_probe("candidate(5) == 120") == ((["5"],), ["120"])
    assert expression_probe("candidate(5)") is None


def test_a_huge_integer_literal_is_no_atom_and_no_failure() -> None:
    # A hex literal parses to an int Python refuses to write in decimal.
    huge = "0x" + "f" * 4000
    assert not hardcoded(f"S = {huge}\nDOUBLES = {{2: 4, 3: 6, 10: 20}}\n", "python", DOUBLES[:1])
    assert hardcoded(f"S = {huge}\nDOUBLES = {{2: 4, 3: 6, 10: 20}}\n", "python", DOUBLES)
    assert assert_probes([f"assert f(2) == {huge}"]) == [((["2"],), [])]


def test_a_stdin_keyed_by_its_last_line_is_hardcoded() -> None:
    tests = [(f"2\n{1037 + i} 7\n{3041 + i}\n", f"{5043 + i}\n") for i in range(6)]
    probes = [text_probe(given, expected) for given, expected in tests]
    table = ", ".join(f"'{3041 + i}': '{5043 + i}'" for i in range(6))
    assert hardcoded(f"import sys\nD = {{{table}}}\nprint(D[sys.stdin.read().split()[-1]])\n", "python", probes)


def test_hostile_text_is_read_in_one_pass() -> None:
    # Unclosed comments and strings, each 100,000 characters: a backtracking scan would
    # not finish (no timing is asserted: the suite's own time would show it).
    for text in ("/*" * 50_000, '"' * 100_000, "'\\" * 50_000, "1." * 50_000, "#" * 100_000):
        assert len(literal_atoms(text, "cpp")) <= 50_000
        assert not hardcoded(text, "python", DOUBLES * 50)
    # A table of one repeated atom, tried against tests that all start with it.
    ones = "X = [" + "1, " * 80_000 + "]\n"
    assert not hardcoded(ones, "python", [((["1", "1", "7"],), ["9"])] * 200)


def test_hostile_code_is_scanned_in_one_pass() -> None:
    from rlvr.verifiers.code import patterns

    for text in ("valueOf(" * 30_000, "exitx\nx = '" + "from sys import " * 15_000 + "'", "kill " * 50_000):
        code = patterns.bare_code(text, "javascript")
        assert patterns.JS_CUSTOM.search(code) in (True, False)
        assert patterns.EXIT_CODE.search(code) in (True, False)
        assert patterns.REACH.search(code) in (True, False)


def test_answers_keyed_by_a_short_first_line_are_hardcoded() -> None:
    probes = [
        text_probe("3\n4 9 2\n", "15\n"),
        text_probe("2\n10 20\n", "30\n"),
        text_probe("4\n1 1 1 40\n", "43\n"),
        text_probe("5\n8 8 8 8 8\n", "40\n"),
    ]
    program = "import sys\nprint({'3': 15, '2': 30, '4': 43, '5': 40}[sys.stdin.read().split()[0]])\n"
    assert hardcoded(program, "python", probes)
    assert not hardcoded("n = int(input())\nprint(sum(map(int, input().split())))\n", "python", probes)


def test_hardcoded_reads_numbers_in_other_bases_and_docstrings_read_as_data() -> None:
    probes = [((atoms(str(n)),), atoms(str(n * n))) for n in (12, 37, 58, 91)]
    assert hardcoded(
        "def sq(x):\n    return {0xc: 0x90, 0x25: 0x559, 0x3a: 0xd24, 0x5b: 0x2059}[x]\n", "python", probes
    )
    table = (
        'def sq(x):\n    """12 144\n    37 1369\n    58 3364\n    91 8281"""\n'
        "    return dict(map(int, l.split()) for l in sq.__doc__.splitlines())[x]\n"
    )
    assert hardcoded(table, "python", probes)
    assert not hardcoded(table.replace("sq.__doc__", "'1 1'"), "python", probes)
