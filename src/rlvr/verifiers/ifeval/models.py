"""Params and ground truth of the `ifeval` verifier.

The ground truth is IFEval's `{"instruction_id_list": [...], "kwargs": [{...}, ...]}`,
as an object or as the JSON string datasets store it in. open-instruct's RLVR rows
(Tülu 3) are read too: there the object is wrapped in a one-element list, written as a
Python literal, names the list `instruction_id`, and may give `None` for an
instruction without kwargs. Each instruction's kwargs are checked against a model of
their own, so an unknown id, a missing or misspelt kwarg, or a wrong type is a 4xx that
names `kwargs[i].field` before anything is graded. IFEval's own checker fills a missing
kwarg with a random value; a verifier must not, so every kwarg an instruction reads is
required. `null` values are dropped first: the Hugging Face copy of IFEval lists every
kwarg name of every instruction, unused ones as `null`.
"""

from __future__ import annotations

import ast
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictInt, ValidationError, model_validator

from rlvr.verifiers.ifeval.text import LANGUAGE_CODES

MAX_INSTRUCTIONS = 32
MAX_LIST_ITEMS = 64
MAX_KWARG_CHARS = 10_000
MAX_COUNT = 1_000_000
MAX_GROUND_TRUTH_CHARS = 1_000_000

Count = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
Phrase = Annotated[str, Field(min_length=1, max_length=MAX_KWARG_CHARS, pattern=r"\S")]
Phrases = Annotated[list[Phrase], Field(min_length=1, max_length=MAX_LIST_ITEMS)]
Relation = Literal["less than", "at least"]


class InstructionKwargs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoKwargs(InstructionKwargs):
    pass


class KeywordsKwargs(InstructionKwargs):
    keywords: Phrases


class FrequencyKwargs(InstructionKwargs):
    keyword: Phrase
    frequency: Count
    relation: Relation


class ForbiddenKwargs(InstructionKwargs):
    forbidden_words: Phrases


class LetterKwargs(InstructionKwargs):
    letter: Annotated[str, Field(pattern=r"^\s*[A-Za-z]\s*$", description="One ASCII letter.")]
    let_frequency: Count
    let_relation: Relation


class LanguageKwargs(InstructionKwargs):
    language: Annotated[str, Field(description="A langdetect language code, e.g. `en`, `fr`, `zh-cn`.")]

    @model_validator(mode="after")
    def _known(self) -> LanguageKwargs:
        if self.language not in LANGUAGE_CODES:
            raise ValueError(f"unknown language {self.language!r}; known: {', '.join(sorted(LANGUAGE_CODES))}")
        return self


class SentencesKwargs(InstructionKwargs):
    num_sentences: Count
    relation: Relation


class ParagraphsKwargs(InstructionKwargs):
    num_paragraphs: Count


class WordsKwargs(InstructionKwargs):
    num_words: Count
    relation: Relation


class FirstWordKwargs(InstructionKwargs):
    num_paragraphs: Count
    nth_paragraph: Annotated[StrictInt, Field(ge=1, le=MAX_COUNT)]
    first_word: Phrase

    @model_validator(mode="after")
    def _in_range(self) -> FirstWordKwargs:
        if self.nth_paragraph > self.num_paragraphs:
            raise ValueError("nth_paragraph is larger than num_paragraphs")
        return self


class PlaceholdersKwargs(InstructionKwargs):
    num_placeholders: Count


class PostscriptKwargs(InstructionKwargs):
    postscript_marker: Phrase


class BulletsKwargs(InstructionKwargs):
    num_bullets: Count


class HighlightsKwargs(InstructionKwargs):
    num_highlights: Count


class SectionsKwargs(InstructionKwargs):
    section_spliter: Phrase
    num_sections: Count


class RepeatPromptKwargs(InstructionKwargs):
    prompt_to_repeat: Phrase


class EndKwargs(InstructionKwargs):
    end_phrase: Phrase


class CapitalWordsKwargs(InstructionKwargs):
    capital_frequency: Count
    capital_relation: Relation


