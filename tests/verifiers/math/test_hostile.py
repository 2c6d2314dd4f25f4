"""Nothing can hang: every extraction and normalisation function runs in bounded time
on hostile strings up to the answer cap (issue 11, class 7).

Each call is timed in CPU seconds (`time.process_time`, so other processes on a busy
machine do not count) and the best of `RUNS` runs must stay under `CALL_BUDGET_S`.
A regex with nested quantifiers takes seconds to minutes on these strings; linear
code takes well under a millisecond.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import (
    MathParams,
    MathVerifier,
    choices,
    cleanup,
    compare,
    extract,
    fallbacks,
    fastparse,
    normalize,
    numeric,
    structure,
    symbolic,
    values,
)
from rlvr.verifiers.math.verifier import DEFAULT_MAX_ANSWER_CHARS
from rlvr.verifiers.templates import assistant_text

CALL_BUDGET_S = 0.05
RUNS = 3
CAP = DEFAULT_MAX_ANSWER_CHARS

# Pieces that regexes of the kind this suite guards against backtrack on: runs of
# spaces, words, digits, punctuation, braces, dollars, commands half written.
TOKENS = (
    " ", "abcdef ", "a", "1", "12 ", "1,", ",000", ".", ". ", "!", "\\.", ";", ":", "$", "$$", "\\(", "\\)",
    "\\[", "\\]", "{", "}", "\\{", "\\}", "(", ")", "[", "]", "^", "^{", "^\\circ", "\\circ", "\\text{",
    "\\text{ cm}", "\\text{a}", "\\mathrm{kg}", "\\boxed{", "\\boxed ", "\\fbox{", "\\frac{", "\\frac12",
    "\\left(", "\\right)", "\\sqrt{", "\\pi", "\\binom{", "11111", "!", " or ", " and ", "or", "and", "\\lor",
    "=", "<", "\\le", "x", "\\sin ", "%", "\\%", "answer", "Answer: ", "The answer is ", "final answer",
    "wait ", "not ", "####", "#", "<answer>", "</answer>", "<think>", "</think>", "<!--", "-->",
    "\\phantom{", "\\color{white}", "\\\\", "\\", "\n", "\n\n", "\t", "e", "E", "-", "+", "*", "**", "/",
    "\\begin{pmatrix}", "&", "\\end{pmatrix}", "\\approx", "\\pm", "|", "'", "sq. ", "meters ",
    "<|", "|>", "<|im_end|>", "<|x|>", "<|begin_of_thought|>", "[THINK]", "[/INST", "\u25c1think\u25b7", "</s>", "<s>",
    "<|channel|>", "<|message|>", '{"', '"answer": ', '"answer": "', '\\"', "Ответ:", "答案：", "故答案为", "。",
    "(B)", "B", "B.", "A) ", "选项", "is the answer", "Therefore ", "costs ", "I think that's the answer. ",
)  # fmt: skip
ENDINGS = ("", "!", "x", "}", "$", "\\", " 1", "\n")


def _extract(s: str, mode: extract.Mode) -> object:
    return extract.extract_answer(s, mode)


def _norm_text(s: str) -> str:
    return normalize.normalize(s).text


def _view(s: str) -> object:
    return compare.view.__wrapped__(s)


def _structure(s: str) -> object:
    try:
        return structure.parse(_norm_text(s))
    except structure.TooDeep:
        return None


def _check_text(s: str) -> None:
    try:
        symbolic._check_text(s)
    except symbolic.Refused:
        pass


def _extractors() -> dict[str, Callable[[str], object]]:
    fns: dict[str, Callable[[str], object]] = {
        f"extract_answer[{mode}]": partial(_extract, mode=mode) for mode in extract.MODES
    }
    fns.update(
        {
            "extract_gold": extract.extract_gold,
            "boxed_spans": extract.boxed_spans,
            "strip_stray_delimiters": cleanup.strip_stray_delimiters,
            "remove_hidden": cleanup.remove_hidden,
            "normalize": normalize.normalize,
            "strip_math_wrappers": normalize.strip_math_wrappers,
            "strip_trailing_punct": normalize.strip_trailing_punct,
            "parse_number": lambda s: numeric.parse_number(_norm_text(s)),
            "structure.parse": _structure,
            "compare.view": _view,
            "symbolic.check_text": _check_text,
            "fastparse.parse": fastparse.parse,
            "fallbacks.chain_value": fallbacks.chain_value,
            "fallbacks.whole_equation": fallbacks.whole_equation,
            "fallbacks.final_sentence": fallbacks.final_sentence,
            "fallbacks.answer_line": fallbacks.answer_line,
            "fallbacks.named_answer": fallbacks.named_answer,
            "fallbacks.conclusion": fallbacks.conclusion,
            "extract.without_cut_repeat": extract.without_cut_repeat,
            "extract.answer_region": extract.answer_region,
            "templates.assistant_text": assistant_text,
            "values.json_answer": values.json_answer,
            "values.trim_remark": values.trim_remark,
            "values.span_list": values.span_list,
            "choices.letter_of": choices.letter_of,
            "choices.options": choices.options,
            "choices.stated_letter": choices.stated_letter,
        }
    )
    return fns


FUNCTIONS = _extractors()


def _cpu_time(fn: Callable[[str], object], s: str) -> float:
    best = float("inf")
    for _ in range(RUNS):
        start = time.process_time()
        fn(s)
        best = min(best, time.process_time() - start)
        if best < CALL_BUDGET_S:
            break
    return best


def _assert_fast(s: str) -> None:
    slow = {name: t for name, fn in FUNCTIONS.items() if (t := _cpu_time(fn, s)) > CALL_BUDGET_S}
    assert not slow, (s[:80], len(s), slow)


def _runs() -> list[str]:
    """Each token repeated up to the cap, then an ending that makes a match fail late."""
    out = []
    for token in TOKENS:
        body = token * (CAP // len(token))
        for ending in ENDINGS:
            out.append((body + ending)[:CAP])
    return out


def _pairs() -> list[str]:
    """A digit, then a run of one token alternating with another (`1 abcdef abcdef ... !`)."""
    heads = ("1 ", "\\boxed{", "Answer: ", "x=", "$")
    return [
        (head + (a + b) * (CAP // (len(a) + len(b))))[: CAP - 1] + "!"
        for head in heads
        for a in TOKENS[:24]
        for b in (" ", "a")
    ]


@pytest.mark.parametrize("s", _runs(), ids=lambda s: repr(s[:12]) + f"*{len(s)}")
def test_runs_of_a_token_are_fast(s: str) -> None:
    _assert_fast(s)


@pytest.mark.parametrize("s", _pairs(), ids=lambda s: repr(s[:16]) + f"*{len(s)}")
def test_alternating_runs_are_fast(s: str) -> None:
    _assert_fast(s)


def test_issue_example_unit_words() -> None:
    s = "1 " + "abcdef " * 10 + "!"
    _assert_fast(s)
    _assert_fast("1 " + "abcdef " * (CAP // 7) + "!")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=CAP).map(lambda xs: "".join(xs)[:CAP]))
def test_generated_hostile_strings_are_fast(s: str) -> None:
    _assert_fast(s)


@pytest.mark.parametrize("token", [" ", "$", "\\boxed{", "{", "<answer>", "Answer: 1 ", "wait ", "= "])
def test_whole_responses_extract_fast(token: str) -> None:
    """Extraction sees whole responses, not only answers: a response of one token
    repeated to `RESPONSE_PROBE_CHARS` must still extract in linear time."""
    s = token * (RESPONSE_PROBE_CHARS // len(token)) + "!"
    for mode in extract.MODES:
        assert _cpu_time(partial(_extract, mode=mode), s) < RESPONSE_BUDGET_S, mode


# Linear work over 100,000 characters is a few milliseconds; a quadratic scan is minutes.
RESPONSE_PROBE_CHARS = 100_000
RESPONSE_BUDGET_S = 0.5


ITEM_CPU_BUDGET_S = 1.0
WHOLE_ITEM_TOKENS = (
    " ", "$", "\\boxed{", "{", "<answer>", "Answer: 1 ", "wait ", "= ", "\\(", "#### 1\n", "$x$ ", "<!--",
    "\\phantom{", "\\color{white}", "}", "\\boxed{1}", "\\boxed{1} wait ", "</think>", "x = 1 = 2 = ", "\\\\",
    "1 abcdef ", "\\frac{1}{2}", "1" * 50 + " ",
    '{"answer": "', '{"', "<|x|>", "<|im_start|>", "<|im_end|>", "</s><s>", "[THINK]", "The answer is ", "Ответ: ",
    "(B) ", "B", "Therefore 1 ", "I think that's the answer. ", "The answer is 1. The answer is 1", "is ", "has ",
    "$1 ", "5 (maybe 6) ",
)  # fmt: skip


@pytest.mark.parametrize("token", WHOLE_ITEM_TOKENS)
def test_no_item_takes_a_second_at_the_response_cap(token: str) -> None:
    """The issue's bound: no item costs more than 1 s of CPU on any input up to the caps."""
    verifier, params = MathVerifier(), MathParams()
    s = (token * (params.max_response_chars // len(token) + 1))[: params.max_response_chars - 1] + "!"
    prompt = "Pick one: (A) 1 (B) 2 (C) $x + 1$ (D) 4 " * 50
    for gold_text in ("5", "B"):
        gold = verifier.prepare(params, gold_text)
        spent = _cpu_time(lambda text, g=gold: verifier.verify(GradeInput(prompt, text), params, g), s)
        assert spent < ITEM_CPU_BUDGET_S, (token, gold_text, spent)


def _boxed_spans_from_the_start(text: str) -> list[tuple[int, int, str]]:
    """`extract.boxed_spans` as it was, scanning every brace from the first character:
    the reference the scan from the first box must agree with."""
    found: list[tuple[int, int, int, int]] = []
    stack: list[tuple[int, int]] = []
    for m in extract._BOX_TOKEN_RE.finditer(text):
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
    found += [(m.start(), m.end(), m.start(1), m.end(1)) for m in extract._BOX_BARE_RE.finditer(text)]
    spans: list[tuple[int, int, str]] = []
    for start, end, cstart, cend in sorted(found):
        if not (spans and start < spans[-1][1]):
            spans.append((start, end, text[cstart:cend]))
    return spans


# Braces, escapes, row breaks and box openers in any order: every way the text before a
# box could leave the brace stack.
_BRACE_SOUP = st.lists(
    st.sampled_from(["{", "}", "\\{", "\\}", "\\\\", "\\", "\\boxed{", "\\fbox {", "\\boxed 7 ", "x", " ", "$", "b"]),
    max_size=40,
).map("".join)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BRACE_SOUP)
def test_the_box_scan_from_the_first_box_finds_what_a_full_scan_does(text: str) -> None:
    assert extract.boxed_spans(text) == _boxed_spans_from_the_start(text)
