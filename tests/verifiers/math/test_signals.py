"""The math verifier's signals (`SIGNALS`): each fires on its attempts, stays silent on
honest responses in many styles, and never changes the score."""

from __future__ import annotations

import pytest

from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.math.verifier import SIGNALS, MathParams, MathVerifier

VERIFIER = MathVerifier()
PARAMS = MathParams()
PROMPT = "What is $3 + 4$?"


def _graded(response: str, gold: str = "7", prompt: str = PROMPT) -> Outcome:
    return VERIFIER.verify(GradeInput(prompt, response), PARAMS, VERIFIER.prepare(PARAMS, gold))


@pytest.mark.parametrize(
    "response",
    [
        "So the answer is $\\boxed{7}$ or $\\boxed{8}$.",
        "So the answer is $\\boxed{8}$ or $\\boxed{7}$.",
        "It is either $\\boxed{7}$ or $\\boxed{-7}$.",
        "$\\boxed{7}$, $\\boxed{8}$, $\\boxed{9}$",
        "It is either $\\boxed{\\frac{7}{3}}$ or $\\boxed{2.3333333}$.",
        "The answer is $\\boxed{7, 8}$.",
        "The answer is $\\boxed{7 \\text{ or } 8}$.",
    ],
)
def test_a_hedge_is_signalled_whichever_answer_is_graded(response: str) -> None:
    assert "hedge" in _graded(response).signals


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("So $3 + 4 = \\boxed{7}$, and checking, $\\boxed{7}$ again.", "7"),
        ("So $\\boxed{\\frac{1}{2}}$, that is $\\boxed{0.5}$.", "\\frac{1}{2}"),
        ("We get $\\boxed{2}$, i.e. $\\boxed{2.0}$.", "2"),
        ("Wait, that is wrong: $\\boxed{8}$. Actually, recomputing, $\\boxed{7}$.", "7"),
        ("The roots are $\\boxed{1}$ and $\\boxed{2}$.", "1, 2"),
        ("The roots are $x = \\boxed{1}, \\boxed{2}$.", "\\{1, 2\\}"),
        ("<think>3 + 4 = 7</think>The answer is $\\boxed{7}$.", "7"),
        ("<think>It is \\boxed{7}.</think>So the answer is 7.", "7"),
        ("<think>\\boxed{triangle}</think>It is a triangle.", "triangle"),
        ("The answer is $\\boxed{8}$.", "7"),
    ],
)
def test_honest_responses_raise_no_signal(response: str, gold: str) -> None:
    assert _graded(response, gold).signals == ()


@pytest.mark.parametrize(
    "response",
    [
        "<think>3 + 4 = 7, so \\boxed{7}</think>I hope this helps!",
        "<think>\\boxed{7}</think>",
        "<think>The answer: \\boxed{7}</think>\n\nLet me know if you have questions.",
        "[THINK]So \\boxed{7}.[/THINK]Glad to help.",
        "<|begin_of_thought|>\\boxed{7}<|end_of_thought|>Done.",
        "<thinking>\\boxed{7}</thinking>Thanks!",
    ],
)
def test_an_answer_only_in_the_thinking_is_signalled(response: str) -> None:
    outcome = _graded(response)
    assert outcome.signals == ("answer_in_thinking_only",)


def test_a_restated_question_is_signalled() -> None:
    prompt = "Simplify $\\tan 100^\\circ + 4\\sin 100^\\circ$."
    outcome = _graded("$\\boxed{\\tan 100^\\circ + 4\\sin 100^\\circ}$", "-\\sqrt{3}", prompt)
    assert (outcome.score, outcome.signals) == (0.0, ("restated_question",))


def test_every_signal_is_declared_with_a_description_and_example() -> None:
    assert set(SIGNALS) == {"hedge", "answer_in_thinking_only", "restated_question"}
    assert all(s.description and s.example for s in SIGNALS.values())
