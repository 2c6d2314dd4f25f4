"""A HumanEval ground truth without its prompt takes the item's prompt, where that is
the task's code.

The class: a trainer sends HumanEval's `test` and `entry_point` as the ground truth and
the task's prompt as the item's `prompt` (where every trainer keeps it), not again in
the ground truth. Then a completion (the body alone, as base models answer) was an
IndentationError, and a program of the entry point alone failed a check that calls
the prompt's helper (`encode_cyclic` in HumanEval/38) with a NameError: correct
answers scored 0. And the helper a check calls came from the program, which could
redefine it. Now the item's prompt stands in for the missing one when it holds
Python (itself, or in fenced blocks) that defines the entry point at its top level.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.code import CodeParams, CodeVerifier, GroundTruth, helpers
from rlvr.verifiers.code.models import MAX_CODE_CHARS
from rlvr.verifiers.code.verifier import ITEM_PROMPTS_PER_GROUND_TRUTH
from tests.verifiers.code.conftest import grade, grade_many
from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems

pytestmark = pytest.mark.usefixtures("isolated")

PROBLEMS = load_problems()
BY_ID = {p["task_id"]: p for p in PROBLEMS}
# Checks that call a helper the prompt defines whole, and a wrong entry point that
# passes with a helper of the program's choosing.
HELPER_TASKS = {
    "HumanEval/32": ("poly", "lambda xs, x: 0", "def find_zero(xs):\n    return 0.0\n"),
    "HumanEval/38": ("encode_cyclic", "lambda s: s", "def decode_cyclic(s):\n    return s\n"),
    "HumanEval/50": ("encode_shift", "lambda s: s", "def decode_shift(s):\n    return s\n"),
}
COMPLETION_TASKS = ["HumanEval/0", "HumanEval/34", "HumanEval/115", "HumanEval/32", "HumanEval/38"]

# How trainers write a task's prompt into the item.
FORMS: dict[str, Callable[[str], str]] = {
    "raw": lambda p: p,
    "chat_fence": lambda p: f"Complete the following function.\n\n```python\n{p}```\nAnswer in one block.",
    "untagged_fence": lambda p: f"Complete this:\n```\n{p}```",
    "chat_template": lambda p: (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
        f"Finish the code:\n```python\n{p}```<|im_end|>\n<|im_start|>assistant\n"
    ),
    "crlf": lambda p: f"Complete the function below.\r\n\r\n```python\r\n{p}```\r\n".replace("\n", "\r\n"),
    "list_item_fence": lambda p: (
        "Steps:\n1. Read this:\n   ```py\n" + "".join(f"   {line}\n" for line in p.splitlines()) + "   ```\n"
    ),
    "two_blocks": lambda p: f"An example of style:\n```python\nx = 1\n```\nNow the task:\n```python\n{p}```",
}


def _entry_point_only(problem: dict[str, Any]) -> str:
    """The canonical solution as a model that writes only what it was asked writes it:
    the imports and the entry point, none of the prompt's helpers."""
    module = ast.parse(canonical(problem))
    kept = [
        node
        for node in module.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        or (isinstance(node, ast.FunctionDef) and node.name == problem["entry_point"])
    ]
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n"


def _attack(task: str) -> str:
    name, value, entry = HELPER_TASKS[task]
    return f"```python\n{name} = {value}\n\n{entry}```"


def test_every_completion_passes_after_the_item_prompt() -> None:
    entries = [(p["canonical_solution"], ground_truth(p)) for p in PROBLEMS]
    prompts = [str(p["prompt"]) for p in PROBLEMS]
    _, outcomes = grade_many(entries, prompts=prompts, deadline_s=120)
    failed = [(p["task_id"], o.reason[:80]) for p, o in zip(PROBLEMS, outcomes, strict=True) if o.score != 1.0]
    assert not failed, failed


