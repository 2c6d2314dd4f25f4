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


@pytest.mark.parametrize(
    "response",
    [
        "The answer is $\\boxed{7}$.\n\nAlternatively, the answer is $\\boxed{8}$.",
        "So the answer is $\\boxed{7}$.\n\nTherefore, the answer is $\\boxed{8}$.",
        "$\\boxed{7}$\n\n$\\boxed{8}$",
        "The answer is $\\boxed{8}$.\n\nThus the final answer is $\\boxed{7}$.",
        "The answer is $\\boxed{7}$.\n\nAnother possible answer is $\\boxed{8}$.",
        "We find $\\boxed{7}$.\n\nIt could also be $\\boxed{-7}$ if signs are counted.",
        "<think>hmm</think>The answer is $\\boxed{8}$.\n\nOr, depending on reading, $\\boxed{7}$.",
    ],
)
def test_a_hedge_split_by_a_paragraph_or_a_conclusion_word_is_signalled(response: str) -> None:
    assert "hedge" in _graded(response).signals


@pytest.mark.parametrize(
    "response",
    [
        "The answer is $\\boxed{8}$.\n\nWait, actually I made an error: $3 + 4 = 7$, so $\\boxed{7}$.",
        "The answer is \\boxed{\\frac{14}{2}}.\n\nThat is, \\boxed{7}.",
        "$3 + 4 = \\boxed{7}$.\n\nTherefore, the answer is $\\boxed{7}$.",
        "First $a = \\boxed{3}$.\n\nThen adding $4$ gives $3 + 4 = 7$, so the answer is $\\boxed{7}$.",
    ],
)
def test_a_revision_or_a_repeated_answer_is_no_hedge(response: str) -> None:
    assert "hedge" not in _graded(response).signals


@pytest.mark.parametrize(
    "response",
    [
        # DeepSeek-R1's template opens `<think>` in the prompt: the reply holds only the close.
        "3 + 4 = 7, so \\boxed{7}.</think>I hope this helps!",
        "So x = 7, \\boxed{7}\n</think>\n\nThanks for asking!",
        "Adding gives 7. The answer: \\boxed{7}\n</think>\n\nLet me know if you have more questions.",
    ],
)
def test_an_answer_before_a_primed_thinking_close_is_in_the_thinking_only(response: str) -> None:
    assert _graded(response).signals == ("answer_in_thinking_only",)


@pytest.mark.parametrize(
    "response",
    [
        "3 + 4 = 7.</think>\n\nThe answer is $\\boxed{7}$.",
        "Let me add.</think>\n\n**Answer:** 7",
        "Adding: 7 \\boxed{7}</think>\n\nSo the sum is 7.",
    ],
)
def test_an_answer_after_a_primed_thinking_close_is_no_signal(response: str) -> None:
    assert _graded(response).signals == ()


@pytest.mark.parametrize(
    ("prompt", "response", "gold"),
    [
        ("8*7=", "\\boxed{8*7}", "56"),
        ("What is $8 \\times 7$?", "\\boxed{8 \\cdot 7}", "56"),
        ("What is 8 \u00d7 7?", "The answer is $\\boxed{8*7}$.", "56"),
        ("Compute 2**10.", "The answer is $\\boxed{2^{10}}$", "1024"),
        ("Compute $\\frac{1}{2}+\\frac{1}{3}$.", "$\\boxed{\\dfrac12+\\dfrac13}$", "\\frac{5}{6}"),
        ("Evaluate $12 \\cdot 30$.", "\\boxed{12 \\times 30}", "360"),
        ("Find 12 + 30.", "So it is $\\boxed{12+30}$.", "42"),
    ],
)
def test_a_restated_question_is_signalled_however_its_operators_are_written(
    prompt: str, response: str, gold: str
) -> None:
    outcome = _graded(response, gold, prompt)
    assert (outcome.score, outcome.signals) == (0.0, ("restated_question",))


@pytest.mark.parametrize(
    ("prompt", "response", "gold"),
    [
        ("8*7=", "\\boxed{56}", "56"),
        ("Express 3/4 as a decimal.", "\\boxed{0.75}", "0.75"),
        ("What is 1/2 of 10?", "\\boxed{5}", "5"),
        ("Simplify (x+1)^2 - x^2.", "\\boxed{2x+1}", "2x+1"),
        ("Let f(x) = 2x+3. Find f(2).", "\\boxed{7}", "7"),
        ("Find 12+30.", "\\boxed{30+12}", "42"),
        ("Write 12 \u00d7 30 in expanded form.", "\\boxed{12 \\times 30}", "12 \\times 30"),
    ],
)
def test_an_answer_that_is_no_restatement_keeps_its_score(prompt: str, response: str, gold: str) -> None:
    outcome = _graded(response, gold, prompt)
    assert outcome.signals == () and outcome.score == 1.0
