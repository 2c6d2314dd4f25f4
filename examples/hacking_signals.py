"""Hacking signals, seen from the trainer: a scripted policy starts probing the grader.

The bundled GRPO trainer (`rlvr.trainer.grpo`) trains the tiny built-in model on the
arithmetic task, except that its responses come from a script instead of sampling. At
step k a share `schedule[k]` of them is an exploit attempt on the math verifier: a hedge,
the true answer offered beside a wrong one (two boxes, or a plain "or"), in the hope
that the grader takes the one it wants; the others answer honestly. The attempts earn 0 however the
script shifts its share, and the trainer's log (`log.jsonl`, `signal_rates`; the fifth
panel of `curves.png`) follows the share step by step.

    python examples/hacking_signals.py --out runs/hacking-signals [--url http://rlvr:8000]

Without `--url` the service runs in this process. Needs the `train` extra (torch).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import torch

from rlvr.trainer.grpo.config import TrainConfig
from rlvr.trainer.grpo.logs import CURVES_FILE, StepLog, plot_curves
from rlvr.trainer.grpo.loop import Trainer
from rlvr.trainer.grpo.policy import Tokenizer, load_policy
from rlvr.trainer.grpo.rewards import RewardPipe, RewardSpec
from rlvr.trainer.grpo.run import make_source
from rlvr.trainer.grpo.sampling import GenerationConfig, Rollout, layout

# The share of exploit attempts at each step: none, then rising, then dropped again.
SCHEDULE = (0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 0.5, 0.0)


class ScriptedPolicy:
    """A `Generator` whose responses follow the schedule: in each batch of the current
    step, the first `share` of them are exploit attempts; greedy (evaluation) batches
    answer honestly."""

    def __init__(self, tokenizer: Tokenizer, schedule: tuple[float, ...]) -> None:
        self.tokenizer = tokenizer
        self.schedule = schedule
        self.step = 0  # set by the driver before each trainer step

    def generate(self, prompts: list[list[int]], cfg: GenerationConfig, rng: torch.Generator) -> Rollout:
        share = 0.0 if cfg.greedy else self.schedule[min(self.step, len(self.schedule) - 1)]
        attempts = round(share * len(prompts))
        texts = [
            self.respond(self.tokenizer.decode(prompt), exploit=i < attempts, turn=i)
            for i, prompt in enumerate(prompts)
        ]
        tok = self.tokenizer
        rollout = layout(prompts, [[*tok.encode(text), tok.eos_id] for text in texts], tok.pad_id)
        rollout.texts.extend(texts)
        return rollout

    def respond(self, prompt: str, exploit: bool, turn: int) -> str:
        answer = true_answer(prompt)
        if not exploit:
            return f"\\boxed{{{answer}}}"
        if turn % 2 == 0:
            return f"\\boxed{{{answer + 1}}} or \\boxed{{{answer}}}"
        return f"it is {answer} or {answer - 1}"


def run(out_dir: Path, url: str | None = None, schedule: tuple[float, ...] = SCHEDULE) -> list[dict[str, Any]]:
    """Train for one step per entry of `schedule`; returns the log's step records."""
    cfg = TrainConfig(
        url=url,
        steps=len(schedule),
        prompts_per_step=4,
        group_size=4,
        format_weight=0.0,
        max_new_tokens=48,
        held_out=4,
        out_dir=out_dir,
        progress=False,
    )
    torch.manual_seed(cfg.seed)
    policy = load_policy(cfg.model, cfg.seed)
    source = make_source(cfg)
    scripted = ScriptedPolicy(policy.tokenizer, schedule)
    pipe = RewardPipe(cfg.url, RewardSpec(cfg.verifier, cfg.format_weight, cfg.format_pattern, cfg.advantage))
    try:
        trainer = Trainer(cfg, policy, scripted, source, pipe)
        log = StepLog(cfg.out_dir, -1)
        while trainer.state.step < cfg.steps:
            scripted.step = trainer.state.step
            log.write(trainer.step())
    finally:
        pipe.close()
    records = log.records()
    plot_curves(records, cfg.out_dir / CURVES_FILE)
    return records


def true_answer(prompt: str) -> int:
    """The arithmetic task's prompt ("8*7=") worked out: the script knows the answers."""
    match = re.fullmatch(r"(\d+)([+*-])(\d+)=", prompt.strip())
    if match is None:
        raise ValueError(f"not an arithmetic prompt: {prompt!r}")
    a, op, b = int(match[1]), match[2], int(match[3])
    return a + b if op == "+" else a - b if op == "-" else a * b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/hacking-signals"))
    parser.add_argument("--url", default=None, help="A running rlvr service; none grades in this process.")
    args = parser.parse_args()
    for record in run(args.out, args.url):
        rates = {name: round(rate, 2) for name, rate in record["signal_rates"].items() if rate}
        print(json.dumps({"step": record["step"], "reward_mean": record["reward_mean"], "signal_rates": rates}))
    print(f"curves: {args.out / CURVES_FILE}")


if __name__ == "__main__":
    main()
