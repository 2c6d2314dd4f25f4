r"""Finding a final answer that is not boxed or tagged, in the order a grader reads it.
Each finder takes the text and returns the answer or None:

0. `json`: the `answer` field of a JSON object that is the response, or ends it;
1. `gsm8k`: GSM8K's `#### 18` (a markdown heading such as `#### Step 1` is no answer);
2. `answer_line`: `A: 18`, `Answer: 18`, "The (final) answer is 18";
3. `final_sentence`: the last sentence states a value ("The perimeter of the
   hexagon is 42 inches."), closing remarks after it passed over;
3b. `named_answer`: a value the last sentence calls the answer ("I think $1250 is the
   right answer."); `conclusion`: a concluding sentence that names one number
   ("Therefore, Jack received 1 more email ...");
4. `equation`: the last side of an equality chain in the last sentence (`3/24 = 1/8`);
5. `answer_tag_unclosed`: an `<answer>` that was never closed (a truncated rollout);
6. `math_span`: the last `$...$`, `\(...\)` or `\[...\]` span of the final paragraph;
7. `bare`: a response that is only a value (`14`, `$20`);
8. `leading_count`: a last sentence that opens with the only number it names ("23
   apples remained.", "Ten men can stay upright on the wave.");
9. `sole_number`: a complete last sentence that names exactly one number.

A value read from prose (3, 4 and 6) must look like one: short, with a digit or
some LaTeX, and few words, so a closing remark ("I hope it is correct") is no answer.

Every scan is linear: regexes start at fixed words and never nest quantifiers, and
math spans are found with `str.find`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from functools import lru_cache

from rlvr.verifiers.math.values import json_answer, span_list, trim_remark

MAX_VALUE_CHARS = 60
MAX_VALUE_WORDS = 4

# `#### 18` ends a line, or a sentence (Abel: "Thus she makes $18. #### 18").
# `#### 2. Double it`, `#### Step 1`: a markdown heading, not GSM8K's answer.
_HEADING_RE = re.compile(r"(?:\d+[.)]|step|part|case)?[ \t]*[a-zA-Z]{2,}", re.IGNORECASE)
_GSM8K_RE = re.compile(r"(?m)####[ \t]*(\S[^\n]*)$")
# Answer markers in the languages models answer in; each is followed by `:` (or the
# full-width `：`), `is`/`=` or its language's copula. CJK words have no `\b` around them.
_MARKER_WORDS = (
    r"final[ \t]+answer|answer|ответ|réponse|reponse|respuesta|antwort|risposta|resposta|antwoord"
    r"|odpowiedź|jawaban|jibu|cevap|đáp án|câu trả lời|उत्तर|উত্তর|คำตอบ"
)
_CJK_MARKERS = r"最终答案|答案|解答|答え|정답|【答案】|故答案为|故答案為|所以答案是|所以答案为|答(?=[ \t]*[:：])"
_ANSWER_LINE_RE = re.compile(
    r"(?m)^[ \t]*\**A\**[ \t]*:[ \t]*"
    r"|(?:\b(?:" + _MARKER_WORDS + r")\b|" + _CJK_MARKERS + r")\**[ \t]*"
    r"(?:(?:should|must|would|will|might)[ \t]+be\b|is\b|est\b|es\b|ist\b|è|é|равен\b|—|[:：=]|是|为|為|(?<=】))"
    r"[ \t]*[:：]?[ \t]*"
    r"|\*\*(?:final[ \t]+)?answer:?\*\*:?[ \t]*",
    re.IGNORECASE,
)
# Words that take back what came before them ("wait, ...", "actually", "I made a mistake").
RETRACTION_RE = re.compile(
    r"\b(?:wait|actually|mistake|mistaken|error|wrong|incorrect|oops|correction|correcting|re-?check"
    r"|double[- ]check|re-?calculat\w*|re-?comput\w*|re-?evaluat\w*|reconsider|redo|revis\w*"
    r"|let me (?:re|check|verify)\w*|on second thought|hmm+|not right|scratch that)\b",
    re.IGNORECASE,
)
# What follows "the answer is" when it judges rather than states: "This answer is correct."
_VERDICT_WORD_RE = re.compile(
    r"[ \t*]*(?:correct|incorrect|wrong|right|valid|invalid|above|below|as follows|not\b|indeed correct)", re.IGNORECASE
)
_NEGATION_NEAR_RE = re.compile(r"\b(?:not|cannot|never)\b|n't\b", re.IGNORECASE)
_NOT_STATED_RE = re.compile(
    r"\b(?:not|cannot|can't|isn't|never|no longer|neither|nor|at least|at most|more than|less than|fewer than"
    r"|up to|give up|gave up|unable|couldn't|could not|sorry|unsure|not sure)\b|n't\b",
    re.IGNORECASE,
)
# "See equation 5", "after step 2": a number that names something, not a value.
_REFERENCE_RE = re.compile(
    r"\b(?:equation|eq\.|step|attempts?|tries|figure|page|chapter|problem|question|example|case|line|section)[ \t]+\d",
    re.IGNORECASE,
)
_UNKNOWN_RE = re.compile(r"[a-wyzA-Z]")  # `x` alone is also "times"
_WORDY_RE = re.compile(r"[a-zA-Z]{3,}[ \t]+[a-zA-Z]{2,}")
_HEDGE_WORD_RE = re.compile(
    r"\b(?:or|either|maybe|perhaps|possibly|probably|between|alternatively|или|либо|ou|oder|o|oppure)\b|或|或者",
    re.IGNORECASE,
)
_BOLD_VALUE_RE = re.compile(r"\*\*([^*\n]{1,60})\*\*")
# After a marker: the end of a `\text{Answer: }` group, emphasis, a stray `$`.
_MARKER_TAIL_RE = re.compile(r"[ \t}*]*")
_NAMED_ANSWER_RE = re.compile(
    r"[ \t]+is[ \t]+(?:the|my|our)[ \t]+(?:(?:right|correct|final|only)[ \t]+)?answer\b", re.IGNORECASE
)
_COUNT_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
_COUNT_RE = re.compile(r"[ \t$]*(\d+(?:\.\d+)?|" + "|".join(_COUNT_WORDS) + r")[ \t]+[a-zA-Z]", re.IGNORECASE)
_PARENTHETICAL_RE = re.compile(r"\([^()\n]{0,80}\)")
# How a concluding sentence opens, in the languages models answer in.
_CONCLUSION_RE = re.compile(
    r"[ \t*]*(?:therefore|thus|so|hence|in total|in all|altogether|finally|overall|in conclusion|as a result"
    r"|итак|таким образом|следовательно|значит|donc|por lo tanto|also|因此|所以|故|综上)\b",
    re.IGNORECASE,
)
# Words between a verb and its value: "the angle is indeed 45 degrees".
_ADVERB_RE = re.compile(
    r"(?:(?:indeed|exactly|just|then|simply|therefore|thus|also|now|still|actually|equal to|given by"
    r"|approximately|about)\b[ \t]*)*",
    re.IGNORECASE,
)
# The verbs a closing sentence states its value with ("So each uniform costs $150.").
_COPULA_RE = re.compile(
    r"\b(?:is|are|equals?|was|were|be|becomes?|gives?|gets?|has|have|had|costs?|takes?|took|needs?|makes?"
    r"|earns?|earned|pays?|paid|spends?|spent|weighs?|totals?|totaled|totalled|comes to|amounts? to|remains?"
    r"|contains?|holds?|owes?|saves?|saved|sold|bought|scored|ran|walked|drove|traveled|travelled|read|ate)\b[ \t]*:?",
    re.IGNORECASE,
)
# A value starts like a number or formula, or names a variable (`x = 5`).
_VALUE_START_RE = re.compile(r"[0-9+\-$\\(\[{.]|[a-zA-Z][ \t]*=")
# `3! = 6` is a factorial, not the end of a sentence.
_SENTENCE_END_RE = re.compile(r"[.?](?=\s)|(?<![\d)}])!(?=\s)|[。！？；]|\n")
_VALUE_SHAPE_RE = re.compile(r"[0-9\\]")
# A closing remark states no value: "I think that's the answer.", "This seems right."
_CLOSING_RE = re.compile(
    r"\b(?:answer|correct|correctly|right|sense|consistent|done|final|confident|sure|check\w*|verif\w*|hope"
    r"|add up|adds up)\b",
    re.IGNORECASE,
)
MAX_CLOSING_REMARKS = 3
# "5 (maybe 6)", "either 5 or 6", "5 is the answer, or 6": an offer of values is short.
MAX_HEDGE_WORDS = 6
# A retraction this close after an answer line takes that line back.
MAX_RETRACTION_GAP_CHARS = 80
# A sentence is read from this far back only, and its last few verbs only: each verb
# tried reads the rest of the sentence, so "is is is ..." would cost its square.
MAX_SENTENCE_CHARS = 400
MAX_VERBS_TRIED = 4
_NEGATED_RE = re.compile(r"^(?:not|no|never)\b", re.IGNORECASE)
_COMPARISON_PREFIX = frozenset("<>!")
_INEQUALITY_RE = re.compile(r"[<>]|!=|\\(?:le|ge|ne|leq|geq|neq|lt|gt)(?![a-zA-Z])")
_SPAN_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
# A plain number standing alone in prose (not part of a word, a decimal or a name).
# Thousands groups (`25,740`) are one number; a full stop after it ends the sentence.
_PROSE_NUMBER_RE = re.compile(r"(?<![\w.,^_{])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w,^_}]|\.\d)")
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
    v = s.strip().rstrip(".!;,: \u3002\uff0c\uff1b\uff1a").strip().strip("*").strip()
    if last_side:
        v = _last_side(v)
    short = len(v.split()) <= MAX_HEDGE_WORDS  # a long sentence describes, it does not offer
    if short and _HEDGE_WORD_RE.search(v) is not None and len(_PROSE_NUMBER_RE.findall(v)) > 1:
        # "5 (maybe 6)", "either 5 or 6", "5 (или 6)": the values offered, as a list.
        return ", ".join(_PROSE_NUMBER_RE.findall(v))
    v = trim_remark(v)
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
        if _HEADING_RE.match(m.group(1)) is None:
            last = m
    if last is None:
        return None
    return _value(last.group(1))


def answer_line(text: str) -> str | None:
    # A marker with nothing after it is a repeated line cut off by the length limit:
    # the one before it holds the answer.
    # "This answer is correct." repeated is no answer either: the value stated last is.
    markers = list(_ANSWER_LINE_RE.finditer(text))
    while markers:
        tail = text[_MARKER_TAIL_RE.match(text, markers[-1].end()).end() :]  # type: ignore[union-attr]
        if tail.strip() and _VERDICT_WORD_RE.match(tail) is None:
            return _unless_taken_back(tail, _stated(tail))
        markers.pop()
    return None


def _unless_taken_back(tail: str, stated: str | None) -> str | None:
    """ "The answer is 5. Hmm, actually it is 6.": a retraction right after the answer
    line, followed by a new statement, replaces it."""
    first_end = _SENTENCE_END_RE.search(tail)
    rest = tail[first_end.end() :] if first_end is not None else ""
    taken_back = RETRACTION_RE.search(rest, 0, MAX_RETRACTION_GAP_CHARS)
    if stated is None or taken_back is None:
        return stated
    # Only the sentence of the retraction itself: a re-derivation after it that the
    # length limit cut off states nothing yet.
    after = rest[taken_back.end() :]
    end = _SENTENCE_END_RE.search(after)
    sentence = after[: end.start()] if end is not None else after
    return final_sentence(sentence) or stated


def _stated(tail: str) -> str | None:
    """What a marked answer line states; the value may be on the next line (`Answer:\n\n23`)."""
    tail = tail.lstrip()
    span = span_list(tail)
    if span is not None:
        return span
    end = _SENTENCE_END_RE.search(tail)
    answer = (tail[: end.start()] if end is not None else tail).strip().strip("*").strip()
    if answer.startswith(("\\boxed", "\\fbox")):
        return None  # an unclosed box: the answer was never finished
    later = _concluded_after(tail)
    if later is not None:
        return later
    if answer and _value(answer, last_side=False) is None and "=" in answer and _worked(answer):
        # "Answer: Number of games played = 21 / 7 = 3 games": the chain's last side
        # (`5x - 7y + 11z + 4 = 0`, no words, is an equation to compare whole).
        return _value(answer)
    if answer and _value(answer, last_side=False) is None:
        # "**Answer:** She needs **1,400 bananas** for 2 months": the bold value.
        bold = _BOLD_VALUE_RE.search(answer)
        if bold is not None and _value(bold.group(1)) is not None:
            return _value(bold.group(1))
        # "Final Answer: The largest $n$ is 34": the line states the value in a sentence.
        return final_sentence(answer) or _only_number(answer) or answer
    return (_value(answer, last_side=False) or answer) if answer else None


def _worked(answer: str) -> bool:
    """A chain worked out in words or numbers (`Number of games = 21 / 7 = 3 games`,
    `$32,400 x $24,000 = $8,400`), not an equation in unknowns (`5x - 7y + 4 = 0`)."""
    before = answer[: answer.rfind("=")]
    return _WORDY_RE.search(answer) is not None or _UNKNOWN_RE.search(before) is None


def _concluded_after(tail: str) -> str | None:
    """ "Answer: There are 7 birds and 4 storks. Therefore, there are 3 more birds than
    storks.": a concluding sentence that ends the text after the marker states it."""
    if _SENTENCE_END_RE.search(tail.strip().rstrip(".!?。")) is None:
        return None  # one sentence: nothing comes after it
    return conclusion(tail)


