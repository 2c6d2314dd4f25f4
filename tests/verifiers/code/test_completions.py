"""A HumanEval completion: the entry point's body alone, run after its prompt.

The class: base models, and the dataset's own `canonical_solution`, answer a HumanEval
prompt with the function's body only (`    return sorted(set(l))`), which HumanEval's
harness runs as prompt + completion. Graded alone, such a body is an IndentationError:
a correct answer scored 0. Where the ground truth carries the prompt (and the prompt
ends with the entry point's definition), a program whose first line of code is
indented now runs after it. The prompt's helpers still come from the prompt in the
tests, so a completion that goes on to redefine them gains nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.code import helpers
from rlvr.verifiers.code.verifier import _starts_indented
from tests.verifiers.code.conftest import grade, grade_many
from tests.verifiers.code.humaneval_data import ground_truth, load_problems

pytestmark = pytest.mark.usefixtures("isolated")

PROBLEMS = load_problems()
BY_ID = {p["task_id"]: p for p in PROBLEMS}


def _with_prompt(problem: dict[str, Any], prompt: str | None = None) -> dict[str, Any]:
    return {**ground_truth(problem), "prompt": problem["prompt"] if prompt is None else prompt}


def test_every_canonical_body_passes_after_its_prompt() -> None:
    _, outcomes = grade_many([(p["canonical_solution"], _with_prompt(p)) for p in PROBLEMS], deadline_s=120)
    failed = [(p["task_id"], o.reason[:80]) for p, o in zip(PROBLEMS, outcomes, strict=True) if o.score != 1.0]
    assert not failed, failed


# Bodies that are wrong for every problem.
WRONG_BODIES = {
    "raises": "    raise ValueError('no')\n",
    "exits": "    import os\n    os._exit(0)\n",
    "returns_object": "    return object()\n",
    "loops": "    while True:\n        pass\n",
}


@pytest.mark.parametrize("body", sorted(WRONG_BODIES))
def test_wrong_bodies_fail_and_are_not_masked(body: str) -> None:
    problems = PROBLEMS[::8]
    entries = [(WRONG_BODIES[body], _with_prompt(p)) for p in problems]
    _, outcomes = grade_many(entries, deadline_s=120, timeout_s=1)
    wrong = [(p["task_id"], o.score, o.mask) for p, o in zip(problems, outcomes, strict=True) if o.score or o.mask]
    assert not wrong, wrong


# How a body may be written in a response.
FORMS = {
    "bare": "{body}",
    "fenced": "```python\n{body}```\n",
    "untagged_fence": "Here is the completion:\n```\n{body}```",
    "after_thinking": "<think>\nSort, then dedupe.\n</think>\n```python\n{body}```",
    "leading_comment": "# completion\n{body}",
    "leading_blank_lines": "\n\n{body}",
    "crlf": "```python\r\n{crlf}```",
}
TASKS = ["HumanEval/0", "HumanEval/34", "HumanEval/115", "HumanEval/32", "HumanEval/53"]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("task", TASKS)
def test_a_body_in_any_form_passes(task: str, form: str) -> None:
    body = BY_ID[task]["canonical_solution"]
    response = FORMS[form].format(body=body, crlf=body.replace("\n", "\r\n"))
    out = grade(response, _with_prompt(BY_ID[task]), timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("task", TASKS)
def test_a_body_without_the_prompt_is_what_it_is(task: str) -> None:
    out = grade(BY_ID[task]["canonical_solution"], ground_truth(BY_ID[task]))
    assert out.score == 0.0 and not out.mask and "IndentationError" in out.reason, out.reason


@pytest.mark.parametrize(
    "tail",
    [
        "\n\ndef poly(xs, x):\n    return 0\n",
        "\n\npoly = lambda xs, x: 0\n",
        "\n\nimport math\nmath.fsum = lambda xs: 0\n",
    ],
    ids=["def", "lambda", "patch_math"],
)
def test_a_body_that_goes_on_to_redefine_a_helper_gains_nothing(tail: str) -> None:
    problem = BY_ID["HumanEval/32"]
    out = grade("    return 0.0\n" + tail, _with_prompt(problem), timeout_s=10)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


def test_a_fenced_prompt_gives_the_head_too() -> None:
    problem = BY_ID["HumanEval/34"]
    prompt = "Complete the function:\n\n```python\n" + problem["prompt"] + "```\n"
    out = grade(problem["canonical_solution"], _with_prompt(problem, prompt))
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize(
    ("prompt", "head"),
    [
        ("def f(x):\n    '''doc'''\n", "def f(x):\n    '''doc'''\n"),
        ("import math\n\ndef f(x):\n    import os\n", "import math\n\ndef f(x):\n    import os\n"),
        ("def f(x):\n    pass", "def f(x):\n    pass\n"),
        ("async def f(x):\n    '''doc'''\n", "async def f(x):\n    '''doc'''\n"),
        ("def f(x):\n    '''doc'''\n\ndef g():\n    return 1\n", None),
        ("def g(x):\n    '''doc'''\n", None),
        ("def f(x):\n    '''doc'''\n\nprint(f(1))\n", None),
        ("class f:\n    pass\n", None),
    ],
)
def test_completion_head(prompt: str, head: str | None) -> None:
    assert helpers.completion_head(prompt, "f") == head


def test_a_prompt_not_ending_with_the_entry_point_gives_no_head() -> None:
    problem = BY_ID["HumanEval/34"]
    prompt = problem["prompt"] + "\n\ndef other():\n    return 1\n"
    out = grade(problem["canonical_solution"], _with_prompt(problem, prompt))
    assert out.score == 0.0 and not out.mask and "IndentationError" in out.reason, out.reason


@pytest.mark.parametrize(
    ("code", "indented"),
    [
        ("    return 1\n", True),
        ("\treturn 1\n", True),
        ("\n\n    return 1", True),
        ("# note\n    return 1\n", True),
        ("    # note\ndef f():\n    return 1\n", False),
        ("def f():\n    return 1\n", False),
        ("", False),
        ("\n   \n", False),
        ("import os\n    x = 1\n", False),
    ],
)
def test_starts_indented(code: str, indented: bool) -> None:
    assert _starts_indented(code) is indented
