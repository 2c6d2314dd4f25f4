"""Trainer integrations: `rlvr.trainer.trl` (reward functions for TRL's GRPOTrainer),
`rlvr.trainer.verl` (a verl custom reward function module) and the bundled GRPO trainer
(`rlvr.trainer.grpo`). They reach the service only through the public client
(`rlvr.client`), over HTTP or, with no URL, in-process (`rlvr.in_process`, the one import the
contracts in pyproject.toml let through); `make lint` checks that."""
