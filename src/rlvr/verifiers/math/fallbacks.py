r"""Finding a final answer that is not boxed or tagged, in the order a grader reads it.
Each finder takes the text and returns the answer or None:

1. `gsm8k`: GSM8K's `#### 18` (a markdown heading such as `#### Step 1` is no answer);
2. `answer_line`: `A: 18`, `Answer: 18`, "The (final) answer is 18";
3. `final_sentence`: the last sentence states a value ("The perimeter of the
   hexagon is 42 inches.");
4. `equation`: the last side of an equality chain in the last sentence (`3/24 = 1/8`);
5. `answer_tag_unclosed`: an `<answer>` that was never closed (a truncated rollout);
6. `math_span`: the last `$...$`, `\(...\)` or `\[...\]` span of the final paragraph;
7. `bare`: a response that is only a value (`14`, `$20`).

A value read from prose (3, 4 and 6) must look like one: short, with a digit or
some LaTeX, and few words, so a closing remark ("I hope it is correct") is no answer.

Every scan is linear: regexes start at fixed words and never nest quantifiers, and
math spans are found with `str.find`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MAX_VALUE_CHARS = 60
MAX_VALUE_WORDS = 4

_GSM8K_RE = re.compile(r"(?m)^[ \t]*####[ \t]*(\S[^\n]*)$")
_ANSWER_LINE_RE = re.compile(
    r"(?m)^[ \t]*\**A\**[ \t]*:[ \t]*"
    r"|\b(?:final[ \t]+answer|answer)[ \t]*(?:is\b|:|=)[ \t]*:?[ \t]*"
    r"|\*\*(?:final[ \t]+)?answer:?\*\*:?[ \t]*",
    re.IGNORECASE,
)
_COPULA_RE = re.compile(r"\b(?:is|are|equals|was|be|becomes|gives|get)\b[ \t]*:?", re.IGNORECASE)
# A value starts like a number or formula, or names a variable (`x = 5`).
_VALUE_START_RE = re.compile(r"[0-9+\-$\\(\[{.]|[a-zA-Z][ \t]*=")
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s)|\n")
_VALUE_SHAPE_RE = re.compile(r"[0-9\\]")
_NEGATED_RE = re.compile(r"^(?:not|no|never)\b", re.IGNORECASE)
_COMPARISON_PREFIX = frozenset("<>!")
_INEQUALITY_RE = re.compile(r"[<>]|!=|\\(?:le|ge|ne|leq|geq|neq|lt|gt)(?![a-zA-Z])")
_SPAN_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
# A plain number standing alone in prose (not part of a word, a decimal or a name).
_PROSE_NUMBER_RE = re.compile(r"(?<![\w.,^_{])[-+]?\d+(?:\.\d+)?(?![\w.,^_}])")
_LEADING_NUMBER_RE = re.compile(r"([-+]?\d+(?:\.\d+)?)[ \t]+[a-zA-Z]")
# What separates several equations (`x = 1, y = 2`, `W(x)=1 or W(x)=-1`): never a chain.
_SEVERAL_RE = re.compile(r"[,;]|\\text|\\lor|(?<![a-zA-Z])(?:or|and)(?![a-z])")
_TAG_OPEN = "<answer>"
_TAG_CLOSE = "</answer>"


def _first_line(s: str) -> str:
    end = s.find("\n")
    return s if end < 0 else s[:end]


def _value(s: str, last_side: bool = True) -> str | None:
    """`s` as a value read from prose, or None when it does not look like one; with
    `last_side`, the last side of an equality chain (`3/24 = 1/8` gives `1/8`)."""
    v = s.strip().rstrip(".!;,: ").strip().strip("*").strip()
    if last_side:
        v = _last_side(v)
    if not v or len(v) > MAX_VALUE_CHARS or _NEGATED_RE.match(v):
        return None
    if v.startswith(("\\boxed", "\\fbox")):
        return None  # an unclosed box: the answer was never finished
    if _VALUE_SHAPE_RE.search(v) is None or len(v.split()) > MAX_VALUE_WORDS:
        return None
    if _VALUE_START_RE.match(v) is None:
        return None
    return v


def is_prose(text: str) -> bool:
    """More words than a value with its unit ever has."""
    return len(text.split()) > MAX_VALUE_WORDS


def _last_equals(s: str) -> int:
    """Index of the last `=` that is an equality (not part of `<=`, `>=`, `!=`), or -1."""
    at = s.rfind("=")
    while at > 0 and s[at - 1] in _COMPARISON_PREFIX:
        at = s.rfind("=", 0, at - 1)
    return at


def _last_side(v: str) -> str:
    """`3/24 = 1/8`: a chain of equalities ends in the value; `x <= 2` stays whole."""
    at = _last_equals(v)
    if at < 0 or _INEQUALITY_RE.search(v) is not None:
        return v
    return v[at + 1 :].strip()


def chain_value(v: str) -> str | None:
    """The value a chain of two or more equalities ends in (`z = 1 + 1 = 2` gives `2`),
    or None for anything else: one equation (`x^2 + y^2 = 1`) is an answer in itself,
    and a list of them (`x = 1, y = 2`) is several."""
    if _INEQUALITY_RE.search(v) is not None or _SEVERAL_RE.search(v) is not None:
        return None
    first = v.find("=")
    last = _last_equals(v)
    if first < 0 or first == last:
        return None
    return v[last + 1 :].strip() or None


def gsm8k(text: str) -> str | None:
    last = None
    for m in _GSM8K_RE.finditer(text):
        last = m
    if last is None:
        return None
    return _value(last.group(1))


def answer_line(text: str) -> str | None:
    last = None
    for m in _ANSWER_LINE_RE.finditer(text):
        last = m
    if last is None:
        return None
    tail = text[last.end() :].lstrip()
    span = _leading_span(tail)
    if span is not None:
        return span
    end = _SENTENCE_END_RE.search(tail)
    answer = (tail[: end.start()] if end is not None else tail).strip().strip("*").strip()
    if answer.startswith(("\\boxed", "\\fbox")):
        return None  # an unclosed box: the answer was never finished
    if answer and _value(answer, last_side=False) is None:
        # "Final Answer: The largest $n$ is 34": the line states the value in a sentence.
        return final_sentence(answer) or _only_number(answer) or answer
    return answer or None


def _only_number(phrase: str) -> str | None:
    """ "Final Answer: Jane started growing Sphere 3 hours ago": a line marked as the
    answer that holds one number states that number."""
    numbers = _PROSE_NUMBER_RE.findall(phrase)
    return numbers[0] if len(numbers) == 1 else None


def _leading_span(tail: str) -> str | None:
    """A math span at the very start of `tail` ("the answer is $7$, since ...")."""
    for left, right in _SPAN_DELIMS:
        if tail.startswith(left):
            close = tail.find(right, len(left))
            if close > len(left):
                return tail[len(left) : close].strip()
            return None
    return None


def _last_sentence(text: str) -> str:
    s = text.rstrip().rstrip(".!?").rstrip()
    start = 0
    for m in _SENTENCE_END_RE.finditer(s):
        start = m.end()
    return s[start:].strip()


def final_sentence(text: str) -> str | None:
    sentence = _last_sentence(text)
    last = None
    for m in _COPULA_RE.finditer(sentence):
        last = m
    if last is None:
        return None
    tail = sentence[last.end() :].strip()
    # `$35,000 + $22,500 = $57,500`: dollars here are currency, and the chain's last
    # side is the value.
    span = _leading_span(tail) if "=" not in tail else None
    value = _value(span if span is not None else tail)
    if value is None and span is None:
        # "there are 12 distinct sequences that meet the three conditions": a count
        # followed by what it counts.
        lead = _LEADING_NUMBER_RE.match(tail)
        value = lead.group(1) if lead is not None else None
    return value


def equation(text: str) -> str | None:
    sentence = _last_sentence(text).replace("$", " ")
    eq = _last_equals(sentence)
    if eq < 0 or _INEQUALITY_RE.search(sentence) is not None:
        return None
    return _value(sentence[eq + 1 :].replace("\\]", " ").replace("\\)", " "))


def whole_equation(text: str) -> str | None:
    """The final equation as written, both sides (`y = -x/2 + 3/4`), where `equation`
    keeps only its last side: the last math span, else the last sentence's value."""
    span = math_span(text)
    if span is not None:
        return span
    if len(text) <= MAX_VALUE_CHARS:
        return text.strip().rstrip(".!;,: ") or None  # the response is the equation (`W(x)=1 or W(x)=-1`)
    return _value(_last_sentence(text), last_side=False)


