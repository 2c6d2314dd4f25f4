"""IFEval's instruction kwargs: one model per instruction type, with the kwargs it reads.

Every kwarg an instruction reads is required (IFEval's own checker fills a missing one
with a random value; a verifier must not), and each is checked for type and range.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, model_validator

from rlvr.verifiers.ifeval.text import LANGUAGE_CODES

MAX_INSTRUCTIONS = 32
MAX_LIST_ITEMS = 64
MAX_KWARG_CHARS = 10_000
MAX_COUNT = 1_000_000

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


def _one_character(value: str) -> str:
    """One character, counted literally (`a`, `#`, `!`, `é`); whitespace around it is
    dropped, but a lone space is itself."""
    char = value if len(value) == 1 else value.strip()
    if len(char) != 1:
        raise ValueError(f"must be one character, got {len(char)}")
    return char


Character = Annotated[str, AfterValidator(_one_character), Field(description="One character, counted literally.")]


class LetterKwargs(InstructionKwargs):
    letter: Character
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
IFEVAL_KWARGS_MODELS: dict[str, type[InstructionKwargs]] = {
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
