"""The answer's code, not a draft in the thinking; and a block's language on its first line.

The classes:
- A reasoning model drafts in `<think>...</think>` and answers after it. The program
  was the last block of the whole response that defines what the tests call, so a
  correct draft in the thinking stood in for an answer whose code defines something
  else (reward 1 for a wrong answer). Now the answer after the last `</think>` is read
  first, as the math verifier reads it; the thinking only where the answer has no
  block at all.
- A block copied from a chat UI has no info string and the language's name alone on
  its first line (```` ``` ```` then `python`): that line was run as code (NameError).
"""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.code.extract import extract_code, fenced_blocks
from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
OTHER_NAME = "def plus(a, b):\n    return a + b\n"
GT: dict[str, Any] = {"tests": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]}
CALL_GT: dict[str, Any] = {"fn_name": "add", "inputs": [[1, 2], [5, 5]], "outputs": [3, 10]}

# How a draft sits in the thinking.
DRAFTS = {
    "tagged": "<think>\nLet me write it.\n```python\n{code}```\n</think>\n",
    "untagged": "<think>\n```\n{code}```\nLooks right.\n</think>\n",
    "tilde": "<think>\n~~~py\n{code}~~~\n</think>\n",
    "two_drafts": "<think>\n```python\n{code}```\nAgain:\n```python\n{code}```\n</think>",
    "nested_think_words": "<think>\nI should not write </think> too early.\n```python\n{code}```\n</think>\n\n",
}
# How the answer after the thinking gives its code.
ANSWERS = {
    "tagged": "Final answer:\n```python\n{code}```\n",
    "untagged": "```\n{code}```",
    "indented_list": "1. The solution:\n   ```python\n   {indented}```\n",
    "crlf": "Answer:\r\n```python\r\n{crlf}```\r\n",
    "with_example": "```python\n{code}```\nUsage:\n```python\nprint(add(1, 2))\n```\n",
}


def _answer(form: str, code: str) -> str:
    indented = code.replace("\n", "\n   ").rstrip(" ")
    return ANSWERS[form].format(code=code, indented=indented, crlf=code.replace("\n", "\r\n"))


def _response(draft: str, draft_code: str, answer: str, answer_code: str) -> str:
    return DRAFTS[draft].format(code=draft_code) + _answer(answer, answer_code)


@pytest.mark.parametrize("answer", sorted(ANSWERS))
@pytest.mark.parametrize("draft", sorted(DRAFTS))
def test_the_answer_s_block_is_the_program(draft: str, answer: str) -> None:
    response = _response(draft, WRONG, answer, RIGHT)
    assert extract_code(response, "python", ("add",)) == RIGHT


@pytest.mark.parametrize("answer", sorted(ANSWERS))
@pytest.mark.parametrize("draft", sorted(DRAFTS))
def test_a_right_draft_never_stands_in_for_the_answer(draft: str, answer: str) -> None:
    """The answer's code defines another name: the draft that defines the tested one
    is not taken for it."""
    response = _response(draft, RIGHT, answer, OTHER_NAME)
    program = extract_code(response, "python", ("add",))
    assert program != RIGHT and "def add" not in program  # the answer's (its code or its example)


@pytest.mark.parametrize("draft", sorted(DRAFTS))
@pytest.mark.parametrize(
    "after", ["", "\n", "The function above adds two numbers.", "Done. `add` is O(1).", "<answer>see above</answer>"]
)
def test_an_answer_without_a_block_falls_back_to_the_thinking(draft: str, after: str) -> None:
    response = DRAFTS[draft].format(code=RIGHT) + after
    assert extract_code(response, "python", ("add",)) == RIGHT


@pytest.mark.parametrize("lead", ["<think>\nadd them\n</think>\n", "<think></think>", "<think>x</think>\n\n"])
def test_unfenced_code_after_the_thinking_is_the_program(lead: str) -> None:
    assert extract_code(lead + RIGHT, "python", ("add",)).strip() == RIGHT.strip()


def test_the_last_close_tag_ends_the_thinking() -> None:
    response = "<think>\n```python\n" + WRONG + "```\n</think>\n```python\n" + WRONG + "```\n</think>\n"
    response += "```python\n" + RIGHT + "```\n"
    assert extract_code(response, "python", ("add",)) == RIGHT


def test_an_unclosed_thinking_is_read_as_before() -> None:
    response = "<think>\n```python\n" + RIGHT + "```\nand I was cut off"
    assert extract_code(response, "python", ("add",)) == RIGHT


def test_reading_stays_linear_with_many_close_tags() -> None:
    response = ("</think>\n```python\nx = 1\n```\n" * 20_000) + "```python\n" + RIGHT + "```\n"
    assert extract_code(response, "python", ("add",)) == RIGHT


@pytest.mark.parametrize(
    ("draft", "answer", "gt", "score"),
    [
        ("tagged", "tagged", "asserts", 1.0),
        ("untagged", "with_example", "asserts", 1.0),
        ("two_drafts", "crlf", "call", 1.0),
        ("tilde", "indented_list", "call", 1.0),
    ],
)
def test_graded_end_to_end(draft: str, answer: str, gt: str, score: float) -> None:
    ground_truth = GT if gt == "asserts" else CALL_GT
    assert grade(_response(draft, WRONG, answer, RIGHT), ground_truth).score == score
    wrong = grade(_response(draft, RIGHT, answer, OTHER_NAME), ground_truth)
    assert wrong.score == 0.0 and not wrong.mask


# ---------------------------------------------------------------- the language on line 1

HEADERS = {
    "python": ["python", "Python", "py", "python3", "PYTHON"],
    "cpp": ["cpp", "C++", "cxx"],
    "javascript": ["javascript", "JavaScript", "js", "node"],
}
CODE = {
    "python": "def add(a, b):\n    return a + b\n",
    "cpp": "int add(int a, int b) { return a + b; }\n",
    "javascript": "function add(a, b) { return a + b; }\n",
}


@pytest.mark.parametrize(
    ("language", "header"), [(lang, h) for lang, headers in sorted(HEADERS.items()) for h in headers]
)
def test_a_language_name_alone_on_the_first_line_is_the_tag(language: str, header: str) -> None:
    response = f"Here it is:\n```\n{header}\n{CODE[language]}```\n"
    assert fenced_blocks(response)[0][1] == CODE[language]
    assert extract_code(response, language) == CODE[language]
    # And it counts as tagged: an untagged block after it is not taken instead.
    assert extract_code(response + "```\nsome output\n```\n", language) == CODE[language]


@pytest.mark.parametrize(
    "first",
    ["cc = 5", "py = 3", "python()", "js += 1", "  node = None", "python # comment", "pythonic = True", "x"],
)
def test_a_first_line_that_is_code_stays(first: str) -> None:
    response = f"```\n{first}\n{RIGHT}```\n"
    assert extract_code(response, "python") == f"{first}\n{RIGHT}"


def test_a_tagged_block_keeps_its_first_line() -> None:
    assert extract_code("```python\npython\n" + RIGHT + "```", "python") == "python\n" + RIGHT


def test_a_language_header_graded_end_to_end() -> None:
    assert grade("```\npython\n" + RIGHT + "```", GT).score == 1.0
