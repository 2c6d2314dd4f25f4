"""Class 10: the extractor takes the code block a human reader sees, whatever the
line endings, the list item it sits in, the fence and the spelling of the language.

Responses are generated from the parts a model varies (prose, containers, fences,
info strings, line endings, a cut-off end, decoy blocks); each must give back exactly
the program that was put in."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.code.extract import extract_code, fenced_blocks
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_formats import needs_gxx, needs_node

PROGRAMS = [
    "def f(x):\n    return 2 * x\n",
    # A blank line, a nested block, a docstring holding an indented fence.
    'def f(x):\n    """Doubles.\n\n    ```\n    f(2) == 4\n    ```\n    """\n\n'
    "    if x:\n        return 2 * x\n    return 0\n",
    "import sys\n\n\ndef f(x):\n    s = '~~~ ``` not a fence here'\n    return 2 * x\n",
]
# (opening prefix, indentation of the block's lines): where the fence sits.
CONTAINERS = {
    "top": ("", ""),
    "numbered": ("1. Write the function:\n\n", "   "),
    "numbered_tight": ("1. Write the function:\n", "   "),
    "numbered_10": ("9. Think.\n10. Write it:\n\n", "    "),
    "bullet": ("- the code:\n", "  "),
    "star": ("* the code:\n\n", "  "),
    "nested": ("1. Plan\n   - code:\n\n", "     "),
    "indented_3": ("Here it is:\n", "   "),
}
FENCES = ["```", "````", "~~~", "~~~~~"]
TAGS = {
    "python": ["python", "python3", "py", "Python", "PY3", "{.python}", "python title='sol.py'"],
    "cpp": ["cpp", "c++", "C++", "cxx"],
    "javascript": ["js", "node", "javascript", "JavaScript", "nodejs"],
}
EOLS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


def _block(program: str, indent: str, fence: str, tag: str, closed: bool) -> str:
    body = "".join(indent + line + "\n" if line else "\n" for line in program.split("\n")[:-1])
    return f"{indent}{fence}{tag}\n{body}" + (f"{indent}{fence}\n" if closed else "")


def _response(container: str, program: str, fence: str, tag: str, closed: bool, eol: str) -> str:
    prefix, indent = CONTAINERS[container]
    text = "Some reasoning first.\n\n" + prefix + _block(program, indent, fence, tag, closed)
    if closed:
        text += "\n2. Then call it.\n\nThat is all.\n"
    return text.replace("\n", eol)


@pytest.mark.parametrize("eol", EOLS)
@pytest.mark.parametrize("container", CONTAINERS)
def test_python_block_comes_back_exactly(container: str, eol: str) -> None:
    for program, fence, tag, closed in itertools.product(PROGRAMS, FENCES, TAGS["python"], (True, False)):
        text = _response(container, program, fence, tag, closed, EOLS[eol])
        got = extract_code(text, "python")
        assert got == program, (container, fence, tag, closed)


@pytest.mark.parametrize("eol", EOLS)
@pytest.mark.parametrize("language", ["cpp", "javascript"])
def test_other_languages_and_decoys(language: str, eol: str) -> None:
    program = "int main() {\n    return 0;\n}\n" if language == "cpp" else "function f(x) {\n  return 2 * x;\n}\n"
    for tag, (container, (prefix, indent)) in itertools.product(TAGS[language], CONTAINERS.items()):
        decoys = "```\nplain untagged\n```\n\n```python\nprint('decoy')\n```\n\n```text\n4\n```\n"
        text = (
            decoys + prefix + _block(program, indent, "```", tag, True) + "\nAnd an example:\n```\n3\n```\n"
        ).replace("\n", EOLS[eol])
        assert extract_code(text, language) == program, (tag, container)


def test_fence_on_the_list_marker_line() -> None:
    for marker, eol in itertools.product(["1. ", "2) ", "- ", "* ", "+ ", "10. "], EOLS.values()):
        pad = " " * len(marker)
        text = f"Answer:\n{marker}```python\n{pad}def f(x):\n{pad}    return 2 * x\n{pad}```\n".replace("\n", eol)
        assert extract_code(text, "python") == "def f(x):\n    return 2 * x\n", marker


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # Lines less indented than the fence keep their relative indentation.
        ("1. x\n   ```python\ndef f():\n    return 1\n   ```\n", "def f():\n    return 1\n"),
        # A closing fence indented 4 or more past the opening one is code.
        ("```python\nx = '''\n    ```\n'''\n```\n", "x = '''\n    ```\n'''\n"),
        # A shorter run, or the other character, does not close.
        ("````python\na\n```\n~~~~\nb\n````\n", "a\n```\n~~~~\nb\n"),
        # A closing fence may carry trailing blanks, never an info string.
        ("```python\na\n```   \nb\n", "a\n"),
        ("```python\na\n``` python\nb\n```\n", "a\n``` python\nb\n"),
        # Inline code (a backtick in the info string) opens nothing.
        ("```python x``` inline.\n```python\nreal\n```\n", "real\n"),
        # The last tagged block wins over later untagged ones; untagged over none.
        ("```python\nfirst\n```\n```py\nsecond\n```\n```\nuntagged\n```\n", "second\n"),
        ("```\nonly\n```\n", "only\n"),
        ("no fences at all\n", "no fences at all\n"),
        # Tabs in the indentation count to the next stop of 4.
        ("-\t```python\n\tdef f():\n\t    return 1\n\t```\n", "def f():\n    return 1\n"),
    ],
)
def test_fence_rules(text: str, want: str) -> None:
    for eol in EOLS.values():
        assert extract_code(text.replace("\n", eol), "python") == want


@settings(max_examples=200, deadline=None)
@given(
    prose=st.lists(st.text(alphabet=st.characters(blacklist_characters="`~\r\n"), max_size=30), max_size=4),
    program=st.sampled_from(PROGRAMS),
    container=st.sampled_from(list(CONTAINERS)),
    fence=st.sampled_from(FENCES),
    tag=st.sampled_from(TAGS["python"]),
    eol=st.sampled_from(list(EOLS.values())),
)
def test_any_prose_around_the_block(
    prose: list[str], program: str, container: str, fence: str, tag: str, eol: str
) -> None:
    prefix, indent = CONTAINERS[container]
    before = "\n".join(prose) + "\n\n"
    text = (before + prefix + _block(program, indent, fence, tag, True) + "\n" + before).replace("\n", eol)
    assert extract_code(text, "python") == program


@pytest.mark.parametrize(
    "text",
    [
        "```\n" * 100_000,
        "`" * 1_000_000,
        "~~~" + "~" * 500_000 + "\n" + "~" * 499_999 + "\n",
        (" " * 10_000 + "```\n") * 50,
        "1. " * 200_000 + "```python\nx\n",
        ("```python\n" + "    ```\n" * 1000) * 20,
        "\r" * 500_000 + "```py\r" + "x\r" * 100_000,
    ],
    ids=["fence_lines", "one_run", "long_tildes", "deep_indent", "markers", "unclosed_lookalikes", "cr"],
)
def test_hostile_texts_parse_in_one_pass(text: str) -> None:
    """Large adversarial texts (a quadratic scan would take hours on these): the
    blocks found are the ones the rules say."""
    blocks = fenced_blocks(text)
    assert all(type(tag) is str and type(body) is str for tag, body in blocks)
    assert sum(len(body) for _, body in blocks) <= len(text) + text.count("\r") + len(blocks) + 1


def test_hostile_fence_lines_pair_up() -> None:
    assert len(fenced_blocks("```\n" * 100_000)) == 50_000
    assert fenced_blocks("```python\n" + "    ```\n" * 1000) == [("python", "    ```\n" * 1000)]


# ---------------------------------------------------------------- through the verifier

CALL = {"fn_name": "f", "inputs": [[2], [3]], "outputs": [4, 6]}
STDIO = {"inputs": ["2\n", "3\n"], "outputs": ["4\n", "6\n"]}


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("eol", EOLS)
@pytest.mark.parametrize("container", ["top", "numbered", "nested"])
def test_correct_python_scores_one(container: str, eol: str) -> None:
    text = _response(container, PROGRAMS[1], "```", "python", True, EOLS[eol])
    out = grade(text, CALL)
    assert out.score == 1.0, out.reason


@needs_gxx
@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("eol", ["crlf", "cr"])
def test_correct_cpp_in_a_list_item_scores_one(eol: str) -> None:
    program = (
        "#include <iostream>\nint main() {\n    int x;\n    std::cin >> x;\n    std::cout << 2 * x << std::endl;\n}\n"
    )
    text = _response("numbered", program, "```", "c++", True, EOLS[eol])
    assert grade(text, {**STDIO, "language": "cpp"}).score == 1.0


@needs_node
@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("eol", ["crlf", "cr"])
def test_correct_javascript_in_a_list_item_scores_one(eol: str) -> None:
    program = "function f(x) {\n  return 2 * x;\n}\n"
    text = _response("bullet", program, "~~~", "js", True, EOLS[eol])
    assert grade(text, {**CALL, "language": "javascript"}).score == 1.0
