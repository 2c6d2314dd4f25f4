"""The run's records: one JSON line per step, and the curves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LOG_FILE = "log.jsonl"
CURVES_FILE = "curves.png"
CURVES = (
    ("reward_mean", "mean reward"),
    ("accuracy", "held-out accuracy (greedy)"),
    ("length_mean", "mean response length (tokens)"),
    ("zero_std_fraction", "zero-std group fraction"),
)
# The fifth panel: one line per signal (a step record's `signal_rates`).
SIGNALS_PANEL = ("signal_rates", "signal rates (share of responses)")


class StepLog:
    """log.jsonl in `out_dir`, keeping the lines of steps up to `keep_steps` (a resumed
    run redoes the steps after its checkpoint; a fresh run passes -1)."""

    def __init__(self, out_dir: Path, keep_steps: int) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.path = out_dir / LOG_FILE
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        kept = [line for line in lines if json.loads(line)["step"] <= keep_steps]
        self.path.write_text("".join(line + "\n" for line in kept))

    def write(self, record: dict[str, Any]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.path.read_text().splitlines()]


def plot_curves(records: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display here
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(10, 10))
    for ax, (key, title) in zip(axes.flat, CURVES, strict=False):
        points = [(r["step"], r[key]) for r in records if r.get(key) is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, marker="o" if key == "accuracy" else None, markersize=3)
        _label(ax, title)
    signals_ax = axes.flat[len(CURVES)]
    for name, (steps, rates) in signal_series(records).items():
        signals_ax.plot(steps, rates, label=name)
    if signals_ax.lines:
        signals_ax.legend(fontsize=7)
    signals_ax.set_ylim(-0.02, 1.02)
    _label(signals_ax, SIGNALS_PANEL[1])
    axes.flat[len(CURVES) + 1].axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def signal_series(records: list[dict[str, Any]]) -> dict[str, tuple[list[int], list[float]]]:
    """Each signal's (steps, rates), from the records that carry rates."""
    series: dict[str, tuple[list[int], list[float]]] = {}
    for record in records:
        for name, rate in (record.get(SIGNALS_PANEL[0]) or {}).items():
            steps, rates = series.setdefault(name, ([], []))
            steps.append(record["step"])
            rates.append(rate)
    return series


def _label(ax: Any, title: str) -> None:
    ax.set_title(title)
    ax.set_xlabel("step")
    ax.grid(alpha=0.3)