def _only_number(phrase: str) -> str | None:
    """ "Final Answer: Jane started growing Sphere 3 hours ago": a line marked as the
    answer that holds one number states that number."""
    numbers = _PROSE_NUMBER_RE.findall(phrase)
    return numbers[0] if len(numbers) == 1 else None


@lru_cache(maxsize=16)
def _last_sentence(text: str) -> str:
    """The last sentence that may state a value: closing remarks after it ("I think
    that's the answer.", "Yes, that seems correct.") are passed over."""
    s = text.rstrip().rstrip(".!?").rstrip()
    starts: deque[int] = deque([0], maxlen=MAX_CLOSING_REMARKS + 2)
    for m in _SENTENCE_END_RE.finditer(s):
        starts.append(m.end())
    ends = [*list(starts)[1:], len(s)]
    sentences = [s[a:b].strip().rstrip(".!?。").strip() for a, b in zip(starts, ends, strict=True)]
    sentences = [x for x in sentences if x]
    while len(sentences) > 1 and _CLOSING_RE.search(sentences[-1]) and not _VALUE_SHAPE_RE.search(sentences[-1]):
        sentences.pop()
    # A sentence is read from MAX_SENTENCE_CHARS back at most: longer is degenerate text.
    return sentences[-1][-MAX_SENTENCE_CHARS:] if sentences else ""


