"""The ground-truth forms of real RLVR datasets, each on a few real rows quoted below
(the full sets are graded by `bench/ifeval_real.py`; the generator in `generate.py`
covers every instruction type)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
from rlvr.verifiers.ifeval.ids import IFBENCH_NEW
from rlvr.verifiers.ifeval.models import MAX_GROUND_TRUTH_CHARS

# IFEval's rows (instruction_id_list, kwargs), by key.
# josejg/instruction_following_eval@0c495b2f95155e8b10acb919ae283bfb4d5be6e2
# instruction_following_eval/data/input_data.jsonl (google-research's, byte-identical)
IFEVAL_ROWS: dict[int, tuple[list[str], list[dict[str, Any]]]] = {
    1000: (["punctuation:no_comma", "detectable_format:number_highlighted_sections", "length_constraints:number_words"],
           [{}, {"num_highlights": 3}, {"relation": "at least", "num_words": 300}]),
    1122: (["change_case:english_lowercase", "keywords:letter_frequency"],
           [{}, {"let_relation": "at least", "letter": "#", "let_frequency": 4}]),
    1129: (["keywords:letter_frequency", "combination:repeat_prompt"],
           [{"let_relation": "at least", "letter": "!", "let_frequency": 6},
            {"prompt_to_repeat": 'Write a short startup pitch for a new kind of ice cream called "Sunnis ice '
                                 'cream". The ice cream should be gentle on the stomach. Contain 6 or more '
                                 'exclamation marks "!" in your response.'}]),
    2549: (["length_constraints:nth_paragraph_first_word", "keywords:existence", "detectable_content:postscript"],
           [{"first_word": "bonding", "num_paragraphs": 3, "nth_paragraph": 3}, {"keywords": ["gao", "hearts"]},
            {"postscript_marker": "P.P.S"}]),
    3114: (["length_constraints:number_words", "keywords:forbidden_words", "startend:end_checker"],
           [{"relation": "at least", "num_words": 900}, {"forbidden_words": ["bark", "run"]},
            {"end_phrase": "Does this make sense?"}]),
}  # fmt: skip

# The Hugging Face copy (google/IFEval) lists all 24 kwargs in every dict, null where unused.
# Key 1019 as evalscope read it: github.com/modelscope/evalscope/issues/1543 (sample_metadata)
HF_ROW_1019 = json.loads(
    '{"instruction_id_list": ["change_case:english_lowercase"], "kwargs": [{"num_highlights": null, "relation": null, '
    '"num_words": null, "num_placeholders": null, "prompt_to_repeat": null, "num_bullets": null, "section_spliter": '
    'null, "num_sections": null, "capital_relation": null, "capital_frequency": null, "keywords": null, '
    '"num_paragraphs": null, "language": null, "let_relation": null, "letter": null, "let_frequency": null, '
    '"end_phrase": null, "forbidden_words": null, "keyword": null, "frequency": null, "num_sentences": null, '
    '"postscript_marker": null, "first_word": null, "nth_paragraph": null}]}'
)
HF_KWARG_NAMES = tuple(HF_ROW_1019["kwargs"][0])

# allenai/RLVR-IFeval ground truths (Tülu 3's func_name form), quoted verbatim in public tests.
# HimalayaAI/gymkhana@d05254b8a23fdb19c05581ddee8c3b4252e2e760 tests/envs/ifeval/test_ifeval_env.py
RLVR_IFEVAL_KEYWORD = (
    '{"func_name": "verify_keyword_frequency", "N": 17, "quantifier": null, "end_phrase": null, "keyword_list": null, '
    '"word": "nonsensorial", "forbidden_words": null, "letter": null, "i": null, "first_word": null, '
    '"postscript_marker": null, "options": null, "section_splitter": null, "original_prompt": null}'
)
# merak0514/JustRL-II@ff5e5c409aa765ae97b199b06f2a0ac26e30d4c0 tests/fast/rollout/rm_hub/test_rlvr_ifeval.py
RLVR_IFEVAL_LOWERCASE = (
    '{"func_name": "validate_lowercase", "N": null, "quantifier": null, "end_phrase": null, "keyword_list": null, '
    '"word": null, "forbidden_words": null, "letter": null, "i": null, "first_word": null, "postscript_marker": null, '
    '"options": null, "section_splitter": null, "original_prompt": null}'
)

# IFBench's test rows, by key; each kwargs dict there lists all 42 names, null where unused.
# allenai/IFBench@db69a6f05689830b0068b8f1529ebcfd2f3b164c data/IFBench_test.jsonl
IFBENCH_KWARG_NAMES = (
    "N capital_frequency capital_relation end_phrase first_word forbidden_words frequency keyword keyword1 keyword2 "
    "keyword3 keyword4 keyword5 keywords language let_frequency let_relation letter m max_words min_words n n_end "
    "n_start nth_paragraph num_bullets num_highlights num_paragraphs num_placeholders num_sections num_sentences "
    "num_words options percentage postscript_marker prompt_to_repeat reference_text relation section_spliter sep "
    "small_n word"
).split()
IFBENCH_ROWS: dict[str, tuple[str, dict[str, Any]]] = {
    "0": ("count:keywords_multiple", {"keyword1": "kaleidoscope", "keyword2": "nebula", "keyword3": "whisper",
                                      "keyword4": "labyrinth", "keyword5": "paradox"}),
    "60": ("repeat:repeat_change", {"prompt_to_repeat": "Write a python program to implement a simple JPEG "
                                                         "compression algorithm without any errors."}),
    "240": ("words:palindrome", {}),
}  # fmt: skip


def _score(response: str, gt: Any) -> float:
    return IFEvalVerifier().verify(GradeInput("", response), IFEvalParams(), IFEvalGroundTruth.model_validate(gt)).score


def _ids(gt: Any) -> list[str]:
    return IFEvalGroundTruth.model_validate(gt).instruction_id_list


@pytest.mark.parametrize("key", sorted(IFEVAL_ROWS))
def test_ifeval_rows_are_accepted_as_is_as_hugging_face_pads_them_and_as_open_instruct_stores_them(key: int) -> None:
    ids, kwargs = IFEVAL_ROWS[key]
    assert _ids({"instruction_id_list": ids, "kwargs": kwargs}) == ids
    assert _ids(json.dumps({"instruction_id_list": ids, "kwargs": kwargs})) == ids
    padded = [{**dict.fromkeys(HF_KWARG_NAMES), **kw} for kw in kwargs]
    gt = IFEvalGroundTruth.model_validate({"instruction_id_list": ids, "kwargs": padded})
    assert [kw.model_dump() for _, kw in gt.instructions] == kwargs
    # open-instruct's label: `str([{"instruction_id": [...], "kwargs": [...]}])`, a Python literal.
    assert _ids(str([{"instruction_id": ids, "kwargs": kwargs}])) == ids


def test_the_hugging_face_row_as_read_is_graded() -> None:
    assert _ids(HF_ROW_1019) == ["change_case:english_lowercase"]
    assert _score("\n\nwhat are the boys holding?", HF_ROW_1019) == 1.0  # the answer evalscope's issue shows
    assert _score("What are the boys holding?", HF_ROW_1019) == 0.0


def test_a_real_row_is_graded_the_same_in_every_form() -> None:
    ids, kwargs = IFEVAL_ROWS[3114]
    text = " ".join(["A dog is more likely at the park than the beach."] * 90) + " Does this make sense?"
    forms = [
        {"instruction_id_list": ids, "kwargs": kwargs},
        {"instruction_id_list": ids, "kwargs": [{**dict.fromkeys(HF_KWARG_NAMES), **kw} for kw in kwargs]},
        str([{"instruction_id": ids, "kwargs": kwargs}]),
    ]
    assert [_score(text, gt) for gt in forms] == [1.0] * 3
    assert [_score(text.replace("park", "run"), gt) for gt in forms] == [0.0] * 3  # a forbidden word


def test_if_rlvr_alias_of_the_letter_check() -> None:
    gt = {"instruction_id": ["letters:letter_counting2"], "kwargs": [{"letter": "#", "let_frequency": 2,
                                                                     "let_relation": "at least"}]}  # fmt: skip
    assert _score("#a #b", [json.dumps(gt)]) == 1.0
    assert _score("#a", [json.dumps(gt)]) == 0.0


def test_rlvr_ifeval_func_name_rows() -> None:
    assert _ids(RLVR_IFEVAL_KEYWORD) == ["verify_keyword_frequency"]
    text = " ".join(["nonsensorial"] * 17)
    assert _score(f"Darts. {text}.", RLVR_IFEVAL_KEYWORD) == 1.0
    assert _score(f"Darts. {text} nonsensorial.", RLVR_IFEVAL_KEYWORD) == 0.0  # exactly N, as if_functions counts
    assert _score("ipv6 is the successor to ipv4.", RLVR_IFEVAL_LOWERCASE) == 1.0
    assert _score("IPv6 Uses Capitals", RLVR_IFEVAL_LOWERCASE) == 0.0


@pytest.mark.parametrize("key", sorted(IFBENCH_ROWS))
def test_ifbench_rows_are_refused_naming_the_constraint(key: str) -> None:
    iid, kwargs = IFBENCH_ROWS[key]
    row = {"instruction_id_list": [iid], "kwargs": [{**dict.fromkeys(IFBENCH_KWARG_NAMES), **kwargs}]}
    assert iid in IFBENCH_NEW
    with pytest.raises(ValidationError) as info:
        IFEvalGroundTruth.model_validate(row)
    (err,) = info.value.errors()
    assert err["loc"] == ("instruction_id_list", 0)
    assert f"{iid!r} is one of IFBench's new constraints" in err["msg"]


@pytest.mark.parametrize(
    ("func", "kwargs", "response", "passes"),
    [
        ("verify_keywords", {"keyword_list": ["Robot", "ai"]}, "A robot and an AI.", True),
        ("verify_keywords", {"keyword_list": ["robot", "ai"]}, "A robot.", False),
        ("validate_forbidden_words", {"forbidden_words": ["bad"]}, "badminton", False),  # a substring, as there
        ("verify_letter_frequency", {"letter": "l", "N": 3}, "hello world", True),
        ("verify_letter_frequency", {"letter": "L", "N": 3}, "hello world", False),  # case-sensitive there
        ("verify_paragraph_count", {"N": 2}, "one\n* * *\ntwo", True),
        ("verify_paragraph_count", {"N": 2}, "one\n***\ntwo", False),
        ("validate_word_constraint", {"N": 10, "quantifier": "around"}, " ".join(["w"] * 11), True),
        ("validate_word_constraint", {"N": 10, "quantifier": "at most"}, " ".join(["w"] * 11), False),
        ("verify_sentence_constraint", {"N": 3, "quantifier": "around"}, "One. Two. Three. Four.", True),
        ("validate_paragraphs", {"N": 2, "i": 2, "first_word": "So"}, "Hi.\n\nSo it goes.", True),
        ("validate_paragraphs", {"N": 2, "i": 2, "first_word": "So"}, "Hi.\n\nThen so.", False),
        ("verify_postscript", {"postscript_marker": "P.S."}, "Body.\n\nP.S. more", True),
        ("verify_postscript", {"postscript_marker": "P.S."}, "Body. P.S.", False),
        ("validate_placeholders", {"N": 2}, "[a] and [b]", True),
        ("verify_bullet_points", {"N": 2}, "* a\n- b", True),
        ("validate_title", {}, "<<>> empty, then <<Odes>>", True),
        ("validate_choice", {"options": ["My answer is yes."]}, "My answer is yes.", True),
        ("validate_highlighted_sections", {"N": 2}, "*a* and *b*", True),
        ("validate_sections", {"N": 2, "section_splitter": "SECTION"}, "SECTION 1 a SECTION 2 b", True),
        ("validate_json_format", {}, '{"a": 1}', True),
        ("validate_json_format", {}, '```json\n{"a": 1}\n```', False),
        ("validate_repeat_prompt", {"original_prompt": "Say hi."}, "Say hi. Hi!", True),
        ("validate_two_responses", {}, "one ****** two", True),
        ("validate_uppercase", {}, "ALL CAPS 1, 2", True),
        ("validate_frequency_capital_words", {"N": 2, "quantifier": "at least"}, "NASA and ESA", True),
        ("validate_end", {"end_phrase": "Bye."}, "Well. Bye.\n", True),
        ("validate_quotation", {}, '"quoted"', True),
        ("validate_no_commas", {}, "a, b", False),
        ("validate_response_language", {"language": "en"}, "This is plainly an English sentence.", True),
    ],
)  # fmt: skip
def test_tulu_functions_keep_their_own_semantics(
    func: str, kwargs: dict[str, Any], response: str, passes: bool
) -> None:
    assert _score(response, {"func_name": func, **kwargs}) == float(passes)


@pytest.mark.parametrize(
    ("func", "kwargs", "response", "passes"),
    [
        # Upper or lower case needs a letter that has a case.
        ("validate_uppercase", {}, "123 456", False),
        ("validate_uppercase", {}, "\u4f60\u597d\u4e16\u754c", False),
        ("validate_uppercase", {}, "!!! ???", False),
        ("validate_uppercase", {}, "\u4f60\u597d ABC 1", True),
        ("validate_lowercase", {}, "...", False),
        ("validate_lowercase", {}, "42 + 7 = 49", False),
        ("validate_lowercase", {}, "\u0645\u0631\u062d\u0628\u0627", False),
        ("validate_lowercase", {}, "stra\u00dfe 1", True),
        # Highlights, placeholders and titles need something in them.
        ("validate_highlighted_sections", {"N": 3}, "******", False),
        ("validate_highlighted_sections", {"N": 2}, "* * and *  *", False),
        ("validate_highlighted_sections", {"N": 1}, "**bold**", True),
        ("validate_highlighted_sections", {"N": 2}, "**a** and **b**", True),
        ("validate_highlighted_sections", {"N": 3}, "*a**b* *c*", True),
        ("validate_placeholders", {"N": 3}, "[][][]", False),
        ("validate_placeholders", {"N": 2}, "[ ] [\t]", False),
        ("validate_placeholders", {"N": 2}, "[][name] and [ ] [date]", True),
        ("validate_title", {}, "<<>>", False),
        ("validate_title", {}, "<< >> and <<<>>>", False),
        ("validate_title", {}, "<<<Odes>>>", True),
        # A lone quotation mark does not quote anything.
        ("validate_quotation", {}, '"', False),
        ("validate_quotation", {}, '  "  ', False),
        ("validate_quotation", {}, '""', True),
    ],
)  # fmt: skip
def test_tulu_functions_do_not_reward_empty_forms(
    func: str, kwargs: dict[str, Any], response: str, passes: bool
) -> None:
    assert _score(response, {"func_name": func, **kwargs}) == float(passes)


@pytest.mark.parametrize("unknown", [6, 90_000])
def test_many_unknown_kwargs_are_one_error_per_instruction(unknown: int) -> None:
    kwargs = [{"num_words": 5, "relation": "less than", **{f"a{i}": 1 for i in range(unknown)}}, {}]
    with pytest.raises(ValidationError) as caught:
        IFEvalGroundTruth.model_validate(
            {"instruction_id_list": ["length_constraints:number_words", "punctuation:no_comma"], "kwargs": kwargs}
        )
    [error] = caught.value.errors()
    assert error["loc"] == ("kwargs", 0)
    assert f"{unknown} kwargs that length_constraints:number_words does not take: 'a0', 'a1'" in error["msg"]


def test_a_few_unknown_kwargs_are_each_named() -> None:
    with pytest.raises(ValidationError) as caught:
        IFEvalGroundTruth.model_validate(
            {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{"a": 1, "b": 2}]}
        )
    assert [e["loc"] for e in caught.value.errors()] == [("kwargs", 0, "a"), ("kwargs", 0, "b")]


def test_a_ground_truth_as_text_is_read_only_up_to_its_cap() -> None:
    row = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    text = json.dumps([row])
    assert IFEvalGroundTruth.model_validate(text + " " * (MAX_GROUND_TRUTH_CHARS - len(text))).instruction_id_list
    with pytest.raises(ValidationError, match=f"longer than {MAX_GROUND_TRUTH_CHARS} characters"):
        IFEvalGroundTruth.model_validate(text + " " * (MAX_GROUND_TRUTH_CHARS + 1 - len(text)))
