"""Nothing a response holds can make `ifeval` hang.

IFEval's bullet, placeholder and title regexes backtrack quadratically on long runs of
whitespace, `[` or `<`; here they are single passes. The passes must find what the
regexes find (checked on random text, where the regexes are fast), and every check must
take bounded time on hostile responses of the largest size graded: the verifier's own
deadline, for all 25 instructions, strict and loose. Time is CPU time
(`time.process_time`, so a busy machine does not count), best of `RUNS` runs, against a
budget that linear code meets by orders of magnitude and the quadratic regexes miss by
as much (10^10 steps at this size).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
from rlvr.verifiers.ifeval import text as t
from rlvr.verifiers.ifeval.verifier import DEADLINE_S, MAX_RESPONSE_CHARS
from tests.verifiers.ifeval.generate import kwargs_for

SCAN_BUDGET_S = 0.5
RUNS = 3
SIZE = MAX_RESPONSE_CHARS

# The references: IFEval's own patterns.
_BULLET_STAR = re.compile(r"^\s*\*[^\*].*$", re.MULTILINE)
_BULLET_DASH = re.compile(r"^\s*-.*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\[.*?\]")
_TITLE = re.compile(r"<<[^\n]+>>")

ALPHABET = st.sampled_from(["*", "-", " ", "\n", "\t", "[", "]", "<", ">", "a", "B", "\u00a0", "\r"])
TEXTS = st.lists(ALPHABET, max_size=60).map("".join)


@settings(max_examples=1500, deadline=None)
@given(TEXTS)
def test_scans_find_what_ifevals_regexes_find(text: str) -> None:
    assert t.count_bullets(text) == len(_BULLET_STAR.findall(text)) + len(_BULLET_DASH.findall(text))
    assert t.count_placeholders(text) == len(_PLACEHOLDER.findall(text))
    assert t.has_title(text) == any(m.lstrip("<").rstrip(">").strip() for m in _TITLE.findall(text))


HOSTILE = {
    "spaces": " " * SIZE,
    "newlines": "\n" * SIZE,
    "space_lines": " \n" * (SIZE // 2),
    "open_brackets": "[" * SIZE,
    "open_titles": "<" * SIZE,
    "title_no_close": "<<" + "a" * (SIZE - 2),
    "stars": "*" * SIZE,
    "star_space": "* " * (SIZE // 2),
    "dashes": "-" * SIZE,
    "abbreviations": "Mr. A. B. C. " * (SIZE // 13),
    "punctuation": "?!" * (SIZE // 2),
    "dotted": "a. (" * (SIZE // 4),
    "abbreviation_lines": "*MR. A. B. C.*\n" * (SIZE // 15),
    "words": "WORD, " * (SIZE // 6),
    "json_open": "{" * SIZE,
    "mail_like": "a@" * (SIZE // 2),
    "section": "Section " * (SIZE // 8),
    "postscript": "p. p. " * (SIZE // 6),
}


def _cpu(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_scans_are_linear_on_hostile_text(name: str) -> None:
    text = HOSTILE[name]
    for scan in (t.count_bullets, t.count_placeholders, t.has_title):
        assert _cpu(lambda scan=scan: scan(text)) < SCAN_BUDGET_S, scan.__name__  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_all_25_checks_grade_a_hostile_response_within_the_deadline(name: str) -> None:
    import random

    text = HOSTILE[name]
    kwargs = kwargs_for(random.Random(0), "Say hi.", "Some text.")
    gt = IFEvalGroundTruth.model_validate({"instruction_id_list": list(kwargs), "kwargs": list(kwargs.values())})
    verifier = IFEvalVerifier()
    for mode in ("strict", "loose"):
        start = time.process_time()
        response = text[: SIZE - len(mode)] + mode
        out = verifier.verify(GradeInput("Say hi.", response), IFEvalParams(mode=mode), gt)
        # One run each, of distinct text: the tokenisers' caches would make a repeat free.
        assert time.process_time() - start < DEADLINE_S, mode
        assert out.details["total"] == 25 and out.mask is False
        assert out.reason != f"response longer than {SIZE} characters"
