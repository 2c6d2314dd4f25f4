"""Finding the final answer in a response (and in a ground truth).

The final answer is what the response states last, as a human grader reads it.
Modes (`params.extraction`):

- `auto` (default): hidden text (HTML comments, `\\phantom`, white text) is
  dropped first. When the response has a `</think>`, the text after it is read
  first (an `<answer>` there wins over boxes inside the thinking); the thinking is
  read only when nothing is found after it. In the text read: the last complete
  `\\boxed{...}` / `\\fbox{...}` that is neither empty, negated ("not
  \\boxed{12}") nor retracted by later text ("wait, ..."); else the last
  `<answer>...</answer>`; else, in order, the finders of `fallbacks.py`: GSM8K's
  `#### 18`, an `Answer: 18` / "the answer is" line, a final sentence that states
  a value, the last side of a final equation, an unclosed `<answer>`, the last math
  span of the final paragraph.
- `strict`: only boxes and `<answer>` tags, as versions before 2.0 read (no prose at all).
- `boxed`: only `\\boxed{}` / `\\fbox{}`.
- `answer_tag`: only `<answer>...</answer>` (a box inside the tag is unwrapped).
- `answer_line`: only DAPO's `Answer: X` on the last non-empty line.

Every extracted answer loses stray delimiters (`cleanup.strip_stray_delimiters`).
`Extracted.method` names where the answer came from; the verifier reports it.

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
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Literal, get_args

from rlvr.verifiers.math import fallbacks
from rlvr.verifiers.math.cleanup import remove_hidden, strip_stray_delimiters
from rlvr.verifiers.math.fallbacks import RETRACTION_RE
from rlvr.verifiers.math.normalize import strip_math_wrappers
from rlvr.verifiers.math.values import json_answer
from rlvr.verifiers.templates import reply_text

Mode = Literal["auto", "strict", "boxed", "answer_tag", "answer_line"]
MODES: tuple[Mode, ...] = get_args(Mode)

# How many characters before a box are read for a negation ("is not \boxed{12}").
NEGATION_WINDOW = 16
_NEGATION_BEFORE_RE = re.compile(r"(?:\bnot|n't|\\neq?|\u2260)[\s$:=]*$", re.IGNORECASE)
_THINK_CLOSE = "</think>"

# `\\\\` (a row break) is matched first so its second backslash never escapes a brace;
# `\\\\boxed` (a box escaped twice, as JSON mishaps write it) is still a box.
_BOX_TOKEN_RE = re.compile(r"\\\\(?![a-zA-Z])|\\(?:boxed|fbox)\s*\{|\\[{}]|[{}]")
_BOX_START_RE = re.compile(r"\\(?:boxed|fbox)")
# `\boxed 5` (no braces) is legal TeX for a one-token argument.
_BOX_BARE_RE = re.compile(r"\\boxed[ \t]+([^\s${}\\]+)")
# Between two boxes, what makes the later one a revision of the earlier rather than
# a second value offered with it: a retraction, a conclusion, or more work (a new
# paragraph, or more text than a list of answers has between its parts).
_REVISION_RE = re.compile(
    r"\b(?:on reflection|reflect\w*|upon further|re-?examin\w*|in fact|instead|hold on|final answer"
    r"|correct answer|therefore|thus|hence|in conclusion|so the answer)\b",
    re.IGNORECASE,
)
MAX_HEDGE_GAP_CHARS = 160
# Between two boxes, words that offer the later as another answer, not a revision.
_ALTERNATIVE_RE = re.compile(
    r"\b(?:alternatively|alternative|or|another (?:possible |valid )?(?:answer|solution|option)|could also be"
    r"|might also be|may also be|also possible|other possibility|otherwise)\b",
    re.IGNORECASE,
)
# Nothing worked out between two boxes: no digit, operator or command, only words.
_NO_WORKING_RE = re.compile(r"[^\d=+\-*/^\\]{0,120}")
MAX_ALTERNATIVE_GAP_CHARS = 200
_SEGMENT_END_RE = re.compile(r"[.!?。](?=\s)|\n")
_COMPLETE_ENDS = frozenset(".!?。}$)]>*\"'`")
# A repeated sentence is looked for this far from the end only.
MAX_REPEAT_CHARS = 600
# GSM8K's calculator annotations (`$<<45000=45000>>45000`) repeat the value beside them.
_CALCULATOR_RE = re.compile(r"<<[^<>\n]{0,200}>>")
_ANSWER_TAG_OPEN = "<answer>"
_ANSWER_TAG_CLOSE = "</answer>"
# A gold longer than this is a worked solution to search, not the answer itself.
MAX_BARE_GOLD_CHARS = 80
# A gold this short with several boxes is one answer in parts; a longer one is a
# worked solution whose last box is the answer.
MAX_JOINED_GOLD_CHARS = 200
# What may separate the boxes of one answer: ` and `, `, `, ` papers and `.
MAX_BOX_GAP_CHARS = 12
# The answer runs to the end of the line and is stripped afterwards: a lazy group
# followed by `\s*$` would rescan a run of spaces from every position.
_STRICT_RE = re.compile(r"^\s*\**answer\**\s*:(.*)$", re.IGNORECASE)


@dataclass(slots=True)
class Extracted:
    """What extraction found: the final answer and any unretracted earlier candidates."""

    answer: str | None
    method: str
    candidates: list[str] = field(default_factory=list)
    # Read from inside the model's thinking: its reply after the thinking has none, nor its text.
    in_thinking: bool = False
    # Boxes offered as other answers beside a later one that grading takes as a revision
    # (a paragraph or a conclusion word apart): telemetry for the `hedge` signal only.
    alternatives: list[str] = field(default_factory=list)


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """Every complete outermost `\\boxed{...}`/`\\fbox{...}` as (start, end, content).

    One pass with an explicit stack: nesting depth costs memory, not recursion, and
    contents are sliced only for the disjoint outermost boxes, so the work stays
    linear even for boxes nested thousands deep. Escaped braces `\\{ \\}` are set
    delimiters, not TeX groups.
    """
    first = _BOX_START_RE.search(text)
    if first is None:
        return []
    found: list[tuple[int, int, int, int]] = []  # (start, end, content start, content end)
    stack: list[tuple[int, int]] = []  # (box start or -1 for a plain group, content start)
    # Groups opened before the first box lie below it on the stack and never change
    # which brace closes a box, and no token spans the backslash before `boxed`: the
    # scan starts there.
    for m in _BOX_TOKEN_RE.finditer(text, first.start()):
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
    for m in _BOX_BARE_RE.finditer(text, first.start()):
        found.append((m.start(), m.end(), m.start(1), m.end(1)))
    found.sort()
    # A box nested in another is part of that answer, not a separate candidate.
    spans: list[tuple[int, int, str]] = []
    for start, end, cstart, cend in found:
        if spans and start < spans[-1][1]:
            continue
        spans.append((start, end, text[cstart:cend]))
    return spans


def _revised(text: str, prev_end: int, start: int) -> bool:
    if start - prev_end > MAX_HEDGE_GAP_CHARS or "\n\n" in text[prev_end:start]:
        return True
    return any(r.search(text, prev_end, start) is not None for r in (RETRACTION_RE, _REVISION_RE))


def _unretracted(text: str, spans: list[tuple[int, int, str]]) -> Extracted:
    """The last box as the answer, with the boxed candidates that still stand (those
    offered with it, after the last retraction or revision) and the boxes a revision
    set aside that were offered as other answers (`_offered_instead`)."""
    standing: list[str] = []
    offered: list[str] = []
    prev_end = -1
    for start, end, content in spans:
        if prev_end >= 0 and _revised(text, prev_end, start):
            if _offered_instead(text, prev_end, start):
                offered += [standing[-1], content.strip()]
            standing.clear()
        standing.append(content.strip())
        prev_end = end
    return Extracted(standing[-1], "boxed", list(dict.fromkeys(standing)), alternatives=list(dict.fromkeys(offered)))


def _offered_instead(text: str, end: int, start: int) -> bool:
    """Between two boxes, a word that offers the later as another answer ("alternatively",
    "or", "could also be"), or no working at all (`\\boxed{7}` then "Therefore,
    \\boxed{8}"), and no retraction."""
    if start - end > MAX_ALTERNATIVE_GAP_CHARS or RETRACTION_RE.search(text, end, start) is not None:
        return False
    return (
        _ALTERNATIVE_RE.search(text, end, start) is not None or _NO_WORKING_RE.fullmatch(text, end, start) is not None
    )


def _negated(text: str, box_start: int) -> bool:
    return _NEGATION_BEFORE_RE.search(text, max(0, box_start - NEGATION_WINDOW), box_start) is not None


def _answer_boxes(text: str) -> list[tuple[int, int, str]]:
    """Boxes that hold something: an empty box (or one holding only the problem's
    `\\phantom` placeholder, already blanked) is neither an answer nor a hedge."""
    return [span for span in boxed_spans(text) if span[2].strip()]


def _plain_boxes(text: str) -> Extracted | None:
    spans = _answer_boxes(text)
    if not spans:
        return None
    return _unretracted(text, spans)


def _from_boxes(text: str) -> Extracted | None:
    """The last standing box; a negated box is no answer, a last box that later text
    takes back ("wait, ...") gives way to an explicit statement after it, and any box
    to a marked final answer after it ("Final Answer: ...", `#### 18`)."""
    spans = _answer_boxes(text)
    if not spans:
        return None
    standing = [span for span in spans if not _negated(text, span[0])]
    after = text[spans[-1][1] :]
    taken_back = not standing or standing[-1] is not spans[-1] or RETRACTION_RE.search(after) is not None
    # What is stated last wins: a later "Final Answer: ..." over an intermediate box,
    # and after a retraction any explicit statement.
    found = fallbacks.find(after, fallbacks.EXPLICIT) if taken_back else fallbacks.find_marked(after)
    if found is not None:
        return Extracted(found[0], f"{found[1]}_after_box")
    if not standing:
        return Extracted(None, "negated_box")
    return _unretracted(text, standing)


def _answer_tag_content(text: str) -> str | None:
    close = text.rfind(_ANSWER_TAG_CLOSE)
    if close < 0:
        return None
    open_ = text.rfind(_ANSWER_TAG_OPEN, 0, close)
    if open_ < 0:
        return None
    return text[open_ + len(_ANSWER_TAG_OPEN) : close].strip()


def _inside_tag(content: str) -> Extracted:
    boxed = _plain_boxes(content)
    if boxed is not None:
        return Extracted(boxed.answer, "answer_tag+boxed", boxed.candidates)
    phrase = fallbacks.answer_line(content)
    if phrase is not None:
        return Extracted(phrase, "answer_tag+phrase")
    content = strip_math_wrappers(content)
    if fallbacks.is_prose(content):
        # A tag holding a worked paragraph: its answer is where prose states one.
        found = fallbacks.find(content, fallbacks.EXPLICIT | {"equation"})
        if found is not None:
            return Extracted(found[0], f"answer_tag+{found[1]}")
    return Extracted(content, "answer_tag")


def _answer_line(text: str) -> Extracted:
    lines = [line for line in text.rstrip().splitlines() if line.strip()]
    if not lines:
        return Extracted(None, "answer_line")
    m = _STRICT_RE.match(lines[-1])
    if m is None:
        return Extracted(None, "answer_line")
    return Extracted(strip_math_wrappers(m.group(1).strip()) or None, "answer_line")


def _read(text: str) -> Extracted:
    """A JSON reply's answer field, boxes, the answer tag, then the fallbacks, in one
    span of text (a box inside a JSON reply's reasoning is not its answer)."""
    field = json_answer(text)
    if field is not None:
        inner = _plain_boxes(field)
        return Extracted(inner.answer if inner is not None else field, "json")
    boxed = _from_boxes(text)
    if boxed is not None:
        return boxed
    content = _answer_tag_content(text)
    if content is not None:
        return _inside_tag(content)
    found = fallbacks.find(text)
    return Extracted(found[0], found[1]) if found is not None else Extracted(None, "none")


def without_cut_repeat(text: str) -> str:
    """`text` without a final sentence that the length limit cut while the model was
    repeating the one before it ("The answer is 125. The answer is 12")."""
    if text.rstrip()[-1:] in _COMPLETE_ENDS:
        return text  # the text ends where a sentence or formula does: nothing was cut
    start = max(0, len(text) - MAX_REPEAT_CHARS)
    ends = [start] + [m.end() for m in _SEGMENT_END_RE.finditer(text, start)]
    if len(ends) < 2 or ends[-1] == len(text):
        return text
    tail = text[ends[-1] :].strip()
    # The sentence before the tail: the last non-blank text between two ends.
    previous = ""
    for start, end in pairwise(reversed(ends)):
        previous = text[end:start].strip()
        if previous:
            break
    if tail and len(tail) < len(previous) and previous.startswith(tail):
        return text[: ends[-1]]
    return text


def _auto(text: str) -> Extracted:
    text = without_cut_repeat(text)
    close = text.rfind(_THINK_CLOSE)
    if close >= 0:
        after = text[close + len(_THINK_CLOSE) :]
        if after.strip():
            found = _read(after)
            if found.answer is not None or found.method == "negated_box":
                return found
    found = _read(text)
    if close < 0 or found.answer is None:
        return found
    # A reply that states the answer in words extraction does not read still states it.
    stated = found.answer.strip().lower() in text[close + len(_THINK_CLOSE) :].lower()
    return found if stated else replace(found, in_thinking=True)


def _strict(text: str) -> Extracted:
    boxed = _plain_boxes(text)
    if boxed is not None:
        return boxed
    content = _answer_tag_content(text)
    return _inside_tag(content) if content is not None else Extracted(None, "strict")


def _by_mode(text: str, mode: Mode) -> Extracted:
    if mode == "auto":
        return _auto(text)
    if mode == "strict":
        return _strict(text)
    if mode == "answer_line":
        return _answer_line(text)
    if mode == "answer_tag":
        content = _answer_tag_content(text)
        return _inside_tag(content) if content is not None else Extracted(None, "answer_tag")
    return _plain_boxes(text) or Extracted(None, "boxed")


def answer_region(text: str) -> str:
    """The text a final answer is read from first: the model's own turn, hidden text
    dropped, after its thinking when anything follows it."""
    text = remove_hidden(reply_text(text))
    close = text.rfind(_THINK_CLOSE)
    after = text[close + len(_THINK_CLOSE) :] if close >= 0 else ""
    return after if after.strip() else text


def extract_answer(text: str, mode: Mode) -> Extracted:
    """The final answer of `text` under `mode`, hidden text ignored and stray
    delimiters stripped."""
    found = _by_mode(_CALCULATOR_RE.sub("", remove_hidden(reply_text(text))), mode)
    if found.answer is None:
        return found
    answer = strip_stray_delimiters(found.answer) or None
    return replace(found, answer=answer, candidates=[strip_stray_delimiters(c) for c in found.candidates])


def _boxes_adjacent(text: str, spans: list[tuple[int, int, str]]) -> bool:
    """Only a connective lies between the boxes (`\\boxed{1} and \\boxed{2}`)."""
    return all(nxt[0] - cur[1] <= MAX_BOX_GAP_CHARS for cur, nxt in pairwise(spans))


def extract_gold(text: str) -> tuple[str, str]:
    """The answer inside a ground truth, as data sets store it, and how it was found.

    A bare answer (`\\frac{1}{2}`), a `$...$` span, or a reference solution ending in
    `\\boxed{}` (the MATH `solution` column).
    """
    spans = _answer_boxes(text)
    if len(spans) > 1 and len(text) <= MAX_JOINED_GOLD_CHARS and _boxes_adjacent(text, spans):
        # `\\boxed{1} and \\boxed{-2}`: a short gold boxes each part of one answer.
        return ", ".join(content.strip() for _, _, content in spans), "boxes"
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
    if len(stripped) > MAX_BARE_GOLD_CHARS:
        phrase = fallbacks.answer_line(stripped)
        if phrase is not None:
            return strip_math_wrappers(phrase), "phrase"
    return stripped, "bare"
