"""`patterns.bare_code`: the code the signals' patterns read, without comments and
docstrings, its other strings kept whole."""

from __future__ import annotations

import pytest

from rlvr.verifiers.code import patterns


@pytest.mark.parametrize(
    ("program", "bare"),
    [
        ("x = 1  # sys.exit(0)\n", "x = 1   \n"),
        ('def f():\n    """Calls exit()."""\n    return 1\n', "def f():\n     \n    return 1\n"),
        ("s = '# not a comment'\n", "s = '# not a comment'\n"),
        ('s = "a \\" # still a string"\n', 's = "a \\" # still a string"\n'),
        ("d = '''a\nb'''; e = 2\n", "d =  ; e = 2\n"),
        # An escaped line end continues the docstring: what follows it is still quoted.
        ('"""a \\\nos._exit(0) """\nx = 1\n', " \nx = 1\n"),
        ('s = "a \\\nb" # c\n', 's = "a \\\nb"  \n'),
        # An unclosed docstring runs to the end.
        ('x = 1\n"""os._exit(0)\n', "x = 1\n "),
        ('s = """a "" b """ + "#"\n', 's =   + "#"\n'),
    ],
)
def test_python_comments_and_docstrings_go_and_strings_stay(program: str, bare: str) -> None:
    assert patterns.bare_code(program, "python") == bare


@pytest.mark.parametrize(
    ("program", "bare"),
    [
        ("int x = 1; // exit(0)\n", "int x = 1;  \n"),
        ("/* abort() */ int y;", "  int y;"),
        ("/* a * b ** / still */ z", "  z"),
        ('char *s = "// kept";', 'char *s = "// kept";'),
        ("const t = `/* kept ${a} */`;", "const t = `/* kept ${a} */`;"),
        ("x; /* unclosed exit(1)", "x;  "),
        ("s = 'it\\'s'; // c", "s = 'it\\'s';  "),
    ],
)
def test_c_like_comments_go_and_strings_stay(program: str, bare: str) -> None:
    assert patterns.bare_code(program, "cpp") == bare


@pytest.mark.parametrize(
    ("code", "word"),
    [
        ("import os\nos._exit(0)", b"_exit"),
        # A non-ASCII character separates words: JavaScript takes a no-break space for
        # white space, and an identifier's accent can only open more patterns.
        ("process\u00a0.exit(0)", b"process"),
        ("caf\u00e9exit()", b"exit"),
        ("x = '\udc80'; quit()", b"quit"),
    ],
)
def test_words_are_ascii_runs_split_by_everything_else(code: str, word: bytes) -> None:
    assert word in patterns.words(code)


@pytest.mark.parametrize(
    ("code", "matches"),
    [
        ("s = 'a' * (1 << 30)", True),
        ("s = 'a'*(1<<300)", True),
        ('s = "x" * 10 ** 9', True),
        ("s = 'ab' * 10**12", True),
        ("s='a'  *  10**9", True),
        ("s = 'a' * (1 << 20)", False),
        ("s = 'a' * 10 ** 6", False),
        ("n = 1 << 40", False),
    ],
)
def test_a_huge_string_is_found_through_its_gates(code: str, matches: bool) -> None:
    assert patterns.LIMIT_HUGE_STRING.search(code, patterns.words(code)) is matches
    assert patterns.LIMIT_HUGE_STRING.search(code) is matches


@pytest.mark.parametrize(
    ("code", "shadows"),
    [
        ("sorted = lambda x: x\n", True),
        ("import os\ndef len(x):\n    return 0\n", True),
        ("x = 1\nclass int:\n    pass\n", True),
        ("def f():\n    sorted = 1\n    return sorted\n", False),
        ("sum = 0\n", False),  # the name the tests call
        ("input = sys.stdin.readline\n", False),
        ("sorted == 1\n", False),
    ],
)
def test_builtins_shadowed_at_the_top_level(code: str, shadows: bool) -> None:
    assert patterns.shadows_builtins(code, ("sum",)) is shadows