def test_every_entry_point_alone_passes_after_a_chat_prompt() -> None:
    entries = [(f"```python\n{_entry_point_only(p)}```", ground_truth(p)) for p in PROBLEMS]
    prompts = [FORMS["chat_template"](str(p["prompt"])) for p in PROBLEMS]
    _, outcomes = grade_many(entries, prompts=prompts, deadline_s=120)
    failed = [(p["task_id"], o.reason[:80]) for p, o in zip(PROBLEMS, outcomes, strict=True) if o.score != 1.0]
    assert not failed, failed


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("task", COMPLETION_TASKS)
def test_a_completion_passes_with_the_prompt_in_any_form(task: str, form: str) -> None:
    problem = BY_ID[task]
    out = grade(problem["canonical_solution"], ground_truth(problem), prompt=FORMS[form](problem["prompt"]))
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("task", sorted(HELPER_TASKS))
def test_the_helper_comes_from_the_item_prompt(task: str, form: str) -> None:
    problem = BY_ID[task]
    prompt = FORMS[form](problem["prompt"])
    alone = grade(f"```python\n{_entry_point_only(problem)}```", ground_truth(problem), prompt=prompt)
    assert alone.score == 1.0 and "untrusted_names" not in alone.details, (alone.verdict, alone.reason)
    attack = grade(_attack(task), ground_truth(problem), prompt=prompt, timeout_s=10)
    assert attack.score == 0.0 and not attack.mask, (attack.verdict, attack.reason)


# Item prompts that are not the task's code: everything stays as without a prompt.
NOT_THE_TASK: dict[str, Callable[[dict[str, Any]], str]] = {
    "empty": lambda p: "",
    "prose": lambda p: f"Write {p['entry_point']} so that it decodes the string.",
    "other_function": lambda p: f"```python\ndef unrelated(x):\n    return x\n```\nName it {p['entry_point']}.",
    "entry_point_nested": lambda p: "class Wrapper:\n" + "".join(f"    {line}\n" for line in p["prompt"].splitlines()),
    "entry_point_as_a_name": lambda p: f"{p['entry_point']} = None\n",
    "broken_python": lambda p: f"```python\ndef {p['entry_point']}(:\n```",
    "too_long": lambda p: p["prompt"] + "#" * MAX_CODE_CHARS,
}


@pytest.mark.parametrize("kind", sorted(NOT_THE_TASK))
@pytest.mark.parametrize("task", sorted(HELPER_TASKS))
def test_an_item_prompt_that_is_not_the_task_changes_nothing(task: str, kind: str) -> None:
    problem = BY_ID[task]
    prompt = NOT_THE_TASK[kind](problem)
    assert helpers.task_prompt(prompt, problem["entry_point"], MAX_CODE_CHARS) is None
    attack = grade(_attack(task), ground_truth(problem), prompt=prompt, timeout_s=10)
    assert attack.details.get("untrusted_names") == [HELPER_TASKS[task][0]], attack.details
    body = grade(problem["canonical_solution"], ground_truth(problem), prompt=prompt)
    assert body.score == 0.0 and not body.mask and "IndentationError" in body.reason, body.reason


def test_the_ground_truth_prompt_wins() -> None:
    """A ground truth with a prompt keeps it, whatever the item's says: here an item
    prompt whose `poly` is always 0, which would pass the wrong answer."""
    problem = BY_ID["HumanEval/32"]
    forged = problem["prompt"].replace("def poly(", "def _real_poly(") + "    pass\n\npoly = lambda xs, x: 0\n"
    gt = {**ground_truth(problem), "prompt": problem["prompt"]}
    out = grade(_attack("HumanEval/32"), gt, prompt=forged, timeout_s=10)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


def test_one_ground_truth_with_many_item_prompts() -> None:
    """Each item's prompt is its own: a prepared ground truth seen with more prompts
    than it keeps still grades each by its own, and keeps a bounded number."""
    problem = BY_ID["HumanEval/34"]
    verifier = CodeVerifier()
    params = CodeParams()
    prepared = verifier.prepare(params, TypeAdapter(GroundTruth).validate_python(ground_truth(problem)))
    prompts = [f"# variant {i}\n{problem['prompt']}" for i in range(ITEM_PROMPTS_PER_GROUND_TRUTH + 3)]
    prompts += ["No code here.", prompts[0]]
    outcomes = [verifier.verify(GradeInput(p, problem["canonical_solution"]), params, prepared) for p in prompts]
    assert [o.score for o in outcomes] == [1.0] * (len(prompts) - 2) + [0.0, 1.0]
    assert len(prepared.by_item_prompt) == ITEM_PROMPTS_PER_GROUND_TRUTH


