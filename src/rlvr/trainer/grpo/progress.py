"""The run's live progress on stderr, one line per phase (starting the service, the
warm-up, each evaluation, the GRPO steps), with `rich` as `rlvr grade` shows its own: a
run of a few minutes on a CPU says what it is doing from its first second. The GRPO
line carries the last step's reward, accuracy, signal rates and seconds per step.

Where stderr is not a terminal (a log file, CI), rich draws no live line, and each
finished phase is printed once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

# Signals shown on the GRPO line: the highest rates first, at most these many.
MAX_SIGNALS_SHOWN = 3


class RunProgress:
    """Phases of a training run as rich progress tasks; `enabled=False` shows nothing."""

    def __init__(self, enabled: bool = True, console: Console | None = None) -> None:
        self.progress = Progress(
            SpinnerColumn(finished_text="✓"),
            TextColumn("{task.description:<10}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[status]}"),
            console=console or Console(stderr=True),
            disable=not enabled,
        )

    def __enter__(self) -> RunProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    @contextmanager
    def phase(self, name: str, total: int | None = None, status: str = "") -> Iterator[TaskID]:
        """A line for one phase; it is marked finished when the block ends, or failed
        (stopped where it was, its status saying so) when the block raises."""
        task = self.progress.add_task(name, total=total, status=status)
        try:
            yield task
        except BaseException as exc:
            self.progress.update(task, status=f"failed: {type(exc).__name__}")
            self.progress.stop_task(task)
            raise
        done = self.progress.tasks[task].total
        self.progress.update(task, completed=done if done is not None else 1, total=done or 1)

    def advance(self, task: TaskID, status: str | None = None) -> None:
        fields: dict[str, Any] = {} if status is None else {"status": status}
        self.progress.update(task, advance=1, **fields)


def step_status(record: Mapping[str, Any]) -> str:
    """The GRPO line's text for a step's log record."""
    parts = [_figure("reward", record.get("reward_mean"), "{:.3f}")]
    parts.append(_figure("pass", record.get("pass_rate"), "{:.0%}"))
    if record.get("accuracy") is not None:
        parts.append(_figure("accuracy", record["accuracy"], "{:.0%}"))
    rates = sorted((record.get("signal_rates") or {}).items(), key=lambda kv: -kv[1])
    shown = [f"{name} {rate:.0%}" for name, rate in rates[:MAX_SIGNALS_SHOWN] if rate > 0]
    parts.append("signals " + (", ".join(shown) if shown else "none"))
    parts.append(_figure("", record.get("step_s"), "{:.1f} s/step").strip())
    return " · ".join(part for part in parts if part)


def _figure(label: str, value: Any, pattern: str) -> str:
    text = "-" if value is None else pattern.format(value)
    return f"{label} {text}" if label else text
