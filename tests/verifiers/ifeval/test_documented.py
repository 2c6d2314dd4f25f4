"""The documented disagreement classes `bench/ifeval_real.py` accepts, on IFEval's own rows
1122 and 1129, the two that ask for a `letter` outside a-z, and GPT-4's answers to them."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
from tests.verifiers.ifeval.documented import NO_LANGUAGE, REFERENCE_RANDOM_LETTER, disagreement_class

LETTER = "keywords:letter_frequency"
# josejg/instruction_following_eval@0c495b2f95155e8b10acb919ae283bfb4d5be6e2
# instruction_following_eval/data/input_data.jsonl, keys 1122, 1129 and 1130 (the letter check only)
HASH_ROW = {"let_relation": "at least", "letter": "#", "let_frequency": 4}  # 1122
BANG_ROW = {"let_relation": "at least", "letter": "!", "let_frequency": 6}  # 1129
T_ROW = {"let_relation": "less than", "letter": "t", "let_frequency": 2}  # 1130
# GPT-4's answers (the IFEval paper's), Podtech-AI/IFEval@5bdf377eb9cc20f16d377dc5c38413cee22550a6
# data/input_response_data_gpt4_20231107_145030.jsonl: 1122 whole, 1129's pitch cut after its 6th `!`.
GPT4_1122 = (
    "embracing the beauty of diversity, freedom and self-expression. join us in celebrating the art of being "
    "human. #playboy #freedom #diversity #selfexpression"
)
GPT4_1129 = (
    "Introducing Sunnis Ice Cream! The revolution in the world of desserts! We've created a new kind of ice cream "
    "that's not just delicious, but also gentle on the stomach! Yes, you heard it right! No more compromising on "
    "your love for ice cream due to digestive issues! Sunnis Ice Cream is here to change the game!"
)


def _letter_passes(kwargs: dict[str, Any], response: str) -> bool:
    gt = IFEvalGroundTruth.model_validate({"instruction_id_list": [LETTER], "kwargs": [kwargs]})
    out = IFEvalVerifier().verify(GradeInput("", response), IFEvalParams(), gt)
    return bool(out.details["instructions"][0]["pass"])


@pytest.mark.parametrize("kwargs", [HASH_ROW, BANG_ROW])
def test_a_letter_outside_a_to_z_is_the_random_letter_class(kwargs: dict[str, Any]) -> None:
    assert disagreement_class(LETTER, kwargs, ["any response"]) == REFERENCE_RANDOM_LETTER


def test_a_letter_in_a_to_z_is_no_documented_class() -> None:
    assert disagreement_class(LETTER, T_ROW, [GPT4_1122]) is None


def test_no_language_is_only_for_language_instructions_on_unreadable_text() -> None:
    assert disagreement_class("change_case:english_lowercase", {}, ["1234 5678"]) == NO_LANGUAGE
    assert disagreement_class("change_case:english_lowercase", {}, [GPT4_1122]) is None
    assert disagreement_class("punctuation:no_comma", {}, ["1234 5678"]) is None


@pytest.mark.parametrize(
    ("kwargs", "response", "char"),
    [(HASH_ROW, GPT4_1122, "#"), (BANG_ROW, GPT4_1129, "!")],
)
def test_a_non_letter_is_counted_literally_on_real_answers(kwargs: dict[str, Any], response: str, char: str) -> None:
    needed = kwargs["let_frequency"]
    assert response.count(char) == needed
    assert _letter_passes(kwargs, response)
    one_short = response[: response.rindex(char)]
    assert not _letter_passes(kwargs, one_short)
