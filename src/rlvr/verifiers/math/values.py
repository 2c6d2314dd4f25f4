r"""The value a phrase states, where prose surrounds it.

- `trim_remark`: a number followed by a remark is that number: `36 (without
  quotes)`, `0.693, using base 2 logarithm`, `15,000 kcal m^-2 yr^-1`, `$150
  total`. Words that change the value (`1.5 million`, `3 over 4`, `2 pi`) and a
  second value (`2 and 3`) keep the phrase whole, so a list stays a list and is
  graded as one.
- `span_list`: math spans joined only by connectives (`$5$ and $1$`) are one list
  of values, never its first span alone.
- `JSON`: `{"reasoning": ..., "answer": "19"}`, as JSON-mode evaluations ask for it.

Every regex here is anchored or bounded; nothing nests quantifiers.
"""

from __future__ import annotations

import json
import re

__all__ = ["json_answer", "span_list", "trim_remark"]

_LEADING_NUMBER_RE = re.compile(r"[-+\u2212]?\$?[ \t]?\d[\d,]*(?:\.\d+)?(?:[ \t]?%)?(?![\d\w./^_{\\])")
# Words after a number that change its value or make it part of an expression.
_VALUE_WORDS = frozenset(
    "hundred thousand million billion trillion dozen dozens half halves thirds quarter quarters times plus "
    "minus over divided multiplied squared cubed pi root roots sqrt i e x y z n k to and or und et y и".split()
)
# A unit's exponent (`m^-2`, `s^{-1}`) is part of the unit, not a second value.
_EXPONENT_RE = re.compile(r"\^\{?[-+\u2212]?\d+\}?")
_DIGIT_RE = re.compile(r"\d")
# A remark starts with a word; after `,` or `(` it is a clause that may hold numbers
# of its own (`0.693, using base 2 logarithm`).
_FIRST_WORD_RE = re.compile(r"[ \t]*([(,;]?)[ \t]*([^\W\d_]+)")
# An inline `$...$` span is short and on one line; a `$` that "closes" further on is
# a currency sign.
MAX_INLINE_SPAN_CHARS = 200
# Math holds few words that are not commands; this many is a sentence between two amounts.
MIN_PROSE_WORDS = 5
_PROSE_WORD_RE = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{2,}\b")
_OPERATOR_ENDS = ("+", "-", "=", "*", "/", "x", "\u00d7", "\\times", "\\cdot")
_SPAN_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_CONNECTIVE_RE = re.compile(
    r"[ \t]*(?:,|;|&|\band\b|\bor\b|和|或|и|\bet\b|\by\b|\bund\b)[ \t]*(?:\band\b|\bor\b)?[ \t]*"
)
_JSON_KEYS = ("answer", "final_answer", "Answer", "finalAnswer", "final answer", "result")
MAX_JSON_CHARS = 20_000
# Where an object may start (`{"`); LaTeX braces never open with a quote.
_OBJECT_START_RE = re.compile(r'\{[ \t\r\n]*"')
MAX_JSON_STARTS = 4
# `"\\frac"` in JSON is a form feed and `rac`: a control character before letters in
# an answer is a LaTeX command whose backslash JSON read as an escape.
_LATEX_ESCAPES = {"\f": "\\f", "\b": "\\b", "\t": "\\t", "\r": "\\r", "\n": "\\n"}
_CONTROL_LETTER_RE = re.compile(r"([\f\b\t\r\n])([a-zA-Z])")
# The loose reading looks for the field near the end of the object only.
MAX_LOOSE_TAIL_CHARS = 2000
_LOOSE_FIELD_RE = re.compile(
    r'"(?:answer|final_answer|Answer|finalAnswer)"[ \t\r\n]*:[ \t\r\n]*'
    r'("(?:[^"\\]|\\.)*"|[-+]?[\d.,/]+)[ \t\r\n]*(?=[,}])'
)


def trim_remark(value: str) -> str:
    """`value` without the remark after its leading number, or `value` itself."""
    m = _LEADING_NUMBER_RE.match(value)
    if m is None or m.end() == len(value):
        return value
    rest = value[m.end() :]
    word = _FIRST_WORD_RE.match(rest)
    if word is None or word.group(2).casefold() in _VALUE_WORDS or "=" in rest:
        return value
    clause = bool(word.group(1))
    if not clause and _DIGIT_RE.search(_EXPONENT_RE.sub("", rest)) is not None:
        return value
    return m.group(0).strip()


def _span_at(text: str, at: int) -> tuple[str, int] | None:
    for left, right in _SPAN_DELIMS:
        if text.startswith(left, at):
            close = text.find(right, at + len(left))
            if close <= at + len(left):
                return None
            content = text[at + len(left) : close]
            if left == "$" and _currency(content):
                return None
            return content.strip(), close + len(right)
    return None


def _currency(content: str) -> bool:
    """`$15. I think ... $` or `$32,400 - $24,000`: dollar signs, not a math span (one
    spans lines or runs long, or ends where the next amount's sign begins)."""
    if "\n" in content or len(content) > MAX_INLINE_SPAN_CHARS:
        return True
    if len(_PROSE_WORD_RE.findall(content)) >= MIN_PROSE_WORDS:
        return True  # `$320. I think that's the way to go. So I'll go with $`
    return content[:1].isdigit() and content.rstrip().endswith(_OPERATOR_ENDS)


def span_list(tail: str) -> str | None:
    """The math span at the start of `tail` (`$7$, since ...` gives `7`); spans joined
    by connectives only (`$5$ and $1$`) are joined into one list (`5, 1`)."""
    first = _span_at(tail, 0)
    if first is None:
        return None
    values, end = [first[0]], first[1]
    while True:
        link = _CONNECTIVE_RE.match(tail, end)
        if link is None or link.end() == end:
            break
        nxt = _span_at(tail, link.end())
        if nxt is None:
            break
        values.append(nxt[0])
        end = nxt[1]
    return ", ".join(values)


def json_answer(text: str) -> str | None:
    """The `answer` field of the JSON object that the response is, or ends with
    (fenced or not)."""
    body = text.strip()
    if body.endswith("```"):
        body = body[:-3].rstrip()
        fence = body.rfind("```")
        if fence >= 0:
            body = body[fence + 3 :].removeprefix("json").strip()
    if not body.endswith("}") or len(body) > MAX_JSON_CHARS:
        return None
    decoder = json.JSONDecoder()
    for attempt, m in enumerate(_OBJECT_START_RE.finditer(body)):
        if attempt >= MAX_JSON_STARTS:
            break
        try:
            obj, end = decoder.raw_decode(body, m.start())
        except ValueError:
            continue
        if end == len(body):
            return _answer_field(obj)
    return _loose_answer_field(body)


def _loose_answer_field(body: str) -> str | None:
    """The last answer field of an object that is not valid JSON: models write LaTeX
    into it unescaped (`"\\frac{1}{2}"`, raw line breaks)."""
    last = None
    for m in _LOOSE_FIELD_RE.finditer(body, max(0, len(body) - MAX_LOOSE_TAIL_CHARS)):
        last = m
    if last is None:
        return None
    value = last.group(1)
    if value.startswith('"'):
        value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value.strip() or None


def _answer_field(obj: object) -> str | None:
    if not isinstance(obj, dict):
        return None
    for key in _JSON_KEYS:
        value = obj.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, str):
            return _CONTROL_LETTER_RE.sub(lambda m: _LATEX_ESCAPES[m.group(1)] + m.group(2), value).strip() or None
        if isinstance(value, int | float):
            return str(value)
    return None
