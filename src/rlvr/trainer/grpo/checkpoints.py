"""Checkpoints: everything a resumed run needs to continue exactly as an uninterrupted one.

The run's randomness is a function of (seed, step) and its prompts of an index, so the
state is small: the policy's and the reference's weights, the optimizer's moments, the
step and the index of the next problem.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

CHECKPOINT_DIR = "checkpoint"
STATE_FILE = "state.pt"


@dataclass
class RunState:
    step: int = 0  # GRPO steps done
    cursor: int = 0  # index of the next training problem
    accuracy_before: float | None = None


def save(
    out_dir: Path, state: RunState, policy: nn.Module, optimizer: torch.optim.Optimizer, ref: nn.Module | None
) -> None:
    """Written beside the old checkpoint, then swapped in: a crash mid-write leaves the
    previous one whole."""
    final = out_dir / CHECKPOINT_DIR
    tmp = out_dir / (CHECKPOINT_DIR + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    blob: dict[str, Any] = {
        "state": vars(state),
        "policy": policy.state_dict(),
        "optimizer": optimizer.state_dict(),
        "ref": None if ref is None else ref.state_dict(),
    }
    torch.save(blob, tmp / STATE_FILE)
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)


def load(out_dir: Path, policy: nn.Module, optimizer: torch.optim.Optimizer, ref: nn.Module | None) -> RunState | None:
    """The saved state, loaded into the given modules; None when there is no checkpoint."""
    path = out_dir / CHECKPOINT_DIR / STATE_FILE
    if not path.exists():
        return None
    blob = torch.load(path, weights_only=True)
    policy.load_state_dict(blob["policy"])
    optimizer.load_state_dict(blob["optimizer"])
    if ref is not None and blob["ref"] is not None:
        ref.load_state_dict(blob["ref"])
    known = {f.name for f in fields(RunState)}
    # Checkpoints written before a field was dropped still load.
    return RunState(**{k: v for k, v in blob["state"].items() if k in known})