def answer_tag_unclosed(text: str) -> str | None:
    open_ = text.rfind(_TAG_OPEN)
    if open_ < 0 or text.find(_TAG_CLOSE, open_) >= 0:
        return None
    return text[open_ + len(_TAG_OPEN) :].strip() or None


def math_spans(text: str) -> list[str]:
    """Every closed math span, left to right, in one pass.

    The next position of each opener is cached and only searched again once passed,
    and once a closer is missing it is missing for every later opener of its kind,
    so each kind is scanned to the end about once.
    """
    spans: list[str] = []
    next_at = {left: text.find(left) for left, _ in _SPAN_DELIMS}
    pos = 0
    while True:
        for left in next_at:
            if 0 <= next_at[left] < pos:
                next_at[left] = text.find(left, pos)
        live = [(at, left, right) for left, right in _SPAN_DELIMS if (at := next_at[left]) >= 0]
        if not live:
            return spans
        at, left, right = min(live, key=lambda o: (o[0], -len(o[1])))
        close = text.find(right, at + len(left))
        if close < 0:
            next_at[left] = -1
            pos = at + len(left)
            continue
        spans.append(text[at + len(left) : close])
        pos = close + len(right)


def math_span(text: str) -> str | None:
    paragraph = text.rstrip()
    cut = paragraph.rfind("\n\n")
    spans = math_spans(paragraph[cut + 2 :] if cut >= 0 else paragraph)
    spans = [s.strip() for s in spans if s.strip()]
    return spans[-1] if spans else None