def final_sentence(text: str) -> str | None:
    # The last verb that is followed by a value states it ("costs $150 total": `total`
    # states nothing).
    if text.rstrip().endswith("?"):
        return None  # a question states nothing
    sentence = _last_sentence(text)
    for m in list(_COPULA_RE.finditer(sentence))[::-1][:MAX_VERBS_TRIED]:
        if _NEGATION_NEAR_RE.search(sentence, max(0, m.start() - 12), min(len(sentence), m.end() + 5)):
            continue  # "The answer cannot be 5": the verb states nothing
        tail = sentence[m.end() :].strip()
        value = _sentence_value(tail[_ADVERB_RE.match(tail).end() :])  # type: ignore[union-attr]
        if value is not None:
            return value
    return None


def _sentence_value(tail: str) -> str | None:
    # `$35,000 + $22,500 = $57,500`: dollars here are currency, and the chain's last
    # side is the value.
    span = span_list(tail) if "=" not in tail else None
    value = _value(span if span is not None else tail)
    if value is None and span is None:
        # "there are 12 distinct sequences that meet the three conditions", "3! = 6
        # arrangements of the digits": a count followed by what it counts.
        lead = _LEADING_NUMBER_RE.match(_last_side(tail))
        value = lead.group(1) if lead is not None else None
    return value


