"""Where prompts come from: a JSONL file, or the built-in arithmetic task.

A source is indexed (`problem(k)` is the k-th training problem), so that a run is a pure
function of its seed and its step: resuming from a checkpoint needs only the index of the
next problem, not a generator's hidden state.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Problem:
    prompt: str
    ground_truth: Any
    # Supervised target for the warm-up (the built-in task knows it; JSONL may give it).
    solution: str | None = None


class ProblemSource(Protocol):
    def problem(self, index: int) -> Problem: ...

    def held_out(self) -> list[Problem]: ...


def epoch_order(seed: int, index: int, size: int) -> int:
    """The position in a training set of `size` of the `index`-th problem drawn: each pass
    over the set is in its own order, a function of (seed, epoch) alone."""
    epoch, offset = divmod(index, size)
    order = list(range(size))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)
    return order[offset]


def boxed(answer: int) -> str:
    return f"\\boxed{{{answer}}}"


class ArithmeticTask:
    """Sums and products of small numbers; the answer is expected in \\boxed{}.

    Every (a, op, b) in range is enumerated once and shuffled with `seed`; the first
    `held_out_count` are the evaluation problems, never trained on.
    """

    def __init__(self, seed: int, max_operand: int, ops: str, held_out_count: int) -> None:
        pairs = [(a, op, b) for op in ops for a in range(max_operand + 1) for b in range(max_operand + 1)]
        random.Random(seed).shuffle(pairs)
        if held_out_count >= len(pairs):
            raise ValueError(f"held_out_count: {held_out_count} leaves no training problems out of {len(pairs)}")
        self.eval_pairs = pairs[:held_out_count]
        self.train_pairs = pairs[held_out_count:]
        self.seed = seed

    @staticmethod
    def _make(a: int, op: str, b: int) -> Problem:
        answer = a + b if op == "+" else a * b if op == "*" else a - b
        return Problem(f"{a}{op}{b}=", str(answer), boxed(answer))

    def problem(self, index: int) -> Problem:
        return self._make(*self.train_pairs[epoch_order(self.seed, index, len(self.train_pairs))])

    def held_out(self) -> list[Problem]:
        return [self._make(*p) for p in self.eval_pairs]


class JsonlTask:
    """One problem per line: `prompt_field` and `answer_field` (and optionally
    `solution_field`, the warm-up target). The last `held_out_count` lines are held out."""

    def __init__(
        self,
        path: Path,
        prompt_field: str,
        answer_field: str,
        solution_field: str,
        held_out_count: int,
        seed: int,
    ) -> None:
        rows = []
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            for name in (prompt_field, answer_field):
                if name not in row:
                    raise ValueError(f"{path}:{n}: no field {name!r}")
            solution = row.get(solution_field)
            rows.append(Problem(str(row[prompt_field]), row[answer_field], None if solution is None else str(solution)))
        if len(rows) <= held_out_count:
            raise ValueError(f"{path}: {len(rows)} problems, held_out_count {held_out_count} leaves none to train on")
        self.train = rows[: len(rows) - held_out_count]
        self.eval = rows[len(rows) - held_out_count :]
        self.seed = seed

    def problem(self, index: int) -> Problem:
        return self.train[epoch_order(self.seed, index, len(self.train))]

    def held_out(self) -> list[Problem]:
        return list(self.eval)