# IFEval's 25 instruction types and the kwargs each reads.
KWARGS_MODELS: dict[str, type[InstructionKwargs]] = {
    "keywords:existence": KeywordsKwargs,
    "keywords:frequency": FrequencyKwargs,
    "keywords:forbidden_words": ForbiddenKwargs,
    "keywords:letter_frequency": LetterKwargs,
    "language:response_language": LanguageKwargs,
    "length_constraints:number_sentences": SentencesKwargs,
    "length_constraints:number_paragraphs": ParagraphsKwargs,
    "length_constraints:number_words": WordsKwargs,
    "length_constraints:nth_paragraph_first_word": FirstWordKwargs,
    "detectable_content:number_placeholders": PlaceholdersKwargs,
    "detectable_content:postscript": PostscriptKwargs,
    "detectable_format:number_bullet_lists": BulletsKwargs,
    "detectable_format:constrained_response": NoKwargs,
    "detectable_format:number_highlighted_sections": HighlightsKwargs,
    "detectable_format:multiple_sections": SectionsKwargs,
    "detectable_format:json_format": NoKwargs,
    "detectable_format:title": NoKwargs,
    "combination:two_responses": NoKwargs,
    "combination:repeat_prompt": RepeatPromptKwargs,
    "startend:end_checker": EndKwargs,
    "startend:quotation": NoKwargs,
    "change_case:capital_word_frequency": CapitalWordsKwargs,
    "change_case:english_capital": NoKwargs,
    "change_case:english_lowercase": NoKwargs,
    "punctuation:no_comma": NoKwargs,
}
InstructionId = Literal[
    "keywords:existence",
    "keywords:frequency",
    "keywords:forbidden_words",
    "keywords:letter_frequency",
    "language:response_language",
    "length_constraints:number_sentences",
    "length_constraints:number_paragraphs",
    "length_constraints:number_words",
    "length_constraints:nth_paragraph_first_word",
    "detectable_content:number_placeholders",
    "detectable_content:postscript",
    "detectable_format:number_bullet_lists",
    "detectable_format:constrained_response",
    "detectable_format:number_highlighted_sections",
    "detectable_format:multiple_sections",
    "detectable_format:json_format",
    "detectable_format:title",
    "combination:two_responses",
    "combination:repeat_prompt",
    "startend:end_checker",
    "startend:quotation",
    "change_case:capital_word_frequency",
    "change_case:english_capital",
    "change_case:english_lowercase",
    "punctuation:no_comma",
]


class IFEvalParams(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"reward": "all", "mode": "strict"}, {"reward": "fraction", "mode": "loose"}]},
    )

    reward: Literal["all", "fraction"] = Field(
        "all", description="`all`: 1 only if every instruction holds; `fraction`: the share that hold."
    )
    mode: Literal["strict", "loose"] = Field(
        "strict",
        description="IFEval's strict check, or its loose one: an instruction also holds if it holds once the "
        "response's first and/or last line or its `*` characters are removed.",
    )


_EXAMPLE: dict[str, Any] = {
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
    "kwargs": [{}, {"num_words": 50, "relation": "less than"}],
}


def _parse_string(data: Any) -> Any:
    """A ground truth stored as text: JSON, else a Python literal (open-instruct)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    if not isinstance(data, str):
        return data
    if len(data) > MAX_GROUND_TRUTH_CHARS:
        raise ValueError(f"ground truth longer than {MAX_GROUND_TRUTH_CHARS} characters")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(data)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"ground truth is a string but neither JSON nor a Python literal: {exc}") from exc


def _error_lines(index: int, exc: ValidationError) -> list[str]:
    lines = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err["loc"])
        lines.append(f"kwargs[{index}]{'.' + where if where else ''}: {err['msg']}")
    return lines


class IFEvalGroundTruth(BaseModel):
    """The instructions a response must follow, with their kwargs."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra={"examples": [_EXAMPLE, json.dumps(_EXAMPLE)]}
    )

    instruction_id_list: list[InstructionId] = Field(min_length=1, max_length=MAX_INSTRUCTIONS)
    kwargs: list[dict[str, Any]] = Field(
        max_length=MAX_INSTRUCTIONS, description="One object per instruction; `null` values are ignored."
    )
    # Filled by validation: `kwargs` checked against each instruction's model.
    _checked: tuple[InstructionKwargs, ...] = PrivateAttr(())

    @model_validator(mode="before")
    @classmethod
    def _from_dataset_forms(cls, data: Any) -> Any:
        data = _parse_string(data)
        if isinstance(data, list) and len(data) == 1:  # open-instruct: `[{...}]`
            data = _parse_string(data[0])
        if isinstance(data, dict) and "instruction_id" in data and "instruction_id_list" not in data:
            data = {("instruction_id_list" if k == "instruction_id" else k): v for k, v in data.items()}
        if isinstance(data, dict) and isinstance(data.get("kwargs"), list):
            data = {**data, "kwargs": [{} if kw is None else kw for kw in data["kwargs"]]}
        return data

    @model_validator(mode="after")
    def _check_kwargs(self) -> IFEvalGroundTruth:
        if len(self.kwargs) != len(self.instruction_id_list):
            raise ValueError(
                f"kwargs has {len(self.kwargs)} entries but instruction_id_list has {len(self.instruction_id_list)}"
            )
        checked, errors = [], []
        for index, (iid, raw) in enumerate(zip(self.instruction_id_list, self.kwargs, strict=True)):
            try:
                checked.append(KWARGS_MODELS[iid].model_validate({k: v for k, v in raw.items() if v is not None}))
            except ValidationError as exc:
                errors += _error_lines(index, exc)
        if errors:
            raise ValueError("; ".join(errors))
        self._checked = tuple(checked)
        return self

    @property
    def instructions(self) -> list[tuple[str, InstructionKwargs]]:
        """Each instruction id with its validated kwargs."""
        return list(zip(self.instruction_id_list, self._checked, strict=True))
