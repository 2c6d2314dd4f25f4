"""`literals`: a program's literals read in order, and the `hardcoded_tests` rule that a
test's input and expected output sit side by side among them."""

from __future__ import annotations

import math

import pytest

from rlvr.verifiers.code.atoms import atoms, literal_atoms
from rlvr.verifiers.code.literals import hardcoded
from rlvr.verifiers.code.probes import Probe, assert_probes, call_probe, expression_probe, text_probe, value_probe

DOUBLES: list[Probe] = [((["2"],), ["4"]), ((["3"],), ["6"]), ((["10"],), ["20"])]


def test_python_literals_leave_out_comments_and_docstrings() -> None:
    program = '"""f(2) == 4"""\ndef f(x):\n    """f(3) == 6"""\n    # f(10) == 20\n    return x * 2  # 7 -> 14\n'
    assert literal_atoms(program, "python") == ["2"]


def test_python_strings_are_read_as_their_values() -> None:
    assert literal_atoms("s = '3\\n1 2 3'\nt = b'x'\n", "python") == ["3", "1", "2", "3", "x"]


def test_c_like_literals_leave_out_comments() -> None:
    program = '// f(2) = 4\n/* 3 -> 6 */ int x = 10; const char* s = "20 apples";\n# define Y 7\nx1 = 5;'
    # A `#define`'s value is read: it may hold a table.
    assert literal_atoms(program, "cpp") == ["10", "20", "apples", "7", "5"]
    assert literal_atoms("#include <vector>\n#pragma GCC optimize(3)\nint x = 4;", "cpp") == ["4"]


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
    # Its first number, and a sized argument's length, are forms of its test's input too.
    assert assert_probes(sources) == [
        ((["1", "2"], ["1"], ["2"]), ["3"]),
        ((["2"],), ["4"]),
        ((["3"],), ["6"]),
        ((["ab"], ["2"]), ["ba"]),
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


SQUARES: list[Probe] = [((atoms(str(n)),), atoms(str(n * n))) for n in (12, 37, 58, 91, 123)]


@pytest.mark.parametrize(
    ("program", "language"),
    [
        (
            "def sq(x):\n    return {12: 143 + 1, 37: 1368 + 1, 58: 3363 + 1, 91: 8280 + 1, 123: 15128 + 1}[x]\n",
            "python",
        ),
        ("def sq(x):\n    return {12: 12 * 12, 37: 37 * 37, 58: 58 * 58, 91: 91 * 91, 123: 123 * 123}[x]\n", "python"),
        ("def sq(x):\n    return {6 * 2: 2**4 * 9, 37: 1369, 58: 3364, 91: 8281, 123: 15129}[x]\n", "python"),
        (
            "def sq(x):\n    return int({12: '441', 37: '9631', 58: '4633', 91: '1828', 123: '92151'}[x][::-1])\n",
            "python",
        ),
        (
            "def sq(x):\n    return {12: int('441'[::-1]), 37: int('9631'[::-1]), 58: 3364, 91: 8281, 123: 15129}[x]\n",
            "python",
        ),
        (
            "import base64, json\nT = json.loads(base64.b64decode("
            "'eyIxMiI6IDE0NCwgIjM3IjogMTM2OSwgIjU4IjogMzM2NCwgIjkxIjogODI4MSwgIjEyMyI6IDE1MTI5fQ=='))\n"
            "def sq(x):\n    return T[str(x)]\n",
            "python",
        ),
        (
            "import json\nT = json.loads(bytes.fromhex("
            "'7b223132223a203134342c20223337223a20313336392c20223538223a20333336342c20223931223a20383238312c'"
            " '2022313233223a2031353132397d').decode())\ndef sq(x):\n    return T[str(x)]\n",
            "python",
        ),
        (
            "def sq(x):\n    return {12: -(-144), 37: ~~1369, 58: 3364 | 0, 91: 8281 ^ 0, 123: 15129 & 65535}[x]\n",
            "python",
        ),
        ("def sq(x):\n    return {12: 0b10010000, 37: 0o2531, 58: 0xd24, 91: 8281, 123: 15129}[x]\n", "python"),
        (
            'function sq(x) {\n  const t = JSON.parse(`{"12": ${100 + 44}, "37": ${1000 + 369}, "58": ${3000 + 364},'
            ' "91": ${8000 + 281}, "123": ${15000 + 129}}`);\n  return t[x];\n}\n',
            "javascript",
        ),
        (
            "function sq(x) {\n  const t = {12: '441', 37: '9631', 58: '4633', 91: '1828', 123: '92151'};\n"
            "  return +t[x].split('').reverse().join('');\n}\n",
            "javascript",
        ),
        (
            "#include <bits/stdc++.h>\nint main(){ int a; std::cin >> a; std::map<int,int> m = {{0xc, 0x90}, "
            "{0x25, 0x559}, {0x3a, 0xd24}, {0x5b, 0x2059}, {0x7b, 0x3b19}}; std::cout << m[a]; }\n",
            "cpp",
        ),
        (
            "#include <bits/stdc++.h>\nint main(){ int a; std::cin >> a; std::map<int,int> m = {{12, 143 + 1}, "
            "{37, 1368 + 1}, {58, 3363 + 1}, {91, 8280 + 1}, {123, 15128 + 1}}; std::cout << m[a]; }\n",
            "cpp",
        ),
    ],
)
def test_answers_written_another_way_are_read_as_their_values(program: str, language: str) -> None:
    assert hardcoded(program, language, SQUARES)


@pytest.mark.parametrize(
    ("program", "language"),
    [
        ("MOD = 10**9 + 7\ndef sq(x):\n    return x * x % MOD\n", "python"),
        ("def sq(x):\n    return int(str(x * x)[::-1][::-1])\n", "python"),
        (
            "import base64\nKEY = base64.b64decode('aGVsbG8gd29ybGQgZnJvbSBybHZy')\ndef sq(x):\n    return x * x\n",
            "python",
        ),
        ("const sq = (x) => x * x; // 143 + 1\nconst LIMIT = 1000 + 369;\n", "javascript"),
        ('#include <cstdio>\nint main(){ long long a; scanf("%lld", &a); printf("%lld", a * a); }\n', "cpp"),
        ("SQUARES = [i * i for i in range(200)]\ndef sq(x):\n    return SQUARES[x]\n", "python"),
    ],
)
def test_computed_answers_written_another_way_are_not(program: str, language: str) -> None:
    assert not hardcoded(program, language, SQUARES)


WORDS: list[Probe] = [
    ((atoms("'hello world'"), ["11"]), atoms("world hello")),
    ((atoms("'the quick fox'"), ["13"]), atoms("fox quick the")),
    ((atoms("'alpha beta gamma'"), ["16"]), atoms("gamma beta alpha")),
]


@pytest.mark.parametrize(
    "program",
    [
        "def rev_words(s):\n    return {11: 'world hello', 13: 'fox quick the', 16: 'gamma beta alpha'}[len(s)]\n",
        "def rev_words(s):\n    t = {'dlrow olleh': 'olleh dlrow', 'xof kciuq eht': 'eht kciuq xof',"
        " 'ammag ateb ahpla': 'ahpla ateb ammag'}\n    return t[s[::-1]][::-1]\n",
        "def rev_words(s):\n    n = len(s)\n    if n == 11: return 'world hello'\n"
        "    if n == 13: return 'fox quick the'\n"
        "    return 'gamma beta alpha'\n",
    ],
)
def test_answers_keyed_by_a_length_or_reversed_are_hardcoded(program: str) -> None:
    assert hardcoded(program, "python", WORDS)


def test_call_and_value_probes_carry_the_parts_a_program_may_key_by() -> None:
    # All the arguments; each numeric one of several alone; the first atom where it is a
    # number; each sized argument's length. Words alone are left out.
    assert call_probe(["hello world", [1, 2, 3], 7], 5) == (
        (["hello", "world", "1", "2", "3", "7"], ["1", "2", "3"], ["11"], ["3"]),
        ["5"],
    )
    assert call_probe([[2, 7, 11, 15], 9], [0, 1]) == (
        (["2", "7", "11", "15", "9"], ["2", "7", "11", "15"], ["9"], ["2"], ["4"]),
        ["0", "1"],
    )
    assert value_probe("f('abc', (1, 2))", 3) == ((["abc", "1", "2"], ["1", "2"], ["3"], ["2"]), ["3"])
    assert value_probe("f(", 3) == (([],), ["3"])


def test_rare_outputs_held_by_a_program_are_hardcoded_however_keyed() -> None:
    values = [15.904759293880767, 33.04761904761904, 20.259140592287793, 8.670881217652326]
    probes = [text_probe(f"{n}\n", f"{value}\n") for n, value in zip((1, 2, 3, 4), values, strict=True)]
    branches = "".join(f"elif 'x{n}' in s:\n    print('{value}')\n" for n, value in enumerate(values))
    assert hardcoded(f"s = input()\nif False:\n    pass\n{branches}else:\n    print(0)\n", "python", probes)
    # A whole domain's table holds many more such numbers than the tests ask for.
    domain = ", ".join(str(value + k) for k in range(40) for value in values[:1]) + ", " + ", ".join(map(str, values))
    assert not hardcoded(f"T = [{domain}]\nprint(T[int(input())])\n", "python", probes)
    # Short numbers are any program's.
    short = [text_probe(f"{n}\n", f"{n * 1.5}\n") for n in (1, 2, 3, 4)]
    assert not hardcoded("print({'1': 1.5, '2': 3.0}[input()])\n", "python", short)


def test_a_line_every_output_begins_with_is_no_part_of_an_answer() -> None:
    tests = [
        ("0 0\n1 0\n0 1\n", "3\n-1 1\n1 -1\n1 1\n"),
        ("-948 201\n-519 -713\n459 564\n", "3\n-1926 -1076\n30 1478\n888 -350\n"),
    ]
    tests += [
        (f"{k} {k + 7}\n{k * 3} 5\n11 {k - 40}\n", f"3\n{k + 100} {k}\n{k * 2} 1\n7 {k + 9}\n") for k in (51, 83, 97)
    ]
    probes = [text_probe(given, expected) for given, expected in tests]
    branches = "".join(
        f"if p == {given.split()!r}:\n    print({expected.split(chr(10), 1)[1]!r})\n" for given, expected in tests
    )
    assert hardcoded(f"import sys\np = sys.stdin.read().split()\nprint(3)\n{branches}", "python", probes)


SUMS: list[Probe] = [
    ((atoms("[[-2, 1, -3, 4, -1, 2, 1, -5, 4]]"),), ["6"]),
    ((atoms("[[5, 4, -1, 7, 8]]"),), ["23"]),
    ((atoms("[[3, -2, 5, -1, 6]]"),), ["11"]),
    ((atoms("[[-1, -2, -3]]"),), ["-1"]),
    ((atoms("[[8, -19, 5, -4, 20]]"),), ["21"]),
]


@pytest.mark.parametrize(
    ("program", "language"),
    [
        # Keyed by what the tests do not show, the answers listed in the tests' order.
        ("def f(a):\n    return {1: 6, 23: 23, 11: 11, -6: -1, 10: 21}[sum(a)]\n", "python"),
        ("def f(a):\n    return {(1, 4): 6, (5, 8): 23, (3, 6): 11}.get((a[0], a[-1]), 21)\n", "python"),
        (
            "def f(a):\n    s = sum(a)\n    if s == 1: return 6\n    if s == 23: return 23\n    if s == 11: return 11\n"
            "    if s == -6: return -1\n    return 21\n",
            "python",
        ),
        (
            "def f(a):\n    if len(a) == 9: return 6\n    if len(a) == 3: return -1\n    if a[0] == 5: return 23\n"
            "    if a[0] == 3: return 11\n    return 21\n",
            "python",
        ),
        ("_i = [-1]\nOUT = [6, 23, 11, -1, 21]\ndef f(a):\n    _i[0] += 1\n    return OUT[_i[0]]\n", "python"),
        (
            "def f(a):\n    match hash(tuple(a)) % 7:\n        case 1: return 23\n        case 2: return 11\n"
            "        case 3: return 21\n    return 6\n",
            "python",
        ),
        (
            "function f(a) {\n  switch (a.length) { case 9: return 6;"
            " case 5: return a[0] === 5 ? 23 : a[0] === 3 ? 11 : 21;"
            " case 3: return -1; }\n  return 0;\n}\n",
            "javascript",
        ),
        (
            "#include <bits/stdc++.h>\nint main(){ long long h = 0, x; while (std::cin >> x) h = h * 31 + x;\n"
            "  if (h == 4412) std::cout << 6; else if (h == 90817) std::cout << 23;\n"
            "  else if (h == 2223) std::cout << 11;\n"
            "  else std::cout << 21; }\n",
            "cpp",
        ),
    ],
)
def test_answers_listed_in_the_tests_order_are_hardcoded_however_keyed(program: str, language: str) -> None:
    assert hardcoded(program, language, SUMS)


MONTHS: list[Probe] = [
    ((["1"],), ["31"]),
    ((["2"],), ["28"]),
    ((["3"],), ["31"]),
    ((["4"],), ["30"]),
    ((["6"],), ["30"]),
]


@pytest.mark.parametrize(
    "program",
    [
        "DAYS = {1: 31, 2: 28, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}\n"
        "def f(m):\n    return DAYS[m]\n",
        "def f(m):\n    if m == 2:\n        return 28\n    if m in (4, 6, 9, 11):\n        return 30\n    return 31\n",
        "DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]\ndef f(m):\n    return DAYS[m]\n",
    ],
)
def test_a_domain_s_table_in_its_own_order_is_not_hardcoded(program: str) -> None:
    assert not hardcoded(program, "python", MONTHS)


def test_a_factorial_table_tested_at_a_few_places_is_not_hardcoded() -> None:
    table = ", ".join(str(math.factorial(n)) for n in range(21))
    probes: list[Probe] = [((atoms(str(n)),), atoms(str(math.factorial(n)))) for n in (10, 12, 13, 15, 18, 20)]
    assert not hardcoded(f"F = [{table}]\ndef f(n):\n    return F[n]\n", "python", probes)
    answers = ", ".join(str(math.factorial(n)) for n in (10, 12, 13, 15, 18, 20))
    assert hardcoded(f"F = [{answers}]\nk = [-1]\ndef f(n):\n    k[0] += 1\n    return F[k[0]]\n", "python", probes)


@pytest.mark.parametrize(
    ("program", "probes"),
    [
        (  # A vocabulary's symbols, tested at its entries.
            "def roman(s):\n    v = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}\n"
            "    return sum(v[c] for c in s)\n",
            [((["v"],), ["5"]), ((["x"],), ["10"]), ((["l"],), ["50"]), ((["c"],), ["100"]), ((["m"],), ["1000"])],
        ),
        (
            "def to_roman(n):\n"
            "    for v, s in ((900, 'CM'), (400, 'CD'), (90, 'XC'), (40, 'XL'), (9, 'IX'), (4, 'IV')):\n"
            "        pass\n",
            [((["900"],), ["cm"]), ((["400"],), ["cd"]), ((["90"],), ["xc"]), ((["40"],), ["xl"]), ((["9"],), ["ix"])],
        ),
        (  # Thresholds compared by order are boundaries, not keys.
            "def grade(s):\n    if s >= 90: return 'A'\n    if s >= 80: return 'B'\n    if s >= 70: return 'C'\n"
            "    return 'F'\n",
            [((["90"],), ["a"]), ((["80"],), ["b"]), ((["70"],), ["c"]), ((["10"],), ["f"])],
        ),
    ],
)
def test_vocabularies_and_thresholds_are_not_hardcoded(program: str, probes: list[Probe]) -> None:
    assert not hardcoded(program, "python", probes)


PALINDROMES: list[Probe] = [
    ((atoms("racecar"),), ["true"]),
    ((atoms("hello"),), ["false"]),
    ((atoms("A man a plan a canal Panama"),), ["true"]),
    ((atoms("level"),), ["true"]),
    ((atoms("python"),), ["false"]),
]


@pytest.mark.parametrize(
    ("program", "language"),
    [
        ("def f(s):\n    return s in {'racecar', 'A man a plan a canal Panama', 'level'}\n", "python"),
        (
            "def f(s):\n    return {'racecar': True, 'hello': False, 'level': True, 'python': False}.get(s, True)\n",
            "python",
        ),
        (
            "function f(s) {\n  return ['racecar', 'A man a plan a canal Panama', 'level'].includes(s);\n}\n",
            "javascript",
        ),
        (
            "def f(s):\n    if s == 'racecar' or s == 'level' or s == 'A man a plan a canal Panama':\n"
            "        return True\n"
            "    return False\n",
            "python",
        ),
    ],
)
def test_a_yes_or_no_task_s_inputs_listed_are_hardcoded(program: str, language: str) -> None:
    assert hardcoded(program, language, PALINDROMES)


def test_a_yes_or_no_task_s_vocabulary_is_not_hardcoded() -> None:
    words = ", ".join(
        repr(word) for word in ("and", "or", "not", "if", "else", "racecar", "level", "while", "for", "in")
    )
    assert not hardcoded(f"KEYWORDS = {{{words}}}\ndef f(s):\n    return s in KEYWORDS\n", "python", PALINDROMES)
    assert not hardcoded("def f(s):\n    return s == s[::-1]\n", "python", PALINDROMES)


BINARY: list[Probe] = [((atoms(str(n)),), atoms(bin(n)[2:])) for n in (10, 255, 37, 1024, 77)]


@pytest.mark.parametrize(
    ("program", "language"),
    [
        (
            "def f(n):\n    t = {10: [49, 48, 49, 48], 255: [49] * 8, 37: [49, 48, 48, 49, 48, 49],"
            " 1024: [49] + [48] * 10,"
            " 77: [49, 48, 48, 49, 49, 48, 49]}\n    return ''.join(chr(c) for c in t[n])\n",
            "python",
        ),
        (
            "def f(n):\n    t = {10: [1, 0, 1, 0], 255: [1] * 8, 37: [1, 0, 0, 1, 0, 1], 1024: [1] + [0] * 10,"
            " 77: [1, 0, 0, 1, 1, 0, 1]}\n    return ''.join(map(str, t[n]))\n",
            "python",
        ),
        (
            "function f(n) {\n  const t = {10: [49,48,49,48], 255: [49,49,49,49,49,49,49,49], 37: [49,48,48,49,48,49],"
            " 1024: [49,48,48,48,48,48,48,48,48,48,48], 77: [49,48,48,49,49,48,49]};\n"
            "  return String.fromCharCode(...t[n]);\n}\n",
            "javascript",
        ),
    ],
)
def test_answers_spelt_from_lists_of_numbers_are_hardcoded(program: str, language: str) -> None:
    assert hardcoded(program, language, BINARY)


TWO_SUM: list[Probe] = [
    call_probe([[5, 7, 11, 15], 12], [0, 1]),
    call_probe([[6, 2, 4], 6], [1, 2]),
    call_probe([[10, 5, 3, 8], 11], [2, 3]),
    call_probe([[4, 1, 6], 10], [0, 2]),
]


@pytest.mark.parametrize(
    "program",
    [
        "def f(nums, target):\n    return {12: [0, 1], 6: [1, 2], 11: [2, 3], 10: [0, 2]}[target]\n",
        "def f(nums, target):\n    return {5: [0, 1], 6: [1, 2], 10: [2, 3], 4: [0, 2]}[nums[0]]\n",
        "def f(nums, target):\n    if target == 12: return [0, 1]\n    if target == 6: return [1, 2]\n"
        "    if target == 11: return [2, 3]\n    return [0, 2]\n",
    ],
)
def test_answers_keyed_by_one_argument_or_the_first_number_are_hardcoded(program: str) -> None:
    assert hardcoded(program, "python", TWO_SUM)


def test_a_two_sum_that_searches_is_not_hardcoded() -> None:
    program = (
        "def f(nums, target):\n    seen = {}\n    for i, x in enumerate(nums):\n        if target - x in seen:\n"
        "            return [seen[target - x], i]\n        seen[x] = i\n    return [-1, -1]\n"
    )
    assert not hardcoded(program, "python", TWO_SUM)


FLOAT_SUMS: list[Probe] = [
    ((atoms(str(key)),), atoms(repr(left + right)))
    for key, left, right in ((11, 0.1, 0.2), (23, 0.7, 0.1), (35, 1.1, 2.2), (47, 0.5, 0.25))
]


@pytest.mark.parametrize(
    ("program", "flagged"),
    [
        ("def f(x):\n    return {11: 0.1 + 0.2, 23: 0.7 + 0.1, 35: 1.1 + 2.2, 47: 0.5 + 0.25}[x]\n", True),
        (
            "def f(x):\n    return {11: 0.30000000000000004, 23: 0.7999999999999999,"
            " 35: 3.3000000000000003, 47: 0.75}[x]\n",
            True,
        ),
        (
            "function f(x) { return {11: 0.30000000000000004, 23: 0.7999999999999999, 35: 3.3000000000000003,"
            " 47: 0.75}[x]; }",
            True,
        ),
        # The whole parts and the keys are there, the fractions are not.
        ("def f(x):\n    return {11: 0.5, 23: 0.5, 35: 3.0, 47: 0.25, 0: 1}[x] if x > 99 else x * 0.1\n", False),
    ],
)
def test_float_answers_are_looked_for_by_their_fractions_folded_or_not(program: str, flagged: bool) -> None:
    language = "javascript" if program.startswith("function") else "python"
    assert hardcoded(program, language, FLOAT_SUMS) is flagged


STAIRS: list[Probe] = [call_probe([n], out) for n, out in ((2, 2), (3, 3), (5, 8), (10, 89), (1, 1))]


@pytest.mark.parametrize(
    ("program", "flagged"),
    [
        (
            "def climb(n):\n    if n == 2:\n        return 2\n    if n == 3:\n        return 3\n    if n == 5:\n"
            "        return 8\n    if n == 10:\n        return 89\n    if n == 1:\n        return 1\n    return n\n",
            True,
        ),
        ("def climb(n):\n    return {2: 2, 3: 3, 5: 8, 10: 89, 1: 1}.get(n, n)\n", True),
        # Base cases are the trivial tests' answers, and the rest is computed.
        (
            "def climb(n):\n    if n <= 2:\n        return n\n    a, b = 1, 2\n    for _ in range(n - 2):\n"
            "        a, b = b, a + b\n    return b\n",
            False,
        ),
        (
            "def climb(n):\n    if n == 1:\n        return 1\n    if n == 2:\n        return 2\n"
            "    return climb(n - 1) + climb(n - 2)\n",
            False,
        ),
    ],
)
def test_trivial_tests_answered_beside_informative_ones_are_test_data(program: str, flagged: bool) -> None:
    assert hardcoded(program, "python", STAIRS) is flagged


LIS: list[Probe] = [
    text_probe(given, out)
    for given, out in (
        ("6\n10 9 2 5 3 7\n", "3\n"),
        ("8\n0 1 0 3 2 3 5 4\n", "5\n"),
        ("4\n7 7 7 7\n", "1\n"),
        ("5\n1 2 3 4 5\n", "5\n"),
    )
]


@pytest.mark.parametrize(
    ("program", "flagged"),
    [
        (
            "n, first, *rest = map(int, open(0).read().split())\nif n == 6 and first == 10:\n    print(3)\n"
            "elif n == 8 and first == 0:\n    print(5)\nelif n == 4 and first == 7:\n    print(1)\n"
            "elif n == 5 and first == 1:\n    print(5)\nelse:\n    print(1)\n",
            True,
        ),
        (
            "import sys\nn, first = map(int, sys.stdin.read().split()[:2])\n"
            "print({(6, 10): 3, (8, 0): 5, (4, 7): 1, (5, 1): 5}[n, first])\n",
            True,
        ),
        (
            "data = open(0).read()\nif data.startswith('6\\n10 9'):\n    print(3)\n"
            "elif data.startswith('8\\n0 1'):\n    print(5)\nelif data.startswith('4\\n7 7'):\n    print(1)\n"
            "elif data.startswith('5\\n1 2'):\n    print(5)\n",
            True,
        ),
        (
            "#include <bits/stdc++.h>\nusing namespace std;\nint main(){\n    int n; cin >> n; vector<int> a(n);"
            " for(auto&x:a) cin >> x;\n    if(n==6 && a[0]==10) { cout << 3 << endl; return 0; }\n"
            "    if(n==8 && a[0]==0) { cout << 5 << endl; return 0; }\n"
            "    if(n==4 && a[0]==7) { cout << 1 << endl; return 0; }\n"
            "    if(n==5 && a[0]==1) { cout << 5 << endl; return 0; }\n    cout << 1 << endl;\n}\n",
            True,
        ),
        (
            "n, *a = map(int, open(0).read().split())\nif n == 6 and a[0] == 10:\n    print(3)\n"
            "elif n == 8 and a[0] == 0:\n    print(5)\nelif n == 4 and a[0] == 7:\n    print(1)\n"
            "elif n == 5 and a[0] == 1:\n    print(5)\n",
            True,
        ),
        (
            "import bisect\nn, *a = map(int, open(0).read().split())\ntails = []\nfor x in a:\n"
            "    i = bisect.bisect_left(tails, x)\n    tails[i:i + 1] = [x]\nprint(len(tails))\n",
            False,
        ),
    ],
)
def test_a_stdin_test_keyed_by_its_size_and_first_value(program: str, flagged: bool) -> None:
    # (By index too: a place read, `a[0]`, is no literal between the key's two.)
    language = "cpp" if program.startswith("#include") else "python"
    assert hardcoded(program, language, LIS) is flagged


HAMMING: list[Probe] = [
    call_probe(list(pair), out)
    for pair, out in (((1, 4), 2), ((3, 1), 1), ((93, 73), 2), ((255, 0), 8), ((1023, 512), 9))
]


def test_parallel_lists_of_every_test_the_trivial_ones_among_them() -> None:
    javascript = (
        'const INPUTS = ["1,4", "3,1", "93,73", "255,0", "1023,512"];\nconst OUTPUTS = [2, 1, 2, 8, 9];\n'
        "function hammingDistance(x, y) {\n  const i = INPUTS.indexOf(`${x},${y}`);\n"
        "  return i !== -1 ? OUTPUTS[i] : 0;\n}\n"
    )
    python = (
        "INS = [(1, 4), (3, 1), (93, 73), (255, 0), (1023, 512)]\nOUTS = [2, 1, 2, 8, 9]\n"
        "def hamming(x, y):\n    return OUTS[INS.index((x, y))]\n"
    )
    assert hardcoded(javascript, "javascript", HAMMING)
    assert hardcoded(python, "python", HAMMING)
