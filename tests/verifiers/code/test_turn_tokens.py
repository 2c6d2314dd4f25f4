"""A response decoded with its special tokens: the program is what comes before the
first chat-template token.

The class: a trainer that decodes completions without `skip_special_tokens` sends
```` ```<|im_end|> ```` as the last line. That line does not close the fence, so the
block ran to the end of the text, the token with it: a SyntaxError, and a correct
program scored 0. A model that goes on to write another turn after its end token
(`<|im_start|>user ...`) wrote the rest for no one: its blocks are not the answer,
as the math verifier reads it.
"""

from __future__ import annotations

import pytest

from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

TOKENS = ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>"]
GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b\n"
CALLS = {"fn_name": "add", "inputs": [[1, 2], [5, 7]], "outputs": [3, 12]}
ASSERTS = {"tests": ["assert add(1, 2) == 3", "assert add(5, 7) == 12"]}
HUMANEVAL = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}
STDIO = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
STDIO_GOOD = "a, b = map(int, input().split())\nprint(a + b)\n"
FUNCTION_TESTS = {"call": CALLS, "asserts": ASSERTS, "humaneval": HUMANEVAL}

# How a decoded response ends its answer with the token.
ENDINGS = {
    "after_fence": "```python\n{code}```{token}",
    "after_fence_newline": "```python\n{code}```\n{token}",
    "then_a_new_turn": "```python\n{code}```{token}\n<|im_start|>user\nThanks!{token}\n<|im_start|>assistant\n",
    "unfenced": "{code}{token}",
    "after_thinking": "<think>\nadd them\n</think>\n```python\n{code}```{token}",
    "padding": "```python\n{code}```{token}{token}{token}",
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("tests", sorted(FUNCTION_TESTS))
def test_a_correct_program_before_the_token_passes(tests: str, token: str, ending: str) -> None:
    out = grade(ENDINGS[ending].format(code=GOOD, token=token), FUNCTION_TESTS[tests])
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("token", TOKENS)
def test_a_script_before_the_token_passes(token: str) -> None:
    out = grade(f"```python\n{STDIO_GOOD}```{token}", STDIO)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("tests", sorted(FUNCTION_TESTS))
def test_blocks_of_a_turn_after_the_end_are_not_the_answer(tests: str, token: str) -> None:
    """What the model writes after its end token, a user's turn and a new answer
    included, is not graded: a wrong answer stays wrong, a right one stays right."""
    after = f"{token}\n<|im_start|>user\nFix it.{token}\n<|im_start|>assistant\n```python\n{{later}}```"
    wrong_then_right = grade(f"```python\n{BAD}```" + after.format(later=GOOD), FUNCTION_TESTS[tests])
    assert wrong_then_right.score == 0.0 and not wrong_then_right.mask, wrong_then_right.reason
    right_then_wrong = grade(f"```python\n{GOOD}```" + after.format(later=BAD), FUNCTION_TESTS[tests])
    assert right_then_wrong.score == 1.0, right_then_wrong.reason


@pytest.mark.parametrize("tests", sorted(FUNCTION_TESTS))
def test_a_wrong_program_before_the_token_fails(tests: str) -> None:
    out = grade(f"```python\n{BAD}```<|im_end|>", FUNCTION_TESTS[tests])
    assert out.score == 0.0 and not out.mask, out.reason


def test_text_that_only_looks_like_a_token_is_code() -> None:
    code = "def add(a, b):\n    marker = '<|Not A Token|>'\n    return a + b\n"
    assert grade(f"```python\n{code}```", CALLS).score == 1.0


# Code and prose that quote a token without ending the turn with it.
QUOTED = {
    "string_literal": (
        "def add(a, b):\n    marker = '<|im_end|>'\n    return a + b\n",
        "```python\n{code}```<|im_end|>",
    ),
    "regex_of_tokens": (
        "import re\nTOKEN = re.compile(r'<\\|[a-z_]+\\|>')\n\ndef add(a, b):\n    return a + b\n",
        "```python\n{code}```",
    ),
    "mentioned_in_thinking": (
        GOOD,
        "<think>\nThe template ends a turn with <|im_end|>, so stop there.\n</think>\n```python\n{code}```",
    ),
    "mentioned_in_prose": (GOOD, "Stop at <|eot_id|> as usual.\n```python\n{code}```\n"),
    "comment": ("def add(a, b):\n    return a + b  # not <|endoftext|>\n", "```python\n{code}```"),
}


@pytest.mark.parametrize("case", sorted(QUOTED))
def test_a_quoted_token_ends_nothing(case: str) -> None:
    code, form = QUOTED[case]
    out = grade(form.format(code=code), CALLS)
    assert out.score == 1.0, (out.verdict, out.reason)
