"""Grade one mix of IFEval-style items with rlvr's `ifeval` verifier and with IFEval's
reference checker as lm-eval ships it (`lm_eval.tasks.ifeval.utils`).

Both run in this process, single-threaded, on the same items: the differential
test's generated responses, each with 1 to 3 of the 25 instruction types (IFEval's
prompts carry 1.5 on average), strict and loose. Models (Punkt, langdetect's
profiles) are loaded before timing. rlvr validates each ground truth inside the timed
loop, as a worker does; the reference reads its kwargs as given.

    .venv/bin/python -m bench.ifeval --items 2000
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
from tests.verifiers.ifeval.generate import cases
from tests.verifiers.ifeval.reference import reference_grade

Item = tuple[str, str, dict[str, Any]]


def _items(count: int, seed: int) -> list[Item]:
    rng = random.Random(seed)
    out = []
    for prompt, response, gt in cases(count, seed):
        picked = sorted(rng.sample(range(len(gt["instruction_id_list"])), rng.randint(1, 3)))
        subset = {
            "instruction_id_list": [gt["instruction_id_list"][i] for i in picked],
            "kwargs": [gt["kwargs"][i] for i in picked],
        }
        out.append((prompt, response, subset))
    return out


def _rlvr(mode: str) -> Callable[[Item], list[bool]]:
    verifier, params = IFEvalVerifier(), IFEvalParams(mode=mode)  # type: ignore[arg-type]

    def grade(item: Item) -> list[bool]:
        prompt, response, gt = item
        out = verifier.verify(GradeInput(prompt, response), params, IFEvalGroundTruth.model_validate(gt))
        return [d["pass"] for d in out.details["instructions"]]

    return grade


def _reference(mode: str) -> Callable[[Item], list[bool]]:
    def grade(item: Item) -> list[bool]:
        prompt, response, gt = item
        return reference_grade(prompt, response, gt, loose=mode == "loose")

    return grade


def _timed(grade: Callable[[Item], list[bool]], items: list[Item]) -> tuple[float, list[list[bool]]]:
    start = time.perf_counter()
    results = [grade(item) for item in items]
    return time.perf_counter() - start, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args(argv)
    # lm-eval logs every response langdetect finds no features in.
    logging.disable(logging.ERROR)
    items = _items(args.items, args.seed)
    n = len(items)
    checks = sum(len(gt["instruction_id_list"]) for _, _, gt in items)
    print(f"items: {n}, instructions: {checks} ({checks / n:.2f} per item)")
    for mode in ("strict", "loose"):
        warm = items[:20]
        _timed(_rlvr(mode), warm)
        _timed(_reference(mode), warm)
        t_rlvr, ours = _timed(_rlvr(mode), items)
        t_ref, theirs = _timed(_reference(mode), items)
        agree = sum(a == b for x, y in zip(ours, theirs, strict=True) for a, b in zip(x, y, strict=True))
        print(f"\n{mode}:")
        print(f"  rlvr ifeval:          {n / t_rlvr:10.1f} items/s  ({t_rlvr:.2f} s)")
        print(f"  lm-eval IFEval:       {n / t_ref:10.1f} items/s  ({t_ref:.2f} s)")
        print(f"  ratio (rlvr / lm-eval): {t_ref / t_rlvr:.2f}x")
        print(f"  instruction verdicts agreeing: {agree}/{checks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