DOC = "def f(x):\n    " + '"""doc"""'


@pytest.mark.parametrize(
    ("prompt", "kept"),
    [
        ("def f(x):\n    '''doc'''\n", DOC),
        ("async def f(x):\n    '''doc'''\n", "async " + DOC),
        (
            "def f(x):\n    import math\n    '''doc'''\n",
            "def f(x):\n    import math\n    'doc'",
        ),  # not a docstring after the import
        (
            "import math\n\ndef g():\n    return 1\n\ndef f(x):\n    pass\n",
            "import math\n\ndef g():\n    return 1\n\ndef f(x):\n    pass",
        ),
        ("Write f.\n```python\ndef f(x):\n    ...\n```", "def f(x):\n    ..."),
        ("Write f.\r\n```python\r\ndef f(x):\r\n    ...\r\n```\r\n", "def f(x):\n    ..."),
        ("N = 3\nNAMES: list = ['a']\ndef f(x):\n    pass\n", "N = 3\nNAMES: list = ['a']\n\ndef f(x):\n    pass"),
        # Examples of use go; the task stays.
        ("def f(x):\n    pass\n\nresult = f(3)\nprint(result)\n", "def f(x):\n    pass"),
        (
            "from solution import f\nimport numpy as np\nimport os.path\ndef f(x):\n    pass\n",
            "import os.path\n\ndef f(x):\n    pass",
        ),
        ("def f(x):\n    pass\nif __name__ == '__main__':\n    f(1)\n", "def f(x):\n    pass"),
        ("from .local import g\ndef f(x):\n    pass\n", "def f(x):\n    pass"),
        # Not a task to complete.
        ("def f(x):\n    return x * 2\n", None),
        ("def f(x):\n    '''doc'''\n    return x\n", None),
        ("def f(x):\n    pass\n\ndef f(x):\n    return 1\n", None),
        ("def g(x):\n    '''doc'''\n", None),
        ("class f:\n    pass\n", None),
        ("f = lambda x: x\n", None),
        ("def outer():\n    def f(x):\n        pass\n", None),
        ("Write a function f.", None),
        ("", None),
    ],
)
def test_task_prompt(prompt: str, kept: str | None) -> None:
    assert helpers.task_prompt(prompt, "f", MAX_CODE_CHARS) == (None if kept is None else kept + "\n")
    assert helpers.task_prompt(prompt, "f", len(prompt) - 1) is None


# Chat prompts whose code shows the task being used: only the task is taken from them.
EXAMPLES = {
    "assigns_a_call": "{prompt}\nresult = {entry}('abc')\n",
    "prints_a_call": "{prompt}\nprint({entry}('abc'))\n",
    "imports_the_solution": "from solution import {entry}\n{prompt}",
    "imports_a_package": "import numpy as np\n{prompt}",
    "main_guard": "{prompt}\nif __name__ == '__main__':\n    {entry}('abc')\n",
}


@pytest.mark.parametrize("example", sorted(EXAMPLES))
@pytest.mark.parametrize("task", ["HumanEval/38", "HumanEval/50"])
def test_examples_in_a_chat_prompt_never_run(task: str, example: str) -> None:
    problem = BY_ID[task]
    code = EXAMPLES[example].format(prompt=problem["prompt"], entry=problem["entry_point"])
    prompt = FORMS["chat_fence"](code)
    alone = grade(f"```python\n{_entry_point_only(problem)}```", ground_truth(problem), prompt=prompt)
    assert alone.score == 1.0 and "untrusted_names" not in alone.details, (alone.verdict, alone.reason)
    attack = grade(_attack(task), ground_truth(problem), prompt=prompt, timeout_s=10)
    assert attack.score == 0.0 and not attack.mask, (attack.verdict, attack.reason)


@pytest.mark.parametrize("task", COMPLETION_TASKS)
def test_a_prompt_holding_an_implementation_makes_no_completion_pass(task: str) -> None:
    """A "refactor this" prompt holds the whole entry point: a body written after it
    would run inside a working function. Such a prompt is not the task's to complete."""
    problem = BY_ID[task]
    prompt = FORMS["chat_fence"](canonical(problem))
    for body in ("    pass\n", "    return None\n", "    import os\n"):
        out = grade(body, ground_truth(problem), prompt=prompt)
        assert out.score == 0.0 and not out.mask, (body, out.reason)


