"""Every knob of `rlvr train`, with its default, in one pydantic model.

A YAML or TOML file fills it (`--config FILE`), and every field is also a flag
(`--group-size 8`), which wins over the file. Unknown keys are refused, naming the key.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rlvr.trainer.grpo.losses import Aggregation, Estimator
from rlvr.trainer.grpo.tasks import parse_label_bias

DEFAULT_FORMAT_PATTERN = r"\s*\\boxed\{-?\d+\}\s*"


class TrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Where rewards come from
    url: str | None = Field(None, description="A running rlvr service; none grades in this process.")
    serve: bool = Field(False, description="Start a local `rlvr serve` for the run and train against it.")
    verifier: str = Field("math", description="The correctness verifier (the pass rate is its score >= 1).")
    format_weight: float = Field(0.1, ge=0, description="Weight of the `format` regex reward; 0 turns it off.")
    format_pattern: str = Field(DEFAULT_FORMAT_PATTERN, description="Regex the whole response must match.")
    grade_deadline_s: float | None = Field(None, gt=0, description="Per-item grading deadline sent to the service.")

    # Model and prompts
    model: str = Field("tiny", description="'tiny' (built-in), or a local model directory (Hugging Face or tiny).")
    prompts: Path | None = Field(None, description="JSONL prompts; none uses the built-in arithmetic task.")
    prompt_field: str = "prompt"
    answer_field: str = "answer"
    solution_field: str = Field("solution", description="JSONL field with a warm-up target (optional).")
    max_operand: int = Field(12, ge=1, description="Arithmetic task: operands 0..max_operand.")
    ops: str = Field("+*", pattern=r"^[+*-]+$", description="Arithmetic task: operators.")
    held_out: int = Field(64, ge=1, description="Problems held out for evaluation.")
    warmup_label_bias: str = Field(
        "",
        description="Arithmetic task: systematic error in warm-up targets, 'offset:probability,...' "
        "(e.g. '1:0.45,-1:0.1'; the rest are correct). Grading always uses the true answer.",
    )

    # GRPO
    steps: int = Field(20, ge=0)
    prompts_per_step: int = Field(8, ge=1, description="Groups per update.")
    group_size: int = Field(8, ge=2, description="G: responses per prompt.")
    advantage: Estimator = "grpo"
    aggregation: Aggregation = "seq_mean_token_mean"
    mu: int = Field(1, ge=1, description="Passes (optimizer steps) over each batch.")
    lr: float = Field(1e-3, gt=0)
    grad_clip: float = Field(1.0, gt=0)
    clip_eps: float = Field(0.2, gt=0, lt=1)
    clip_eps_high: float = Field(0.28, gt=0, description="Clip-higher (DAPO: 0.28).")
    beta: float = Field(0.0, ge=0, description="k3 KL coefficient; 0 never loads the reference.")
    dynamic_sampling: bool = Field(True, description="Drop all-equal groups and refill the batch.")
    max_gen_rounds: int = Field(3, ge=1, description="Cap on generation rounds per step when refilling.")
    overlong_buffer: int = Field(0, ge=0, description="Soft overlong penalty over the last L tokens; 0 is off.")
    max_new_tokens: int = Field(12, ge=1)
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    gen_chunks: int = Field(2, ge=1, description="Generation chunks per round; each is graded while the next runs.")

    # Warm-up, evaluation, output
    warmup_steps: int = Field(0, ge=0, description="Supervised steps on the task before GRPO.")
    warmup_batch: int = Field(32, ge=1)
    warmup_lr: float = Field(3e-3, gt=0)
    eval_every: int = Field(0, ge=0, description="Greedy held-out accuracy every N steps; 0: only at the ends.")
    seed: int = 0
    out_dir: Path = Path("runs/grpo")
    progress: bool = Field(True, description="A live progress line per phase on stderr (rich).")
    checkpoint_every: int = Field(0, ge=0, description="Checkpoint every N steps (and at the end); 0: at the end.")
    resume: bool = Field(False, description="Continue from out_dir/checkpoint if there is one.")

    @model_validator(mode="after")
    def _check(self) -> TrainConfig:
        if self.overlong_buffer >= self.max_new_tokens:
            raise ValueError("overlong_buffer must be smaller than max_new_tokens")
        try:
            parse_label_bias(self.warmup_label_bias)
        except ValueError as exc:
            raise ValueError(f"warmup_label_bias: {exc}") from None
        return self


def read_config_file(path: Path) -> dict[str, Any]:
    text = path.read_text()
    data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    return data


def config_from(args: argparse.Namespace) -> TrainConfig:
    """Flags over the file over the defaults; SystemExit naming the field when invalid."""
    values = read_config_file(args.config) if args.config is not None else {}
    values.update({name: v for name in TrainConfig.model_fields if (v := getattr(args, name, None)) is not None})
    try:
        return TrainConfig(**values)
    except ValidationError as exc:
        raise SystemExit(f"rlvr train: invalid settings: {exc}") from exc
