"""Tülu 3's original IFEval ground truth: `{"func_name": "validate_lowercase", ...}`.

`allenai/RLVR-IFeval` names one of the 25 functions of open-instruct's
`open_instruct/if_functions.py` and its arguments by their own names (`N`,
`quantifier`, `keyword_list`, ...), every unused one `null`. open-instruct grades
those rows with `IFEvalVerifierOld`, whose semantics are not IFEval's (exact counts,
`around`, `at most`, plain substrings, its own sentence splitter), so each function is
implemented here as it behaves there, on the answer stripped of its ends as
open-instruct strips it. Deliberate differences, each where open-instruct's function
would reward a response that does not do what the instruction asks:

- `validate_uppercase` / `validate_lowercase` need a cased letter: `123 456`, `...` or
  `你好世界` is in neither case (open-instruct: `text == text.upper()` holds for them).
- `validate_highlighted_sections`, `validate_placeholders` and `validate_title` count
  only a `*...*`, `[...]` or `<<...>>` with something in it besides blanks (and, for
  a title, `<`/`>`): `******`, `[][][]` and `<<>>` hold none. A blank pair of stars is
  no highlight, and its closing star may open the next, so `**bold**` is one.
- `validate_quotation` needs more than the lone `"` that both starts and ends `"`.
- A response langdetect reads nothing in is in no language (open-instruct raises).
- The bracket, star and angle-bracket scans are linear (its `.*?` regexes are
  quadratic on a long line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt, model_validator

from rlvr.verifiers.ifeval import kwargs as m
from rlvr.verifiers.ifeval import text as t

Quantifier = Literal["at least", "around", "at most"]
Count = m.Count
AROUND_SHARE = 0.1  # `around N` words or capital words: within 10% of N (at least 1)
AROUND_SENTENCES = 1
PARAGRAPH_DIVIDER = "* * *"
TWO_RESPONSES_SEPARATOR = "******"
_WORD = re.compile(r"\b\w+\b")
_CAPITAL_WORD = re.compile(r"\b[A-Z]+\b")
_SENTENCE_BREAK = re.compile(r"(?<!\w\.\w.)(?<![A-Z][a-z]\.)(?<=\.|\?|!)\s")


class Keywords(m.InstructionKwargs):
    keyword_list: m.Phrases


class KeywordFrequency(m.InstructionKwargs):
    word: m.Phrase
    N: Count


class Forbidden(m.InstructionKwargs):
    forbidden_words: m.Phrases


class Letter(m.InstructionKwargs):
    letter: m.Character
    N: Count


class Language(m.LanguageKwargs):
    pass


class CountOnly(m.InstructionKwargs):
    N: Count


class Quantified(m.InstructionKwargs):
    N: Count
    quantifier: Quantifier


class Paragraphs(m.InstructionKwargs):
    N: Annotated[StrictInt, Field(ge=1, le=m.MAX_COUNT)]
    first_word: m.Phrase
    i: Annotated[StrictInt, Field(ge=1, le=m.MAX_COUNT)]

    @model_validator(mode="after")
    def _in_range(self) -> Paragraphs:
        if self.i > self.N:
            raise ValueError("i is larger than N")
        return self


class Postscript(m.InstructionKwargs):
    postscript_marker: m.Phrase


class Choice(m.InstructionKwargs):
    options: m.Phrases


class Sections(m.InstructionKwargs):
    N: Count
    section_splitter: m.Phrase


class RepeatPrompt(m.InstructionKwargs):
    original_prompt: m.Phrase


class End(m.InstructionKwargs):
    end_phrase: m.Phrase


def _quantified(actual: int, kw: Quantified, around: int) -> bool:
    if kw.quantifier == "at least":
        return actual >= kw.N
    if kw.quantifier == "at most":
        return actual <= kw.N
    return abs(actual - kw.N) <= around


def _around_share(n: int) -> int:
    return max(round(n * AROUND_SHARE), 1)


def _line_pairs(text: str, opening: str, closing: str, blank: str = "") -> int:
    """Matches of `<opening>(.*?)<closing>` (no newline inside) with something in them
    besides whitespace and the characters of `blank`, in one pass. After a blank pair,
    a closing that could also open is read as an opening."""
    count, pos = 0, 0
    while True:
        start = text.find(opening, pos)
        if start < 0:
            return count
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        stop = text.find(closing, start + len(opening), end)
        if stop < 0:
            pos = end + 1
        elif text[start + len(opening) : stop].strip().strip(blank).strip():
            count += 1
            pos = stop + len(closing)
        else:
            pos = stop if closing == opening else stop + len(closing)


def verify_keywords(text: str, kw: Keywords) -> bool:
    return all(keyword.lower() in text.lower() for keyword in kw.keyword_list)


def verify_keyword_frequency(text: str, kw: KeywordFrequency) -> bool:
    word = kw.word.lower()
    return sum(1 for found in _WORD.finditer(text.lower()) if found.group() == word) == kw.N


def validate_forbidden_words(text: str, kw: Forbidden) -> bool:
    return not any(word.lower() in text.lower() for word in kw.forbidden_words)


def verify_letter_frequency(text: str, kw: Letter) -> bool:
    return text.count(kw.letter) == kw.N


def validate_response_language(text: str, kw: Language) -> bool:
    return t.detect_language(text) == kw.language


def verify_paragraph_count(text: str, kw: CountOnly) -> bool:
    cleaned = "\n".join(line.strip() for line in text.splitlines()).strip()
    paragraphs = cleaned.split(PARAGRAPH_DIVIDER)
    return all(p.strip() for p in paragraphs) and len(paragraphs) == kw.N


def validate_word_constraint(text: str, kw: Quantified) -> bool:
    return _quantified(len(text.split()), kw, _around_share(kw.N))


def verify_sentence_constraint(text: str, kw: Quantified) -> bool:
    return _quantified(len(_SENTENCE_BREAK.split(text)), kw, AROUND_SENTENCES)


def validate_paragraphs(text: str, kw: Paragraphs) -> bool:
    paragraphs = text.split("\n\n")
    return len(paragraphs) == kw.N and paragraphs[kw.i - 1].strip().startswith(kw.first_word)


def verify_postscript(text: str, kw: Postscript) -> bool:
    at = text.find(kw.postscript_marker)
    return at >= 0 and len(text[at:].strip()) > len(kw.postscript_marker)


def validate_placeholders(text: str, kw: CountOnly) -> bool:
    return _line_pairs(text, "[", "]") >= kw.N


def verify_bullet_points(text: str, kw: CountOnly) -> bool:
    return sum(1 for line in text.split("\n") if line.strip().startswith(("*", "-"))) == kw.N


def validate_title(text: str, kw: m.NoKwargs) -> bool:
    return _line_pairs(text, "<<", ">>", blank="<>") > 0


def validate_choice(text: str, kw: Choice) -> bool:
    return any(option in text for option in kw.options)


def validate_highlighted_sections(text: str, kw: CountOnly) -> bool:
    return _line_pairs(text, "*", "*") >= kw.N


def validate_sections(text: str, kw: Sections) -> bool:
    sections = text.split(kw.section_splitter)
    if sections[0] == "":
        sections.pop(0)
    return len(sections) == kw.N


def validate_json_format(text: str, kw: m.NoKwargs) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def validate_repeat_prompt(text: str, kw: RepeatPrompt) -> bool:
    return text.startswith(kw.original_prompt)


def validate_two_responses(text: str, kw: m.NoKwargs) -> bool:
    if text.count(TWO_RESPONSES_SEPARATOR) != 1:
        return False
    first, second = text.split(TWO_RESPONSES_SEPARATOR)
    return first.strip() != second.strip()


# `text != text.lower()`: a letter that has a lower case is in upper case, and so on.
def validate_uppercase(text: str, kw: m.NoKwargs) -> bool:
    return text == text.upper() and text != text.lower()


def validate_lowercase(text: str, kw: m.NoKwargs) -> bool:
    return text == text.lower() and text != text.upper()


def validate_frequency_capital_words(text: str, kw: Quantified) -> bool:
    return _quantified(sum(1 for _ in _CAPITAL_WORD.finditer(text)), kw, _around_share(kw.N))


def validate_end(text: str, kw: End) -> bool:
    return text.endswith(kw.end_phrase)


def validate_quotation(text: str, kw: m.NoKwargs) -> bool:
    return len(text) > 1 and text.startswith('"') and text.endswith('"')


def validate_no_commas(text: str, kw: m.NoKwargs) -> bool:
    return "," not in text


_FUNCTIONS: dict[str, tuple[type[m.InstructionKwargs], Callable[[str, Any], bool]]] = {
    "verify_keywords": (Keywords, verify_keywords),
    "verify_keyword_frequency": (KeywordFrequency, verify_keyword_frequency),
    "validate_forbidden_words": (Forbidden, validate_forbidden_words),
    "verify_letter_frequency": (Letter, verify_letter_frequency),
    "validate_response_language": (Language, validate_response_language),
    "verify_paragraph_count": (CountOnly, verify_paragraph_count),
    "validate_word_constraint": (Quantified, validate_word_constraint),
    "verify_sentence_constraint": (Quantified, verify_sentence_constraint),
    "validate_paragraphs": (Paragraphs, validate_paragraphs),
    "verify_postscript": (Postscript, verify_postscript),
    "validate_placeholders": (CountOnly, validate_placeholders),
    "verify_bullet_points": (CountOnly, verify_bullet_points),
    "validate_title": (m.NoKwargs, validate_title),
    "validate_choice": (Choice, validate_choice),
    "validate_highlighted_sections": (CountOnly, validate_highlighted_sections),
    "validate_sections": (Sections, validate_sections),
    "validate_json_format": (m.NoKwargs, validate_json_format),
    "validate_repeat_prompt": (RepeatPrompt, validate_repeat_prompt),
    "validate_two_responses": (m.NoKwargs, validate_two_responses),
    "validate_uppercase": (m.NoKwargs, validate_uppercase),
    "validate_lowercase": (m.NoKwargs, validate_lowercase),
    "validate_frequency_capital_words": (Quantified, validate_frequency_capital_words),
    "validate_end": (End, validate_end),
    "validate_quotation": (m.NoKwargs, validate_quotation),
    "validate_no_commas": (m.NoKwargs, validate_no_commas),
}


def _on_stripped(check: Callable[[str, Any], bool]) -> Callable[[str, Any], bool]:
    def stripped(text: str, kw: Any) -> bool:
        return check(text.strip(), kw)

    return stripped


KWARGS_MODELS: dict[str, type[m.InstructionKwargs]] = {name: model for name, (model, _) in _FUNCTIONS.items()}
CHECKS: dict[str, Callable[[str, Any], bool]] = {name: _on_stripped(check) for name, (_, check) in _FUNCTIONS.items()}
