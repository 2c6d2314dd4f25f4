"""The program is still found when the fences around it are not what CommonMark
wants: an opening fence after text on its line, empty blocks a stray fence opens, a
language tag we do not know, or a C++ program followed by a block of sample input.

The class: each of these made the program empty (an empty block chosen: `no_answer`)
or the whole response (a compile error on the fence lines), so correct programs
scored 0."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.code.extract import extract_code, fenced_blocks
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_formats import needs_gxx

pytestmark = pytest.mark.usefixtures("isolated")

PY = "def add(a, b):\n    return a + b\n"
CPP = "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n    long long a, b;\n    cin >> a >> b;\n"
CPP += "    cout << a + b << endl;\n}\n"
HUMANEVAL = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}
CPP_STDIO = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"], "language": "cpp"}

# Text before an opening fence on its own line.
LEADS = ["Here is the code: ", "Solution:", "**Code** ", "1) Final answer -> ", "\ufeff", "\u200b"]


@pytest.mark.parametrize("tag", ["python", "py", "python3", "Python"])
@pytest.mark.parametrize("lead", LEADS)
def test_an_opening_fence_after_text(lead: str, tag: str) -> None:
    response = f"{lead}```{tag}\n{PY}```\nThat adds them."
    assert extract_code(response, "python") == PY
    assert grade(response, HUMANEVAL).score == 1.0


@pytest.mark.parametrize(
    "line",
    [
        "Use ```python``` fences.",  # inline code, closed on its line
        "Use a ``` fence",  # no language after it
        "Write it in ```pseudocode",  # a language we do not know
        "The tag ```python is what to use, said mid-sentence.",
    ],
)
def test_text_that_is_not_an_opening_fence(line: str) -> None:
    response = f"{line}\n```python\n{PY}```\n"
    assert extract_code(response, "python") == PY


# Empty blocks, wherever a stray fence leaves them.
EMPTY_BLOCKS = {
    "trailing_open_fence": f"```python\n{PY}```\n```\n",
    "trailing_empty_block": f"```python\n{PY}```\n\n```python\n```\n",
    "blank_block_after": f"```python\n{PY}```\n```python\n   \n\n```",
    "empty_untagged_before": f"```\n```\n```python\n{PY}```",
    "double_close": f"```python\n{PY}```\n```",
}


@pytest.mark.parametrize("case", sorted(EMPTY_BLOCKS))
def test_empty_blocks_are_no_one_s_program(case: str) -> None:
    assert extract_code(EMPTY_BLOCKS[case], "python") == PY
    assert grade(EMPTY_BLOCKS[case], HUMANEVAL).score == 1.0


@pytest.mark.parametrize("tag", ["python2", "pycon", "text", "sage", "code"])
def test_an_unknown_tag_is_taken_before_the_whole_text(tag: str) -> None:
    response = f"The solution:\n```{tag}\n{PY}```\nDone."
    assert extract_code(response, "python") == PY


@pytest.mark.parametrize("other", ["cpp", "javascript", "js", "c++"])
def test_another_language_s_block_is_never_the_program(other: str) -> None:
    response = f"In prose: add(a, b).\n```{other}\nint add(int a, int b) {{ return a + b; }}\n```"
    assert extract_code(response, "python") == response


@needs_gxx
@pytest.mark.parametrize(
    "tag", ["c", "C", "h", "cpp17", "c++17", "gnu++17", "c++20", "cpp14", "c++11", "gnu++23", "C++17"]
)
def test_cpp_under_any_tag(tag: str) -> None:
    out = grade(f"```{tag}\n{CPP}```", CPP_STDIO, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


SAMPLES = {
    "untagged_code_then_input": f"```\n{CPP}```\nInput:\n```\n1 2\n```\nOutput:\n```\n3\n```",
    "tagged_code_then_tagged_input": f"```cpp\n{CPP}```\nSample:\n```cpp\n1 2\n```",
    "code_then_usage": f"```cpp\n{CPP}```\nCompile with:\n```\ng++ -O2 sol.cpp && ./a.out < in.txt\n```",
    "signed_main": "```\n" + CPP.replace("int main()", "signed main()") + "```\n```\n1 2\n```",
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(SAMPLES))
def test_cpp_program_before_sample_blocks(case: str) -> None:
    out = grade(SAMPLES[case], CPP_STDIO, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


@needs_gxx
def test_a_wrong_cpp_program_before_samples_fails() -> None:
    wrong = SAMPLES["untagged_code_then_input"].replace("a + b", "a - b")
    out = grade(wrong, CPP_STDIO, timeout_s=10)
    assert out.score == 0.0 and not out.mask, out.reason


# Prose that names a fence just before the real one, and stray fences before a block.
NAMED_FENCES = {
    "prose_then_fence": f"I will answer in ```python\n```python\n{PY}```",
    "prose_blank_then_fence": f"I will answer in ```python\n\n\n```python\n{PY}```",
    "prose_cpp_then_python": f"Not in ```cpp\n```python\n{PY}```",
    "stray_then_tagged": f"```\n```python\n{PY}```",
    "stray_blank_tagged": f"```\n```py\n{PY}```\n",
}


@pytest.mark.parametrize("case", sorted(NAMED_FENCES))
def test_a_named_or_stray_fence_before_the_block(case: str) -> None:
    assert extract_code(NAMED_FENCES[case], "python") == PY
    assert grade(NAMED_FENCES[case], HUMANEVAL).score == 1.0


@pytest.mark.parametrize("indent", ["    ", "\t", "  "])
@pytest.mark.parametrize("gt", ["humaneval", "asserts", "call"])
def test_a_program_indented_as_a_whole(indent: str, gt: str) -> None:
    """A response that is code indented as a whole (cut from a list item, no fence):
    the program, where it defines what the tests call (else a HumanEval completion, or
    an error)."""
    truths = {
        "humaneval": HUMANEVAL,
        "asserts": {"tests": ["assert add(1, 2) == 3"]},
        "call": {"fn_name": "add", "inputs": [[1, 2]], "outputs": [3]},
    }
    program = "".join(indent + line + "\n" for line in ("from math import fsum", "", *PY.splitlines()))
    out = grade(program, truths[gt])
    assert out.score == 1.0, (out.verdict, out.reason)
    wrong = program.replace("a + b", "a - b")
    assert grade(wrong, truths[gt]).score == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "x ```python\n" * 100_000,
        ("x ```python\n" + "\n" * 1000) * 200,
        "\n" * 300_000 + "x ```python\n",
        "```\n```python\n" * 50_000,
        "\r" * 500_000 + "x ```py\r",
    ],
    ids=["after_text_lines", "after_text_then_blanks", "blanks_then_after_text", "stray_pairs", "cr_then_after_text"],
)
def test_hostile_texts_for_the_new_rules(text: str) -> None:
    """Fences after text and stray fences, many times over: one pass (a look-ahead from
    every line over the blank lines after it would not finish)."""
    blocks = fenced_blocks(text)
    assert all(type(tag) is str and type(body) is str for tag, body in blocks)


FENCE_PIECES = [
    "```",
    "```python",
    "```cpp",
    "```text",
    "~~~",
    "x ```python",
    "    ",
    "\n",
    "\r\n",
    "def add(a, b):",
    "a",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FENCE_PIECES), max_size=40), st.sampled_from(["python", "cpp", "javascript"]))
def test_extraction_is_total_on_fence_soup(parts: list[str], language: str) -> None:
    """Any mix of fences, stray and after text: a program is always found (a block's
    code, or the text itself), and never an empty block where another has code."""
    text = "".join(parts)
    code = extract_code(text, language, ["add"])
    assert type(code) is str
    bodies = [body for _, body in fenced_blocks(text) if body.strip()]
    if code.strip() == "" and bodies:
        raise AssertionError((text, bodies))
