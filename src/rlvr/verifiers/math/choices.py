r"""Multiple-choice answers, where the ground truth is an option's letter.

A response names its option in many ways: `The answer is (B)`, `Answer: (E) $78.20`,
`\boxed{C}`, `选项为 B`, `答案：B`, `**D**`, a bare `D`, or by the option's value
(`\boxed{6}` where the question lists `(B) 6`). The answer is read by the usual
extraction first; when that is not a letter, the option whose value it states is
the answer; only then is the last statement that names an option read.

A statement naming two options (`B or C`) names none: it is a hedge. Options are
read from the question (`(A) 5`, `A. 5`, `A) 5`, one per line or inline).
"""

from __future__ import annotations

import re

__all__ = ["letter_of", "option_letter", "options", "stated_letter"]

LETTERS = "ABCDEFGHIJ"
# `B`, `(B)`, `B.`, `B)`, `B: 800`, `(B) $78.20`, `\text{(B)}`, `**B**`.
_LETTER_RE = re.compile(
    r"^[\s*(\[{]*(?:\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?\(?([A-J])\)?(?![A-Za-z0-9(_^=])\}?[\s.:)\]*]*(.*)$", re.S
)
# A letter alone may be lower case (`\boxed{(d)}`).
_LONE_LETTER_RE = re.compile(r"^\(?([a-jA-J])\)?\.?$")
# Right after the letter, another option letter; or later, one joined by `or`/`and`.
_ANOTHER_OPTION_RE = re.compile(r"[\s,;/&|]*(?:(?:or|and|或|和)[\s]*)?\(?[A-J]\)?(?![A-Za-z0-9'])")
_OR_OPTION_RE = re.compile(
    r"(?:\b(?:or|and|possibly|maybe|perhaps|else)|或|和|\\lor|\\cup|\\quad|\\text\s*\{\s*or\s*\}|\\&|[+\-/&,;|])"
    r"\s*\(?[A-J]\)?(?![A-Za-z0-9'])"
)
# Option markers in a question: at a line start or after spaces, `(A)`, `A.`, `A)`, `A:`.
_OPTION_RE = re.compile(r"(?:^|(?<=\s))\(?([A-J])[).:](?=\s)|\(([A-J])\)", re.M)
_STATEMENT_RE = re.compile(
    r"(?i:answer|option|choice|correct|选项|答案|选|答)[^A-Za-z0-9\n]{0,16}?"
    r"(?i:is|are|为|是|:|：|=)?[^A-Za-z0-9\n]{0,6}?(\(?[A-J]\)?(?![A-Za-z0-9])[^\n]{0,60})"
)
MAX_OPTION_CHARS = 200
# A last line this short that is a letter (`D`, `(D).`) names that option.
MAX_BARE_LETTER_CHARS = 6
_OPTION_LINE_RE = re.compile(r"\s*\(?[A-J][.):]\s")


def letter_of(answer: str) -> str | None:
    """The option an extracted answer names (`(B) $78.20` is B; `B or C` is none)."""
    lone = _LONE_LETTER_RE.match(answer.strip())
    if lone is not None:
        return lone.group(1).upper()
    m = _LETTER_RE.match(answer.strip())
    if m is None:
        return None
    rest = m.group(2)
    if _ANOTHER_OPTION_RE.match(rest) is not None or _OR_OPTION_RE.search(rest) is not None:
        return None  # `A B C D`, `A/B`, `A; B`, `B or C`: several options
    return m.group(1)


def options(question: str) -> dict[str, str]:
    """The options a question lists, by letter; empty when it lists fewer than two."""
    marks = [(m.group(1) or m.group(2), m.start(), m.end()) for m in _OPTION_RE.finditer(question)]
    found: dict[str, str] = {}
    for i, (letter, _, end) in enumerate(marks):
        stop = marks[i + 1][1] if i + 1 < len(marks) else len(question)
        text = question[end:stop].strip().split("\n")[0].strip()
        if letter not in found and 0 < len(text) <= MAX_OPTION_CHARS:
            found[letter] = text
    return found if len(found) >= 2 else {}


def option_letter(answer: str, listed: dict[str, str]) -> str | None:
    """The option whose text is the answer (compared as written, spaces and `$`
    aside), when exactly one is."""
    key = _plain(answer)
    hits = [letter for letter, text in listed.items() if _plain(text) == key]
    return hits[0] if len(hits) == 1 else None


def _plain(text: str) -> str:
    return re.sub(r"[\s$\\]|\\text|\\mathrm", "", text).rstrip(".").casefold()


def stated_letter(text: str) -> str | None:
    """The option the last statement naming one names (`The correct option is C`)."""
    last = None
    for m in _STATEMENT_RE.finditer(text):
        last = m
    if last is not None:
        return letter_of(last.group(1))
    lines = [line for line in text.strip().splitlines() if line.strip()]
    bare = lines[-1].strip().strip("*").strip() if lines else ""
    if len(lines) > 1 and _OPTION_LINE_RE.match(lines[-2]) is not None:
        return None  # a listing of the options cut off at its next letter
    return letter_of(bare) if len(bare) <= MAX_BARE_LETTER_CHARS else None
