"""Ground truth and params of `ifeval`: every bad shape is refused, naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams
from rlvr.verifiers.ifeval.kwargs import IFEVAL_KWARGS_MODELS as KWARGS_MODELS
from rlvr.verifiers.ifeval.kwargs import FrequencyKwargs, NoKwargs

ADAPTER: TypeAdapter[IFEvalGroundTruth] = TypeAdapter(IFEvalGroundTruth)


def _gt(ids: list[str], kwargs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"instruction_id_list": ids, "kwargs": kwargs}


def _error(data: Any) -> str:
    with pytest.raises(ValidationError) as info:
        ADAPTER.validate_python(data)
    return str(info.value)


def test_all_25_ifeval_instruction_types_are_known() -> None:
    assert len(KWARGS_MODELS) == 25
    families = {iid.split(":")[0] for iid in KWARGS_MODELS}
    assert families == {
        "keywords", "language", "length_constraints", "detectable_content", "detectable_format",
        "combination", "startend", "change_case", "punctuation",
    }  # fmt: skip


def test_valid_ground_truth_keeps_each_instructions_kwargs() -> None:
    gt = ADAPTER.validate_python(
        _gt(
            ["punctuation:no_comma", "keywords:frequency"],
            [{}, {"keyword": "fox", "frequency": 2, "relation": "at least"}],
        )
    )
    assert gt.instructions == [
        ("punctuation:no_comma", NoKwargs()),
        ("keywords:frequency", FrequencyKwargs(keyword="fox", frequency=2, relation="at least")),
    ]


def test_json_string_ground_truth_as_open_instruct_stores_it() -> None:
    data = _gt(["length_constraints:number_words"], [{"num_words": 5, "relation": "less than"}])
    assert ADAPTER.validate_python(json.dumps(data)).instruction_id_list == ["length_constraints:number_words"]


def test_open_instruct_rlvr_form() -> None:
    # Tülu 3's RLVR rows: a Python literal of a one-element list, `instruction_id`, `None` kwargs.
    label = (
        "[{'instruction_id': ['punctuation:no_comma', 'startend:end_checker'],"
        " 'kwargs': [None, {'end_phrase': 'Bye.'}]}]"
    )
    gt = ADAPTER.validate_python(label)
    assert [iid for iid, _ in gt.instructions] == ["punctuation:no_comma", "startend:end_checker"]
    assert ADAPTER.validate_python([json.dumps({"instruction_id": ["startend:quotation"], "kwargs": [{}]})])


def test_null_kwargs_of_the_hugging_face_copy_are_ignored() -> None:
    kwargs = {"num_words": None, "relation": None, "keyword": None, "num_highlights": 3}
    gt = ADAPTER.validate_python(_gt(["detectable_format:number_highlighted_sections"], [kwargs]))
    assert gt.instructions[0][1].model_dump() == {"num_highlights": 3}


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (_gt(["keywords:nonsense"], [{}]), "instruction_id_list.0"),
        (_gt(["punctuation:no_comma", "startend:quotation"], [{}]), "kwargs has 1 entries"),
        (_gt(["length_constraints:number_words"], [{"num_words": 5}]), "kwargs.0.relation"),
        (_gt(["length_constraints:number_words"], [{"num_word": 5, "relation": "at least"}]), "kwargs.0.num_word"),
        (_gt(["length_constraints:number_words"], [{"num_words": "5", "relation": "at least"}]), "kwargs.0.num_words"),
        (_gt(["length_constraints:number_words"], [{"num_words": 5, "relation": "at most"}]), "kwargs.0.relation"),
        (_gt(["length_constraints:number_words"], [{"num_words": -1, "relation": "at least"}]), "kwargs.0.num_words"),
        (_gt(["length_constraints:number_words"], [{"num_words": True, "relation": "less than"}]), "num_words"),
        (_gt(["punctuation:no_comma"], [{"extra": 1}]), "kwargs.0.extra"),
        (_gt(["keywords:existence"], [{"keywords": []}]), "kwargs.0.keywords"),
        (_gt(["keywords:existence"], [{"keywords": ["  "]}]), "kwargs.0.keywords.0"),
        (_gt(["keywords:letter_frequency"], [{"letter": "ab", "let_frequency": 2, "let_relation": "at least"}]),
         "kwargs.0.letter"),
        (_gt(["language:response_language"], [{"language": "klingon"}]), "unknown language 'klingon'"),
        (_gt(["length_constraints:nth_paragraph_first_word"],
             [{"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "so"}]), "nth_paragraph is larger"),
        (_gt(["combination:repeat_prompt"], [{}]), "kwargs.0.prompt_to_repeat"),
        (_gt([], []), "instruction_id_list"),
        ({"instruction_id_list": ["punctuation:no_comma"]}, "kwargs"),
        ({"func_name": "validate_sentences"}, "unknown instruction id 'validate_sentences'"),
        ({"func_name": "validate_word_constraint", "N": 5, "quantifier": "less than"}, "kwargs.0.quantifier"),
        # An id that is not a string (unhashable ones included) is refused, never a TypeError.
        ({"instruction_id_list": [["a"]], "kwargs": [{}]}, "instruction_id_list.0"),
        ({"instruction_id": [{"a": 1}], "kwargs": [{}]}, "instruction_id_list.0"),
        ([{"instruction_id": ["punctuation:no_comma", ["a"]], "kwargs": [None, None]}], "instruction_id_list.1"),
        ("{'instruction_id': [{1, 2}], 'kwargs': [{}]}", "instruction_id_list.0"),
        ({"instruction_id_list": [3], "kwargs": [{}]}, "instruction_id_list.0"),
        ({"func_name": ["validate_lowercase"]}, "instruction_id_list.0"),
        ("{not json", "neither JSON nor a Python literal"),
        ("__import__('os')", "neither JSON nor a Python literal"),
        ("[" * 1000 + "]" * 1000, "neither JSON nor a Python literal"),
    ],
)  # fmt: skip
def test_bad_ground_truth_names_the_field(data: Any, named: str) -> None:
    assert named in _error(data)


def test_errors_of_several_instructions_are_all_reported() -> None:
    message = _error(_gt(["keywords:frequency", "startend:end_checker"], [{"keyword": "x"}, {}]))
    assert "kwargs.0.frequency" in message and "kwargs.0.relation" in message
    assert "kwargs.1.end_phrase" in message


def test_params_reject_unknown_keys_and_values() -> None:
    assert IFEvalParams().reward == "all" and IFEvalParams().mode == "strict"
    for bad in ({"reward": "some"}, {"mode": "lenient"}, {"loose": True}):
        with pytest.raises(ValidationError):
            IFEvalParams.model_validate(bad)


def test_schemas_carry_examples_that_validate() -> None:
    gt_schema = ADAPTER.json_schema()
    assert gt_schema["examples"]
    for example in gt_schema["examples"]:
        ADAPTER.validate_python(example)
    for example in IFEvalParams.model_json_schema()["examples"]:
        IFEvalParams.model_validate(example)