def bare(text: str) -> str | None:
    """A response that is nothing but its answer (`14`, `$20`, `3 cm`)."""
    return _value(text) if len(text) <= MAX_VALUE_CHARS else None


FINDERS: tuple[tuple[str, Callable[[str], str | None]], ...] = (
    ("gsm8k", gsm8k),
    ("answer_line", answer_line),
    ("final_sentence", final_sentence),
    ("equation", equation),
    ("answer_tag_unclosed", answer_tag_unclosed),
    ("math_span", math_span),
    ("bare", bare),
)
# After a retracted box only an explicit statement replaces it: a verification's
# last equation ("let me double-check: 3 + 9 = 12") is no new answer.
EXPLICIT = frozenset({"gsm8k", "answer_line", "final_sentence", "answer_tag_unclosed"})


def find_marked(text: str) -> tuple[str, str] | None:
    """A statement marked as the final answer that states a value ("Final Answer: 7",
    `#### 7`): it overrides a box written before it. "The answer is correct" is no value."""
    for name, finder in (("gsm8k", gsm8k), ("answer_line", _marked_line)):
        value = finder(text)
        if value:
            return value, name
    return None


def _marked_line(text: str) -> str | None:
    last = None
    for m in _ANSWER_LINE_RE.finditer(text):
        last = m
    if last is None:
        return None
    # Math right after the marker is the answer as written (`x-2y+z-1=0` stays whole).
    span = _leading_span(text[last.end() :].lstrip())
    if span:
        return span
    answer = answer_line(text)
    return _value(answer, last_side=False) if answer else None


def find(text: str, methods: frozenset[str] | None = None) -> tuple[str, str] | None:
    """(answer, method) from the first finder that finds one."""
    for name, finder in FINDERS:
        if methods is not None and name not in methods:
            continue
        answer = finder(text)
        if answer:
            return answer, name
    return None
