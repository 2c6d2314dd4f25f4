from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rlvr.verifiers.base import GradeInput, Outcome, Verdict
from rlvr.verifiers.format import FormatParams, FormatVerifier

V = FormatVerifier()


def _verify(response: str, params: dict[str, Any]) -> Outcome:
    return V.verify(GradeInput("", response), FormatParams(**params), None)


def check(response: str, **params: object) -> tuple[float, Verdict]:
    out = V.verify(GradeInput("", response), FormatParams(**params), None)  # type: ignore[arg-type]
    return out.score, out.verdict


@pytest.mark.parametrize(
    "response",
    [
        "<think>x</think><answer>4</answer>",
        "  <think>\nmulti\nline\n</think>\n\n<answer> 4 </answer>\n",
        "<think></think><answer></answer>",
    ],
)
def test_think_answer_accepts(response: str) -> None:
    assert check(response) == (1.0, Verdict.CORRECT)


@pytest.mark.parametrize(
    "response",
    [
        "",
        "4",
        "<answer>4</answer><think>x</think>",  # wrong order
        "<think>x</think><answer>4</answer><answer>5</answer>",  # two answers
        "<think>a</think><think>b</think><answer>4</answer>",  # two thinks
        "hello <think>x</think><answer>4</answer>",  # text outside
        "<think>x</think> and <answer>4</answer>",
        "<think>x</think><answer>4</answer> trailing",
        "<think>x<answer>4</answer></think>",  # nested
        "<think>x</think><answer>4",  # unclosed
        "<think>x</think><answer>4</answer></answer>",
        "<THINK>x</THINK><ANSWER>4</ANSWER>",
    ],
)
def test_think_answer_rejects(response: str) -> None:
    assert check(response) == (0.0, Verdict.INCORRECT)


def test_regex_full_match() -> None:
    assert check("Answer: 42", preset="regex", pattern=r"Answer: \d+") == (1.0, Verdict.CORRECT)
    assert check("Answer: 42 extra", preset="regex", pattern=r"Answer: \d+") == (0.0, Verdict.INCORRECT)
    assert check("answer: 42", preset="regex", pattern=r"ANSWER: \d+", flags=["IGNORECASE"])[0] == 1.0


def test_regex_catastrophic_backtracking_times_out() -> None:
    assert check("a" * 50, preset="regex", pattern="(a|aa)+c", timeout_s=0.1) == (0.0, Verdict.TIMEOUT)


def test_tags() -> None:
    ok = "<plan>p</plan> then <code>c</code>"
    assert check(ok, preset="tags", tags=["plan", "code"]) == (1.0, Verdict.CORRECT)
    assert check("<plan>p</plan>", preset="tags", tags=["plan", "code"])[0] == 0.0
    assert check("<plan>a</plan><plan>b</plan><code>c</code>", preset="tags", tags=["plan", "code"])[0] == 0.0
    assert check("</plan>p<plan>", preset="tags", tags=["plan"])[0] == 0.0


@pytest.mark.parametrize(
    "params",
    [
        {"preset": "regex"},
        {"preset": "regex", "pattern": "(unclosed"},
        {"preset": "tags"},
        {"preset": "tags", "tags": ["a b"]},
        {"preset": "other"},
        {"preset": "regex", "pattern": "a", "flags": ["VERBOSE"]},
        {"extra": 1},
    ],
)
def test_bad_params_rejected(params: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        FormatParams(**params)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("response", "params"),
    [
        ("<think></think>\n<answer>4</answer>", {"preset": "think_answer"}),
        ("<think>   \n </think><answer>4</answer>", {"preset": "think_answer"}),
        ("<think>2+2=4</think><answer> </answer>", {"preset": "think_answer"}),
        ("<think></think><answer></answer>", {"preset": "think_answer"}),
        ("<think></think>", {"preset": "think_answer"}),  # the shape is wrong too: still an attempt
        ("<plan></plan><code>x = 1</code>", {"preset": "tags", "tags": ["plan", "code"]}),
        ("<a>1</a><b>\n</b>", {"preset": "tags", "tags": ["a", "b"]}),
    ],
)
def test_an_empty_required_section_is_signalled(response: str, params: dict[str, Any]) -> None:
    assert "empty_section" in _verify(response, params).signals


@pytest.mark.parametrize(
    ("response", "params"),
    [
        ("<think>2+2=4</think>\n<answer>4</answer>", {"preset": "think_answer"}),
        ("<answer>4</answer>", {"preset": "think_answer"}),
        ("<plan>do it</plan><code>x = 1</code>", {"preset": "tags", "tags": ["plan", "code"]}),
        ("", {"preset": "regex", "pattern": ".*"}),
    ],
)
def test_a_section_with_content_or_no_section_raises_no_signal(response: str, params: dict[str, Any]) -> None:
    assert _verify(response, params).signals == ()