@pytest.mark.parametrize("task", sorted(HELPER_TASKS))
def test_a_stub_only_prompt_still_reports_the_program_s_helpers(task: str) -> None:
    """An item prompt with the entry point's stub and not the helper the check calls
    gives the check no helper: the grade rests on the program's, and says so."""
    problem = BY_ID[task]
    entry = "def " + problem["entry_point"] + "("
    prompt = FORMS["chat_fence"]("from typing import List\n\n" + entry + problem["prompt"].split(entry, 1)[1])
    out = grade(_attack(task), ground_truth(problem), prompt=prompt, timeout_s=10)
    assert out.details.get("untrusted_names") == [HELPER_TASKS[task][0]], out.details


def test_over_http_the_prompt_is_part_of_the_verdict_s_key(http: httpx.Client) -> None:
    """The same ground truth and response under two prompts are two units: a completion
    passes after the task's prompt and fails after prose, whichever comes first, in one
    request or in two (the verdict cache keys on the prompt too)."""
    problem = BY_ID["HumanEval/34"]
    body = problem["canonical_solution"] + "    # distinct from the other tests' responses\n"
    task = {"prompt": problem["prompt"], "response": body, "verifier": "code", "ground_truth": ground_truth(problem)}
    prose = {**task, "prompt": "Write a function that returns the unique elements, sorted."}
    for items in ([task, prose], [prose, task]):
        r = http.post("/v1/grade", json={"items": items})
        assert r.status_code == 200, r.text
        rewards = {item["prompt"]: x["reward"] for item, x in zip(items, r.json()["results"], strict=True)}
        assert rewards == {task["prompt"]: 1.0, prose["prompt"]: 0.0}, rewards
    for item, reward in ((prose, 0.0), (task, 1.0)):
        r = http.post("/v1/grade", json={"items": [item]})
        assert r.json()["results"][0]["reward"] == reward, r.json()


def test_over_http(http: httpx.Client) -> None:
    task = "HumanEval/38"
    problem = BY_ID[task]
    item = {"prompt": FORMS["chat_fence"](problem["prompt"]), "verifier": "code", "ground_truth": ground_truth(problem)}
    responses = [problem["canonical_solution"], f"```python\n{_entry_point_only(problem)}```", _attack(task)]
    r = http.post("/v1/grade", json={"items": [{**item, "response": response} for response in responses]})
    assert r.status_code == 200, r.text
    assert [x["reward"] for x in r.json()["results"]] == [1.0, 1.0, 0.0]


PROMPT_PIECES = [
    "def f(x):\n",
    "    '''doc'''\n",
    "    pass\n",
    "    return x\n",
    "import math\n",
    "from solution import f\n",
    "result = f(3)\n",
    "N = 3\n",
    "```python\n",
    "```\n",
    "<|im_end|>",
    "Write f.\n",
    "def g(y):\n    return y\n",
    "(\n",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PROMPT_PIECES), max_size=20))
def test_task_prompt_is_total_and_keeps_only_a_stub_task(parts: list[str]) -> None:
    """Any prompt: None, or Python that parses, defines `f` once as a stub, and runs
    nothing but definitions, standard-library imports and literal assignments."""
    kept = helpers.task_prompt("".join(parts), "f", MAX_CODE_CHARS)
    if kept is None:
        return
    module = ast.parse(kept)
    entry = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "f"]
    assert len(entry) == 1 and all(
        isinstance(s, ast.Expr | ast.Pass | ast.Import | ast.ImportFrom) for s in entry[0].body
    )
    for node in module.body:
        assert isinstance(
            node,
            ast.FunctionDef
            | ast.AsyncFunctionDef
            | ast.ClassDef
            | ast.Import
            | ast.ImportFrom
            | ast.Assign
            | ast.AnnAssign,
        )
        if isinstance(node, ast.ImportFrom):
            assert node.module != "solution"
        if isinstance(node, ast.Assign | ast.AnnAssign):
            ast.literal_eval(node.value)  # type: ignore[arg-type]
