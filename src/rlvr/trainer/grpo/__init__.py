"""The bundled GRPO trainer: `rlvr train --config FILE`.

A compact on-policy loop that asks a running rlvr service (or one in this process) for
rewards and group advantages on every step. The pieces, each its own module:

- `config`: every knob, one pydantic model; a YAML/TOML file and flags fill it.
- `tasks`: prompts from JSONL, or the built-in arithmetic task generator.
- `policy`: the model seam (a local Hugging Face causal LM, or a tiny built-in
  transformer with a character tokenizer) and its tokenizer.
- `sampling`: generation (temperature, top-p, max new tokens) and π_old log-probs.
- `losses`: advantage estimators, the clipped surrogate, k3 KL, loss aggregation,
  overlong shaping.
- `rewards`: grading through the public client, overlapped with generation.
- `loop`: the training step, dynamic sampling, logging, checkpoints.
"""
