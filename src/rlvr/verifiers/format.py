"""The `format` verifier: does the response have the required shape?

Presets (`params.preset`):

- `think_answer`: the R1-Zero format. Exactly one `<think>…</think>` followed by
  exactly one `<answer>…</answer>`, with only whitespace outside them.
- `regex`: the whole response matches `params.pattern`. Matching runs with a time
  budget (`params.timeout_s`), so a catastrophically backtracking pattern returns
  `timeout` instead of hanging the worker.
- `tags`: each of `params.tags` appears exactly once as `<tag>…</tag>`.

Example::

    >>> from rlvr import GradeInput
    >>> from rlvr.verifiers.format import FormatParams, FormatVerifier
    >>> v = FormatVerifier()
    >>> p = FormatParams(preset="think_answer")
    >>> v.verify(GradeInput("", "<think>2+2</think>\\n<answer>4</answer>"), p, None).score
    1.0
    >>> v.verify(GradeInput("", "<answer>4</answer>"), p, None).reason
    'expected exactly one <think>…</think>, found 0 opening and 0 closing tags'
"""

from __future__ import annotations

from typing import Any, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlvr.verifiers.base import GradeInput, Outcome, Signal, Verdict

DEFAULT_REGEX_TIMEOUT_S = 0.5
MAX_PATTERN_CHARS = 10_000
MAX_TAGS = 64
TAG_NAME = r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"


class FormatParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    preset: Literal["think_answer", "regex", "tags"] = Field("think_answer", description="Which format check to run.")
    pattern: str | None = Field(
        None, max_length=MAX_PATTERN_CHARS, description="`regex` preset: pattern the whole response must match."
    )
    flags: list[Literal["IGNORECASE", "MULTILINE", "DOTALL"]] = Field(
        default_factory=list, description="`regex` preset: regex flags."
    )
    timeout_s: float = Field(
        DEFAULT_REGEX_TIMEOUT_S, gt=0, le=10, description="`regex` preset: time budget for matching."
    )
    tags: list[str] = Field(
        default_factory=list, max_length=MAX_TAGS, description="`tags` preset: tags required exactly once."
    )

    @model_validator(mode="after")
    def _check_preset(self) -> FormatParams:
        if self.preset == "regex":
            if self.pattern is None:
                raise ValueError("pattern is required for preset 'regex'")
            try:
                regex.compile(self.pattern, self._flag_bits())
            except regex.error as exc:
                raise ValueError(f"pattern does not compile: {exc}") from exc
        if self.preset == "tags":
            if not self.tags:
                raise ValueError("tags must list at least one tag for preset 'tags'")
            for tag in self.tags:
                if not regex.fullmatch(TAG_NAME, tag):
                    raise ValueError(f"tag {tag!r} is not a valid tag name")
        return self

    def _flag_bits(self) -> int:
        bits = 0
        for name in self.flags:
            bits |= getattr(regex, name)
        return bits


# Each tag is matched as an opening or closing token so counting is one linear scan.
_THINK_ANSWER = regex.compile(r"\s*<think>(.*?)</think>\s*<answer>(.*?)</answer>\s*", regex.DOTALL)
_TAG_TOKEN = regex.compile(r"</?(" + TAG_NAME + r")>")


def _tag_counts(text: str) -> dict[tuple[str, bool], int]:
    counts: dict[tuple[str, bool], int] = {}
    for m in _TAG_TOKEN.finditer(text):
        key = (m.group(1), m.group(0).startswith("</"))
        counts[key] = counts.get(key, 0) + 1
    return counts


SIGNALS = {
    "empty_section": Signal(
        "A section the format requires (<think>, <answer>, a `tags` tag) is there but holds nothing: the shape "
        "without the content.",
        "<think></think>\n<answer>4</answer>",
    ),
}


def _sections(text: str, tags: list[str]) -> list[str]:
    """What each `<tag>…</tag>` of `tags` holds, first occurrence (one `find` each)."""
    held = []
    for tag in tags:
        start = text.find(f"<{tag}>")
        end = text.find(f"</{tag}>", start + 1) if start >= 0 else -1
        if end >= 0:
            held.append(text[start + len(tag) + 2 : end])
    return held


def _signals(text: str, tags: list[str]) -> tuple[str, ...]:
    return ("empty_section",) if any(not held.strip() for held in _sections(text, tags)) else ()


def _check_think_answer(text: str) -> Outcome:
    counts = _tag_counts(text)
    for tag in ("think", "answer"):
        opened, closed = counts.get((tag, False), 0), counts.get((tag, True), 0)
        if opened != 1 or closed != 1:
            return Outcome(
                0.0,
                Verdict.INCORRECT,
                f"expected exactly one <{tag}>…</{tag}>, found {opened} opening and {closed} closing tags",
            )
    m = _THINK_ANSWER.fullmatch(text)
    if m is None:
        return Outcome(
            0.0, Verdict.INCORRECT, "expected <think>…</think> then <answer>…</answer> with only whitespace around"
        )
    return Outcome(1.0, Verdict.CORRECT, "format ok", {"answer_chars": len(m.group(2))})


def _check_tags(text: str, tags: list[str]) -> Outcome:
    counts = _tag_counts(text)
    found: dict[str, int] = {}
    bad: list[str] = []
    for tag in tags:
        opened, closed = counts.get((tag, False), 0), counts.get((tag, True), 0)
        found[tag] = opened
        if opened != 1 or closed != 1 or text.find(f"<{tag}>") > text.find(f"</{tag}>"):
            bad.append(tag)
    if bad:
        return Outcome(
            0.0,
            Verdict.INCORRECT,
            "tags not present exactly once: " + ", ".join(bad),
            {"counts": found},
        )
    return Outcome(1.0, Verdict.CORRECT, "all tags present once", {"counts": found})


def _check_regex(text: str, params: FormatParams) -> Outcome:
    assert params.pattern is not None  # guaranteed by FormatParams validation
    try:
        m = regex.fullmatch(params.pattern, text, params._flag_bits(), timeout=params.timeout_s)
    except TimeoutError:
        return Outcome(0.0, Verdict.TIMEOUT, f"regex match exceeded {params.timeout_s}s")
    if m is None:
        return Outcome(0.0, Verdict.INCORRECT, "response does not match pattern")
    return Outcome(1.0, Verdict.CORRECT, "response matches pattern")


class FormatVerifier:
    name = "format"
    version = "1.1.0"
    description = "Checks the response's shape: R1-Zero think/answer tags, a regex, or required tags."
    params_model = FormatParams
    ground_truth_model = Any
    default_deadline_s = 5.0
    signals = SIGNALS

    def verify(self, item: GradeInput, params: FormatParams, ground_truth: Any) -> Outcome:
        if params.preset == "think_answer":
            outcome = _check_think_answer(item.response)
            outcome.signals = _signals(item.response, ["think", "answer"])
            return outcome
        if params.preset == "tags":
            outcome = _check_tags(item.response, params.tags)
            outcome.signals = _signals(item.response, params.tags)
            return outcome
        return _check_regex(item.response, params)
