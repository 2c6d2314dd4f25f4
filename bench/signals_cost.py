"""What the hacking signals cost the verifiers that compute them, as a share of grading.

Each arm grades the same items in the same process, once with the signals and once with
them switched off (the function that computes them replaced by one that finds none),
alternating, the best of `--rounds` each:

- math: `MathVerifier.verify` on the GRPO mix of `bench.math_grading` (warm caches);
- code: `CodeVerifier.verify_many` on HumanEval's canonical solutions and their mutants
  (real sandbox jobs, the local backend), batches of 16.

    python -m bench.signals_cost [--items 4096] [--rounds 5]

Prints µs per item for each arm and the signals' cost as a percentage (the aim: < 2%).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import TypeAdapter

from bench.math_grading import make_items
from rlvr.verifiers.base import BatchEntry, GradeInput
from rlvr.verifiers.code import CodeParams, GroundTruth
from rlvr.verifiers.code import verifier as code_verifier
from rlvr.verifiers.math import verifier as math_verifier

CODE_BATCH = 16


@contextmanager
def signals_off(module: Any, name: str) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, lambda *args, **kwargs: ())
    try:
        yield
    finally:
        setattr(module, name, original)


def best_of(rounds: int, run: Callable[[], None], module: Any, name: str) -> tuple[float, float]:
    """The best seconds with and without the signals, alternating arms."""
    with_signals, without = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        with_signals.append(time.perf_counter() - started)
        with signals_off(module, name):
            started = time.perf_counter()
            run()
            without.append(time.perf_counter() - started)
    return min(with_signals), min(without)


def math_arm(items: int) -> tuple[int, Callable[[], None]]:
    verifier, params = math_verifier.MathVerifier(), math_verifier.MathParams()
    inputs = [
        (GradeInput(it.prompt, it.response), verifier.prepare(params, it.gold)) for it in make_items(items, seed=11)
    ]

    def run() -> None:
        for item, gold in inputs:
            verifier.verify(item, params, gold)

    run()  # warm every cache: both arms then pay the same
    return len(inputs), run


def code_arm() -> tuple[int, Callable[[], None]]:
    from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems, mutated

    verifier, params = code_verifier.CodeVerifier(), CodeParams(timeout_s=10)
    adapter = TypeAdapter(GroundTruth)
    entries = []
    for problem in load_problems():
        prepared = verifier.prepare(params, adapter.validate_python(ground_truth(problem)))
        for program in (canonical(problem), mutated(problem)):
            entries.append(BatchEntry(GradeInput("", f"```python\n{program}\n```"), params, prepared, 30.0))

    def run() -> None:
        for start in range(0, len(entries), CODE_BATCH):
            verifier.verify_many(entries[start : start + CODE_BATCH])

    run()
    return len(entries), run


def report(name: str, count: int, seconds: tuple[float, float]) -> None:
    with_signals, without = seconds
    cost = 100 * (with_signals - without) / without
    print(
        f"{name:5s} {count:6d} items  with signals {with_signals / count * 1e6:9.1f} µs/item  "
        f"without {without / count * 1e6:9.1f} µs/item  cost {cost:+.2f}%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4096, help="math items")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    count, run = math_arm(args.items)
    report("math", count, best_of(args.rounds, run, math_verifier, "_signals"))
    count, run = code_arm()
    report("code", count, best_of(args.rounds, run, code_verifier, "observe"))


if __name__ == "__main__":
    main()
