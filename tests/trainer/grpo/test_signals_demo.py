"""The hacking-signals demonstration (examples/hacking_signals.py): a scripted policy
shifts its share of exploit attempts over the steps of the bundled trainer, graded by a
real `rlvr serve`; the signal's rate in the trainer's log follows the share while the
attempts earn 0. And the run's live progress, phase by phase."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from types import ModuleType

import pytest
from rich.console import Console

from rlvr.trainer.grpo.config import TrainConfig
from rlvr.trainer.grpo.progress import RunProgress, step_status
from rlvr.trainer.grpo.run import train

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "hacking_signals.py"


def tiny_run(url: str, tmp_path: Path, **overrides: int) -> TrainConfig:
    sizes = {"max_operand": 5, "held_out": 4, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 4}
    return TrainConfig(url=url, out_dir=tmp_path / "run", **(sizes | overrides))


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hacking_signals", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_signal_rate_follows_the_scripted_share_and_attempts_earn_nothing(live_server: str, tmp_path: Path) -> None:
    schedule = (0.0, 0.25, 1.0, 0.5, 0.0)
    records = example().run(tmp_path / "run", live_server, schedule)
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5]
    assert [r["signal_rates"]["hedge"] for r in records] == list(schedule)
    # The honest answers earn 1, every attempt 0: the mean reward is the honest share.
    assert [r["reward_mean"] for r in records] == [1.0 - share for share in schedule]
    assert all(rate == 0.0 for r in records for name, rate in r["signal_rates"].items() if name != "hedge")
    assert (tmp_path / "run" / "curves.png").stat().st_size > 0


def test_the_script_knows_the_arithmetic_task_s_answers() -> None:
    module = example()
    assert [module.true_answer(p) for p in ("8*7=", "3+4=", " 9-2=\n")] == [56, 7, 7]


def test_each_phase_shows_a_progress_line(live_server: str, tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=True, color_system=None)
    cfg = tiny_run(live_server, tmp_path, steps=2, warmup_steps=3, warmup_batch=4)
    with RunProgress(console=console) as progress:
        train(cfg, progress)
    text = out.getvalue()
    for line in ("warm-up", "3/3", "loss", "evaluate", "before GRPO", "after GRPO", "grpo", "2/2", "s/step", "save"):
        assert line in text, (line, text[-3000:])
    assert "signals " in text


def test_the_grpo_line_shows_the_step_s_figures_and_highest_signal_rates() -> None:
    record = {
        "reward_mean": 0.25,
        "pass_rate": 0.5,
        "accuracy": None,
        "signal_rates": {"hedge": 0.5, "restated_question": 0.0, "answer_in_thinking_only": 0.125},
        "step_s": 2.04,
    }
    assert (
        step_status(record) == "reward 0.250 · pass 50% · signals hedge 50%, answer_in_thinking_only 12% · 2.0 s/step"
    )
    quiet = {**record, "signal_rates": {"hedge": 0.0}, "accuracy": 0.75}
    assert step_status(quiet) == "reward 0.250 · pass 50% · accuracy 75% · signals none · 2.0 s/step"


def test_a_run_with_progress_off_prints_nothing(live_server: str, tmp_path: Path) -> None:
    out = io.StringIO()
    with RunProgress(enabled=False, console=Console(file=out, force_terminal=True)) as progress:
        cfg = tiny_run(live_server, tmp_path, steps=1)
        train(cfg, progress)
    assert out.getvalue() == ""


def test_a_phase_that_raises_is_shown_failed_not_finished() -> None:
    out = io.StringIO()
    with RunProgress(console=Console(file=out, force_terminal=True, width=120)) as progress:
        with pytest.raises(RuntimeError), progress.phase("warm-up", total=4) as task:
            progress.advance(task)
            raise RuntimeError("service went away")
        finished = progress.progress.tasks[task]
    assert finished.completed == 1 and finished.total == 4 and not finished.finished
    assert "failed: RuntimeError" in out.getvalue()
