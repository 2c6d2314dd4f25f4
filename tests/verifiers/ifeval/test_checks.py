"""Each instruction type on hand-written responses that follow it and that do not,
the deliberate differences from the reference, and the reward and loose modes."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.base import GradeInput, Verdict
from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
from rlvr.verifiers.ifeval.kwargs import IFEVAL_KWARGS_MODELS as KWARGS_MODELS
from rlvr.verifiers.ifeval.verifier import MAX_RESPONSE_CHARS

VERIFIER = IFEvalVerifier()
EN = "The weather is lovely today and we are going to walk in the park after lunch."
FR = "Le temps est magnifique aujourd'hui et nous allons nous promener dans le parc."

# (instruction id, kwargs, response, followed)
DR = "Dr. Who came. He left."
CASES: list[tuple[str, dict[str, Any], str, bool]] = [
    ("keywords:existence", {"keywords": ["Park", "lunch"]}, EN, True),
    ("keywords:existence", {"keywords": ["park", "dinner"]}, EN, False),
    ("keywords:frequency", {"keyword": "the", "frequency": 2, "relation": "at least"}, EN, True),
    ("keywords:frequency", {"keyword": "the", "frequency": 2, "relation": "less than"}, EN, False),
    ("keywords:forbidden_words", {"forbidden_words": ["rain", "walk"]}, EN, False),
    ("keywords:forbidden_words", {"forbidden_words": ["rain", "wal"]}, EN, True),
    ("keywords:letter_frequency", {"letter": "Z", "let_frequency": 2, "let_relation": "at least"}, "zigzag", True),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 2, "let_relation": "less than"}, "zigzag", False),
    ("language:response_language", {"language": "fr"}, FR, True),
    ("language:response_language", {"language": "fr"}, EN, False),
    ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "at least"}, DR, True),
    ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "less than"}, DR, False),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "One.\n***\nTwo.", True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "One.\n***\n***\nTwo.", False),
    ("length_constraints:number_words", {"num_words": 3, "relation": "less than"}, "two words", True),
    ("length_constraints:number_words", {"num_words": 3, "relation": "at least"}, "two words", False),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "so"},
     "First.\n\n\"So, second.", True),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "so"},
     "First.\n\nThen second.", False),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name], at [place].", True),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name, at\n place].", False),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Hi.\n\np. s. bye", True),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "Hi.\n\nP.S. bye", False),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "Intro\n* one\n- two", True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "Intro\n* one\n** two", False),
    ("detectable_format:constrained_response", {}, "Hmm. My answer is maybe.", True),
    ("detectable_format:constrained_response", {}, "My answer is probably.", False),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*a* and **b**", True),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*a* and * *", False),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2},
     "Section 1\nx\nSection 2\ny", True),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2}, "Section 1\nx", False),
    ("detectable_format:json_format", {}, '```json\n{"a": [1, 2]}\n```', True),
    ("detectable_format:json_format", {}, "{'a': 1}", False),
    ("detectable_format:title", {}, "<<A Title>>\nbody", True),
    ("detectable_format:title", {}, "<< >>\nbody <<\n>>", False),
    ("combination:two_responses", {}, "First.\n******\nSecond.", True),
    ("combination:two_responses", {}, "Same.\n******\nSame.", False),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi."}, "say hi. Hi!", True),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi."}, "Hi! Say hi.", False),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, 'Done. any other questions?"', True),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Any other questions? Done.", False),
    ("startend:quotation", {}, ' "quoted" ', True),
    ("startend:quotation", {}, '"', False),
    ("change_case:capital_word_frequency", {"capital_frequency": 3, "capital_relation": "at least"},
     "I DON'T know, OK?", True),
    ("change_case:capital_word_frequency", {"capital_frequency": 3, "capital_relation": "at least"},
     "I do not know, OK?", False),
    ("change_case:english_capital", {}, EN.upper(), True),
    ("change_case:english_capital", {}, FR.upper(), False),
    ("change_case:english_lowercase", {}, EN.lower(), True),
    ("change_case:english_lowercase", {}, EN, False),
    ("punctuation:no_comma", {}, "No commas here.", True),
    ("punctuation:no_comma", {}, "One, two.", False),
]  # fmt: skip


def _grade(iid: str, kwargs: dict[str, Any], response: str, **params: str) -> tuple[float, Verdict, dict[str, Any]]:
    gt = IFEvalGroundTruth.model_validate({"instruction_id_list": [iid], "kwargs": [kwargs]})
    out = VERIFIER.verify(GradeInput("", response), IFEvalParams.model_validate(params), gt)
    return out.score, out.verdict, out.details


def test_cases_cover_every_type_both_ways() -> None:
    assert {(iid, ok) for iid, _, _, ok in CASES} == {(iid, ok) for iid in KWARGS_MODELS for ok in (True, False)}


@pytest.mark.parametrize(("iid", "kwargs", "response", "followed"), CASES)
def test_instruction(iid: str, kwargs: dict[str, Any], response: str, followed: bool) -> None:
    score, verdict, details = _grade(iid, kwargs, response)
    assert details["instructions"] == [{"id": iid, "pass": followed}]
    assert (score, verdict) == ((1.0, Verdict.CORRECT) if followed else (0.0, Verdict.INCORRECT))


@pytest.mark.parametrize(
    ("iid", "kwargs", "response", "followed"),
    [
        # Literal text, not a pattern: the reference would read `c++` as a (broken) regex.
        ("keywords:existence", {"keywords": ["c++"]}, "I write C++ daily.", True),
        ("keywords:frequency", {"keyword": "a.b", "frequency": 1, "relation": "at least"}, "axb", False),
        ("keywords:forbidden_words", {"forbidden_words": ["e.g"]}, "eggs", True),
        ("detectable_content:postscript", {"postscript_marker": "P.S"}, "pass the salt", False),
        ("detectable_format:multiple_sections", {"section_spliter": "S.", "num_sections": 1}, "Sx 1", False),
        # Nothing to detect a language from is not the required language (the reference says it is).
        ("language:response_language", {"language": "ja"}, "1 2 3 !!!", False),
        # Deeper than Python's parser recurses: not JSON here; the reference raises.
        ("detectable_format:json_format", {}, "[" * 100_000 + "]" * 100_000, False),
    ],
)
def test_deliberate_differences_from_the_reference(
    iid: str, kwargs: dict[str, Any], response: str, followed: bool
) -> None:
    assert _grade(iid, kwargs, response)[2]["instructions"][0]["pass"] is followed


TWO = {
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words", "startend:quotation"],
    "kwargs": [{}, {"num_words": 4, "relation": "less than"}, {}],
}


@pytest.mark.parametrize(
    ("reward", "response", "score", "verdict", "passed"),
    [
        ("all", '"two words"', 1.0, Verdict.CORRECT, 3),
        ("all", "two words", 0.0, Verdict.INCORRECT, 2),
        ("fraction", "two words", 2 / 3, Verdict.PARTIAL, 2),
        ("fraction", "one, two, three, four", 0.0, Verdict.INCORRECT, 0),
        ("fraction", " \n ", 0.0, Verdict.NO_ANSWER, 0),
        # Too long to grade: the policy's own doing, so a 0, never a mask.
        ("all", "x" * (MAX_RESPONSE_CHARS + 1), 0.0, Verdict.INCORRECT, 0),
    ],
)
def test_reward_modes(reward: str, response: str, score: float, verdict: Verdict, passed: int) -> None:
    gt = IFEvalGroundTruth.model_validate(TWO)
    out = VERIFIER.verify(GradeInput("", response), IFEvalParams(reward=reward), gt)
    assert (out.score, out.verdict) == pytest.approx((score, verdict))
    assert [d["id"] for d in out.details["instructions"]] == TWO["instruction_id_list"]
    assert out.details["passed"] == passed and out.mask is False


@pytest.mark.parametrize(
    ("iid", "kwargs", "response"),
    [
        # The first line is a preamble, the last an offer: loose drops either.
        ("startend:quotation", {}, 'Here it is:\n"quoted"'),
        ("startend:end_checker", {"end_phrase": "The end."}, "Story. The end.\nWant another?"),
        # Markdown emphasis is removed.
        ("keywords:existence", {"keywords": ["bold claim"]}, "A **bold** claim."),
        ("punctuation:no_comma", {}, "Sure, here it is:\nNo commas in this one."),
    ],
)
def test_loose_mode_accepts_what_strict_refuses(iid: str, kwargs: dict[str, Any], response: str) -> None:
    assert _grade(iid, kwargs, response)[0] == 0.0
    score, _, details = _grade(iid, kwargs, response, mode="loose")
    assert score == 1.0 and details["mode"] == "loose"


def test_language_detection_is_reproducible() -> None:
    # langdetect samples at random; a short, ambiguous text must still get one verdict.
    text = "Ciao bella, come stai oggi?"
    results = {_grade("language:response_language", {"language": "it"}, text)[0] for _ in range(20)}
    assert len(results) == 1