def _offered(sentence: str) -> str | None:
    """The values a sentence offers together ("5 is the answer, or 6"), as a list."""
    numbers = _PROSE_NUMBER_RE.findall(sentence)
    if len(sentence.split()) > MAX_HEDGE_WORDS * 2:
        return None
    if len(numbers) > 1 and _HEDGE_WORD_RE.search(sentence) is not None:
        return ", ".join(numbers)
    return None


def _states_nothing(sentence: str) -> bool:
    """A negation, a bound, a question or a give-up states no value ("The answer is not
    5.", "at least 5 apples", "Is 5 the answer?", "I give up after 5 attempts")."""
    return _NOT_STATED_RE.search(sentence) is not None or sentence.rstrip().endswith("?")


def named_answer(text: str) -> str | None:
    """ "I think $1250 is the right answer.": a value the last sentence calls the answer."""
    sentence = _last_sentence(text)
    if _states_nothing(sentence):
        return None
    if _NAMED_ANSWER_RE.search(sentence) is not None and _offered(sentence):
        return _offered(sentence)
    m = _NAMED_ANSWER_RE.search(sentence)
    if m is None:
        return None
    before = sentence[: m.start()].rstrip()
    spans = math_spans(before)
    if spans and before.endswith(("$", "\\)", "\\]")):
        return _value(spans[-1])
    token = before.rsplit(None, 1)[-1] if before.split() else ""
    return _value(token)


