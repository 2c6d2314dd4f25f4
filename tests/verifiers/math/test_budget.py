"""The symbolic budget charges an item for the CPU it uses, not for time it waits."""

from __future__ import annotations

import gc
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from rlvr.verifiers.base import GradeInput, Verdict
from rlvr.verifiers.math import MathParams, MathVerifier, budget, compare, fastparse, symbolic

V = MathVerifier()


@pytest.fixture(autouse=True)
def no_budget_after() -> Iterator[None]:
    yield
    budget.set_budget(math.inf)


def spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_cpu_past_the_budget_raises() -> None:
    budget.set_budget(0.05)
    budget.check()
    spin(0.08)
    with pytest.raises(budget.BudgetExceeded):
        budget.check()


@pytest.mark.parametrize("stall_s", [0.1, 0.3])
def test_waiting_spends_nothing(stall_s: float) -> None:
    budget.set_budget(0.05)
    budget.check()
    time.sleep(stall_s)  # as when the process is descheduled or stopped
    budget.check()
    spin(0.01)
    budget.check()


def test_a_full_collection_of_a_large_heap_is_not_charged() -> None:
    heap = [{"n": i} for i in range(400_000)]
    budget.set_budget(0.01)
    budget.check()
    started = time.thread_time()
    gc.collect()
    assert time.thread_time() - started > 0.01  # the collection alone is past the budget
    budget.check()
    del heap


def test_a_stall_inside_a_full_collection_is_charged_only_its_cpu() -> None:
    """Only what a collection costs is taken off: a wait inside one (a busy machine,
    here another callback that sleeps) is not credit for the item to spend."""

    def stall(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            time.sleep(0.05)

    gc.callbacks.append(stall)
    try:
        budget.set_budget(0.05)
        budget.check()
        with pytest.raises(budget.BudgetExceeded):
            for _ in range(20):  # 0.2 s of the item's own CPU
                gc.collect()
                spin(0.01)
                budget.check()
    finally:
        gc.callbacks.remove(stall)


def test_another_threads_full_collections_are_not_credited() -> None:
    heap = [[i] for i in range(200_000)]
    stop = threading.Event()

    def collect() -> None:
        while not stop.is_set():
            gc.collect()

    other = threading.Thread(target=collect, daemon=True)
    budget.set_budget(0.05)
    budget.check()
    other.start()
    try:
        with pytest.raises(budget.BudgetExceeded):
            for _ in range(40):  # 0.2 s of the item's own CPU
                spin(0.005)
                budget.check()
    finally:
        stop.set()
        other.join()
    del heap


def test_a_young_collection_is_charged() -> None:
    budget.set_budget(0.02)
    budget.check()
    end = time.thread_time() + 0.05
    while time.thread_time() < end:
        gc.collect(0)
    with pytest.raises(budget.BudgetExceeded):
        budget.check()


def test_a_zero_budget_raises_at_the_first_check() -> None:
    budget.set_budget(0.0)
    with pytest.raises(budget.BudgetExceeded):
        budget.check()


def test_no_budget_never_raises() -> None:
    budget.set_budget(math.inf)
    spin(0.02)
    budget.check()


def test_each_item_starts_its_own_clocks() -> None:
    budget.set_budget(0.05)
    budget.check()
    spin(0.04)
    budget.check()
    budget.set_budget(0.05)
    spin(0.04)  # before the item's first check: not the symbolic stage's
    budget.check()
    spin(0.03)
    budget.check()


IDENTITY = r"$\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}$"
SYMBOLIC_ITEMS = [
    (IDENTITY, rf"${IDENTITY[1:-1]} {IDENTITY[1:-1]}$"),
    ("x^2+2x+1", r"\boxed{(x+1)^2}"),
    (r"\frac{\sqrt{3}}{2}", r"\boxed{\sin(\pi/3)}"),
    ("y=2x+1", r"\boxed{2x-y+1=0}"),
]


@pytest.mark.parametrize(("gold", "response"), SYMBOLIC_ITEMS)
def test_a_correct_answer_stalled_past_the_budget_stays_correct(
    gold: str, response: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stall as long as three budgets, in the middle of the symbolic stage, grades
    nothing `timeout`: on a loaded machine the answer is as correct as on an idle one."""
    symbolic.to_sympy.cache_clear()
    compare.decide_cached.cache_clear()
    parse = fastparse.parse

    def stalled_parse(latex: str) -> Any:
        time.sleep(0.3)
        return parse(latex)

    monkeypatch.setattr(fastparse, "parse", stalled_parse)
    params = MathParams(symbolic_budget_s=0.1)
    out = V.verify(GradeInput("", response), params, V.prepare(params, gold))
    assert (out.verdict, out.score) == (Verdict.CORRECT, 1.0), out.reason
