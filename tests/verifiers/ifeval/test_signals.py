"""The ifeval verifier's signals (`signals`): padding and keyword stuffing fire on their
attempts, in many forms, and stay silent on honest answers, repetition an instruction
asks for, and the score."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
from rlvr.verifiers.ifeval.signals import SIGNALS

V = IFEvalVerifier()
WORDS_100 = {
    "instruction_id_list": ["length_constraints:number_words"],
    "kwargs": [{"relation": "at least", "num_words": 100}],
}
PARAGRAPHS = {"instruction_id_list": ["length_constraints:number_paragraphs"], "kwargs": [{"num_paragraphs": 4}]}
RAIN_3 = {
    "instruction_id_list": ["keywords:frequency"],
    "kwargs": [{"relation": "at least", "keyword": "rain", "frequency": 3}],
}
EXISTS = {"instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": ["correlated", "experiencing"]}]}
REPEAT = {
    "instruction_id_list": ["combination:repeat_prompt"],
    "kwargs": [{"prompt_to_repeat": "Say the sky is blue. Say the sky is blue. Say the sky is blue."}],
}


def _graded(response: str, gt: dict[str, Any]) -> Outcome:
    return V.verify(GradeInput("", response), IFEvalParams(), IFEvalGroundTruth.model_validate(gt))


HONEST = (
    "Sleeping in a hammock is a pleasure many people never try. The gentle sway helps the body relax, "
    "and studies of rocking beds suggest that motion can deepen sleep. A hammock also keeps you off cold "
    "ground when camping, away from insects and damp. Setting one up takes two trees or sturdy posts, a "
    "pair of straps and a few minutes. Lying diagonally flattens the curve, so your back stays straight. "
    "Many travellers carry a light nylon hammock that packs smaller than a water bottle. At home, a "
    "hammock on a porch turns an ordinary evening into a small holiday, and it costs far less than a new "
    "mattress. Try one for a week and notice how you feel in the morning."
)


@pytest.mark.parametrize(
    ("response", "gt"),
    [
        ("Hammocks are nice. " + "The sky is blue today. " * 30, WORDS_100),
        ("Intro.\n" + "This sentence fills space to reach the count.\n" * 12, WORDS_100),
        ("\n\n".join(["Paragraph about hammocks and sleep."] * 4) + "\n\nMore.", PARAGRAPHS),
        ("A hammock is comfy! " * 25, WORDS_100),
        ("<think>plan</think>" + "Hammocks help you sleep better at night. " * 20, WORDS_100),
    ],
)
def test_padding_is_signalled(response: str, gt: dict[str, Any]) -> None:
    assert "padded_text" in _graded(response, gt).signals


@pytest.mark.parametrize(
    ("response", "gt"),
    [
        ("It is wet outside. rain rain rain", RAIN_3),
        ("Forecast: RAIN, rain, Rain. Stay inside.", RAIN_3),
        ("Notes: rain rain rain rain rain", RAIN_3),
        ("We met today. correlated correlated correlated experiencing", EXISTS),
        ("Tip: experiencing-experiencing-experiencing; correlated", EXISTS),
    ],
)
def test_keyword_stuffing_is_signalled(response: str, gt: dict[str, Any]) -> None:
    assert "keyword_stuffing" in _graded(response, gt).signals


@pytest.mark.parametrize(
    ("response", "gt"),
    [
        (HONEST, WORDS_100),
        ("The rain fell. After the rain we walked; the rain had stopped by noon.", RAIN_3),
        ("Results correlated with what patients were experiencing at home.", EXISTS),
        ("Say the sky is blue. Say the sky is blue. Say the sky is blue. The sky is blue indeed.", REPEAT),
        ("* One point.\n* Two points.\n* Three points.\n* Four points.", WORDS_100),
        ("\n\n".join(f"Paragraph {i} about hammocks, with its own words number {i}." for i in range(4)), PARAGRAPHS),
    ],
)
def test_honest_answers_raise_no_signal(response: str, gt: dict[str, Any]) -> None:
    assert _graded(response, gt).signals == ()


def test_signals_never_change_the_score() -> None:
    padded = _graded("The sky is blue today. " * 30, WORDS_100)
    assert padded.score == 1.0 and padded.signals == ("padded_text",)


def test_every_signal_is_declared_with_a_description_and_example() -> None:
    assert V.signals is SIGNALS and set(SIGNALS) == {"padded_text", "keyword_stuffing"}
    assert all(s.description and s.example for s in SIGNALS.values())
