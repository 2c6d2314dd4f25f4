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


def parse_label_bias(spec: str) -> dict[int, float]:
    """'1:0.45,-1:0.1' -> {1: 0.45, -1: 0.1}: warm-up targets off by `offset` with that
    probability (the rest are correct). ValueError on a malformed spec."""
    bias: dict[int, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        offset, sep, prob = part.partition(":")
        try:
            bias[int(offset)] = float(prob)
        except ValueError:
            raise ValueError(f"expected 'offset:probability' pairs, got {part!r}") from None
        if not sep or bias[int(offset)] < 0 or int(offset) == 0:
            raise ValueError(f"expected a non-zero offset and a probability >= 0, got {part!r}")
    if sum(bias.values()) >= 1:
        raise ValueError(f"the probabilities add up to {sum(bias.values())}: no correct targets would be left")
    return bias


class ArithmeticTask:
    """Sums and products of small numbers; the answer is expected in \\boxed{}.

    Every (a, op, b) in range is enumerated once and shuffled with `seed`; the first
    `held_out_count` are the evaluation problems, never trained on.

    `label_bias` ({offset: probability}) makes the warm-up targets carry a systematic,
    input-independent error: the k-th problem's `solution` is its answer plus an offset
    drawn (from the seed and k alone) with those probabilities, and the true answer
    otherwise. The ground truth the verifier grades against is always the true answer.
    This is how the demo shows what RL with a verifiable reward adds to supervised
    training: SFT learns the arithmetic *and* the bias (its greedy answer is mostly the
    biased one, while sampling still finds the true one), GRPO moves the mass to the
    true computation, and since the bias is the same on every problem, the correction
    carries over to the held-out problems that neither phase trains on.
    """

    def __init__(
        self, seed: int, max_operand: int, ops: str, held_out_count: int, label_bias: dict[int, float] | None = None
    ) -> None:
        pairs = [(a, op, b) for op in ops for a in range(max_operand + 1) for b in range(max_operand + 1)]
        random.Random(seed).shuffle(pairs)
        if held_out_count >= len(pairs):
            raise ValueError(f"held_out_count: {held_out_count} leaves no training problems out of {len(pairs)}")
        self.eval_pairs = pairs[:held_out_count]
        self.train_pairs = pairs[held_out_count:]
        self.seed = seed
        self.label_bias = label_bias or {}

    @staticmethod
    def _make(a: int, op: str, b: int, offset: int = 0) -> Problem:
        answer = a + b if op == "+" else a * b if op == "*" else a - b
        return Problem(f"{a}{op}{b}=", str(answer), boxed(answer + offset))

    def _offset(self, index: int) -> int:
        if not self.label_bias:
            return 0
        draw = random.Random(f"{self.seed}:bias:{index}").random()
        for offset, prob in self.label_bias.items():
            if draw < prob:
                return offset
            draw -= prob
        return 0

    def problem(self, index: int) -> Problem:
        pair = self.train_pairs[epoch_order(self.seed, index, len(self.train_pairs))]
        return self._make(*pair, self._offset(index))

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
