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