def leading_count(text: str) -> str | None:
    """ "23 apples remained.", "Ten men can stay upright on the wave.": a last sentence
    that opens with the only number it names, a count of what follows."""
    sentence = _last_sentence(text).replace("**", "")
    if _states_nothing(sentence):
        return None
    m = _COUNT_RE.match(sentence)
    if m is None or "=" in sentence or _PROSE_NUMBER_RE.search(sentence, m.end()) is not None:
        return None
    word = m.group(1).casefold()
    return str(_COUNT_WORDS[word]) if word in _COUNT_WORDS else m.group(1)


def sole_number(text: str) -> str | None:
    """A complete last sentence that names exactly one number ("Jack received 2 more
    emails in the afternoon than in the morning."); a sentence the length limit cut
    off names nothing."""
    stripped = text.rstrip()
    if not stripped.endswith((".", "!", "\u3002")):
        return None
    sentence = _last_sentence(stripped).replace("**", "")
    if _states_nothing(sentence) or _REFERENCE_RE.search(sentence) is not None:
        return None
    if "=" in sentence or "\\" in sentence or _offered(sentence):
        return None
    numbers = _PROSE_NUMBER_RE.findall(sentence.replace("$", " "))
    return numbers[0] if len(numbers) == 1 else None


def conclusion(text: str) -> str | None:
    """A concluding sentence ("Therefore, Jack received 1 more email than ...") that
    names exactly one number states that number."""
    # "(73 - 4 = 69)" shows the working; the sentence around it names the value.
    sentence = _PARENTHETICAL_RE.sub(" ", _last_sentence(text))
    if _states_nothing(sentence):
        return None
    if _CONCLUSION_RE.match(sentence) is None or "=" in sentence or "\\" in sentence:
        return None  # an equation or formula states more than a count
    if _INEQUALITY_RE.search(sentence) is not None:
        return None
    if _offered(sentence):
        return _offered(sentence)
    numbers = _PROSE_NUMBER_RE.findall(sentence.replace("$", " ").replace("**", " "))
    return numbers[0] if len(numbers) == 1 else None


def equation(text: str) -> str | None:
    sentence = _last_sentence(text).replace("$", " ")
    eq = _last_equals(sentence)
    if eq < 0 or _INEQUALITY_RE.search(sentence) is not None:
        return None
    return _value(sentence[eq + 1 :].replace("\\]", " ").replace("\\)", " "))


def whole_equation(text: str) -> str | None:
    """The final equation as written, both sides (`y = -x/2 + 3/4`), where `equation`
    keeps only its last side: the last sentence's last math span, else its value. Only
    the sentence the answer was read from: an earlier equation is no second try."""
    spans = [s.strip() for s in math_spans(_last_sentence(text)) if s.strip()]
    if spans:
        return spans[-1]
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
    return _value(text) if len(text) <= MAX_VALUE_CHARS and not _states_nothing(text) else None


FINDERS: tuple[tuple[str, Callable[[str], str | None]], ...] = (
    ("json", json_answer),
    ("gsm8k", gsm8k),
    ("answer_line", answer_line),
    ("final_sentence", final_sentence),
    ("named_answer", named_answer),
    ("conclusion", conclusion),
    ("equation", equation),
    ("answer_tag_unclosed", answer_tag_unclosed),
    ("math_span", math_span),
    ("bare", bare),
    ("leading_count", leading_count),
    ("sole_number", sole_number),
)
# After a retracted box only an explicit statement replaces it: a verification's
# last equation ("let me double-check: 3 + 9 = 12") is no new answer.
EXPLICIT = frozenset(
    {"json", "gsm8k", "conclusion", "named_answer", "answer_line", "final_sentence", "answer_tag_unclosed"}
)


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
    span = span_list(text[_MARKER_TAIL_RE.match(text, last.end()).end() :].lstrip())  # type: ignore[union-attr]
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
