"""Finding the final answer in a response (and in a ground truth).

Modes (`params.extraction`):

- `auto`: the last complete `\\boxed{...}` / `\\fbox{...}`; else the last
  `<answer>...</answer>`; else the text after the last final-answer phrase
  ("final answer is", "the answer is", "Answer:"); else nothing.
- `boxed`: only `\\boxed{}` / `\\fbox{}`.
- `answer_tag`: only `<answer>...</answer>` (a box inside the tag is unwrapped).
- `strict`: only DAPO's `Answer: X` on the last non-empty line.

Hedging and self-correction: only the final answer counts, but an earlier boxed
answer is still a *candidate* unless the text between it and the next box retracts
it ("wait", "actually", "mistake", "let me recheck", ...). All candidates must be
equivalent to the ground truth for the response to be correct, so
`\\boxed{3} or \\boxed{4}` is a hedge (incorrect) while
`\\boxed{3}. Wait, that is wrong ... \\boxed{4}` is a self-correction graded on 4.

Every scan here is linear in the response length; no regex can backtrack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from rlvr.verifiers.math.normalize import strip_math_wrappers

Mode = Literal["auto", "boxed", "answer_tag", "strict"]

_BOX_TOKEN_RE = re.compile(r"\\(?:boxed|fbox)\s*\{|\\[{}]|[{}]")
_BOX_START_RE = re.compile(r"\\(?:boxed|fbox)")
# `\boxed 5` (no braces) is legal TeX for a one-token argument.
_BOX_BARE_RE = re.compile(r"\\boxed[ \t]+([^\s${}\\]+)")
_RETRACTION_RE = re.compile(
    r"\b(?:wait|actually|mistake|mistaken|error|wrong|incorrect|oops|correction|correcting|re-?check"
    r"|double[- ]check|re-?calculat\w*|re-?comput\w*|re-?evaluat\w*|reconsider|redo|revis\w*"
    r"|let me (?:re|check|verify)\w*|on second thought|hmm+|not right|scratch that)\b",
    re.IGNORECASE,
)
_ANSWER_TAG_OPEN = "<answer>"
_ANSWER_TAG_CLOSE = "</answer>"
_PHRASE_RE = re.compile(
    r"\b(?:final\s+answer|answer)\s*(?:is\b|:|=)\s*:?\s*|\*\*(?:final\s+)?answer:?\*\*:?\s*",
    re.IGNORECASE,
)
_STRICT_RE = re.compile(r"^\s*\**answer\**\s*:\s*(.+?)\s*$", re.IGNORECASE)
_DOLLAR_SPAN_RE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_SENTENCE_END_RE = re.compile(r"\.(?:\s|$)|\n")


@dataclass(slots=True)
class Extracted:
    """What extraction found: the final answer and any unretracted earlier candidates."""

    answer: str | None
    method: str
    candidates: list[str] = field(default_factory=list)


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """Every complete outermost `\\boxed{...}`/`\\fbox{...}` as (start, end, content).

    One pass with an explicit stack: nesting depth costs memory, not recursion, and
    contents are sliced only for the disjoint outermost boxes, so the work stays
    linear even for boxes nested thousands deep. Escaped braces `\\{ \\}` are set
    delimiters, not TeX groups.
    """
    if _BOX_START_RE.search(text) is None:
        return []
    found: list[tuple[int, int, int, int]] = []  # (start, end, content start, content end)
    stack: list[tuple[int, int]] = []  # (box start or -1 for a plain group, content start)
    for m in _BOX_TOKEN_RE.finditer(text):
        tok = m.group(0)
        if tok[0] == "\\" and len(tok) == 2:
            continue
        if tok == "}":
            if stack:
                start, content_start = stack.pop()
                if start >= 0:
                    found.append((start, m.end(), content_start, m.start()))
        elif tok == "{":
            stack.append((-1, m.end()))
        else:
            stack.append((m.start(), m.end()))
    for m in _BOX_BARE_RE.finditer(text):
        found.append((m.start(), m.end(), m.start(1), m.end(1)))
    found.sort()
    # A box nested in another is part of that answer, not a separate candidate.
    spans: list[tuple[int, int, str]] = []
    for start, end, cstart, cend in found:
        if spans and start < spans[-1][1]:
            continue
        spans.append((start, end, text[cstart:cend]))
    return spans


def _unretracted(text: str, spans: list[tuple[int, int, str]]) -> list[str]:
    """The boxed candidates that still stand: those after the last retraction."""
    standing: list[str] = []
    prev_end = -1
    for start, end, content in spans:
        if prev_end >= 0 and _RETRACTION_RE.search(text, prev_end, start) is not None:
            standing.clear()
        standing.append(content.strip())
        prev_end = end
    seen: list[str] = []
    for c in standing:
        if c not in seen:
            seen.append(c)
    return seen


def _from_boxes(text: str) -> Extracted | None:
    spans = boxed_spans(text)
    if not spans:
        return None
    candidates = _unretracted(text, spans)
    return Extracted(spans[-1][2].strip(), "boxed", candidates)


def _answer_tag_content(text: str) -> str | None:
    close = text.rfind(_ANSWER_TAG_CLOSE)
    if close < 0:
        return None
    open_ = text.rfind(_ANSWER_TAG_OPEN, 0, close)
    if open_ < 0:
        return None
    return text[open_ + len(_ANSWER_TAG_OPEN) : close].strip()


def _phrase_answer(text: str) -> str | None:
    last = None
    for m in _PHRASE_RE.finditer(text):
        last = m
    if last is None:
        return None
    tail = text[last.end() :].lstrip()
    # A math span right after the phrase is the answer, whatever follows it.
    span = _DOLLAR_SPAN_RE.match(tail)
    if span is not None:
        return next(g for g in span.groups() if g is not None).strip()
    end = _SENTENCE_END_RE.search(tail)
    answer = tail[: end.start()] if end is not None else tail
    answer = answer.strip().strip("*").strip()
    if _BOX_START_RE.match(answer):
        return None  # an unclosed box: the answer was never finished
    return answer or None


def _inside_tag(content: str) -> Extracted:
    boxed = _from_boxes(content)
    if boxed is not None:
        return Extracted(boxed.answer, "answer_tag+boxed", boxed.candidates)
    phrase = _phrase_answer(content)
    if phrase is not None:
        return Extracted(phrase, "answer_tag+phrase")
    return Extracted(strip_math_wrappers(content), "answer_tag")


def _strict(text: str) -> Extracted:
    lines = [line for line in text.rstrip().splitlines() if line.strip()]
    if not lines:
        return Extracted(None, "strict")
    m = _STRICT_RE.match(lines[-1])
    if m is None:
        return Extracted(None, "strict")
    return Extracted(strip_math_wrappers(m.group(1)), "strict")


def extract_answer(text: str, mode: Mode) -> Extracted:
    if mode == "strict":
        return _strict(text)
    if mode == "answer_tag":
        content = _answer_tag_content(text)
        return _inside_tag(content) if content is not None else Extracted(None, "answer_tag")
    boxed = _from_boxes(text)
    if boxed is not None or mode == "boxed":
        return boxed or Extracted(None, "boxed")
    content = _answer_tag_content(text)
    if content is not None:
        return _inside_tag(content)
    phrase = _phrase_answer(text)
    if phrase is not None:
        return Extracted(phrase, "phrase")
    return Extracted(None, "none")


def extract_gold(text: str) -> tuple[str, str]:
    """The answer inside a ground truth, as data sets store it, and how it was found.

    A bare answer (`\\frac{1}{2}`), a `$...$` span, or a reference solution ending in
    `\\boxed{}` (the MATH `solution` column).
    """
    spans = boxed_spans(text)
    if spans:
        return spans[-1][2].strip(), "boxed"
    stripped = text.strip()
    content = _answer_tag_content(stripped)
    if content is not None:
        return strip_math_wrappers(content), "answer_tag"
    unwrapped = strip_math_wrappers(stripped)
    if unwrapped != stripped and "$" not in unwrapped:
        return unwrapped, "math_span"
    # A short gold is the answer itself; only a long one is a solution to search.
    if len(stripped) > 80:
        phrase = _phrase_answer(stripped)
        if phrase is not None:
            return strip_math_wrappers(phrase), "phrase"
    return stripped, "bare"
