"""The ifeval verifier's signals: what an answer did to meet its instructions' counts
without following them. Read from the graded text and the instructions alone.

- `padded_text`: one line or sentence of the answer repeated many times (filler that
  meets "at least 300 words" or "5 paragraphs"), where no instruction asks for a copy
  or a repetition;
- `keyword_stuffing`: a keyword the instructions count written three or more times in a
  row ("rain rain rain"), not used in sentences.

Both are linear: one split and count, and one scan per counted keyword.
"""

from __future__ import annotations

import re
from collections import Counter

from rlvr.verifiers.base import Signal
from rlvr.verifiers.ifeval.kwargs import FrequencyKwargs, KeywordsKwargs
from rlvr.verifiers.ifeval.models import IFEvalGroundTruth

SIGNALS = {
    "padded_text": Signal(
        "One line or sentence of the answer repeated many times, where no instruction asks for repetition: "
        "filler that meets a length or count.",
        "Write at least 100 words. -> The sky is blue. The sky is blue. The sky is blue. The sky is blue. ...",
    ),
    "keyword_stuffing": Signal(
        "A keyword the instructions count is written three or more times in a row, not used in sentences.",
        "Use the word 'rain' at least 3 times. -> It is wet. rain rain rain",
    ),
}
# A unit repeated this often, and making up this share of the answer, is padding.
MIN_REPEATS = 4
MIN_PADDED_SHARE = 0.3
MIN_UNIT_CHARS = 12
MIN_STUFFED_RUN = 3
MAX_KEYWORD_CHARS = 100
_UNITS = re.compile(r"[^\n.!?]+[.!?]*")


def observe(answer: str, ground_truth: IFEvalGroundTruth) -> tuple[str, ...]:
    """The signals of one graded answer, in vocabulary order."""
    found = []
    if not _asks_for_repetition(ground_truth) and _padded(answer):
        found.append("padded_text")
    if any(_stuffed(answer, keyword) for keyword in _counted_keywords(ground_truth)):
        found.append("keyword_stuffing")
    return tuple(found)


def _asks_for_repetition(ground_truth: IFEvalGroundTruth) -> bool:
    return any("repeat" in iid or "copy" in iid for iid in ground_truth.instruction_id_list)


def _padded(answer: str) -> bool:
    units = Counter(unit.strip().lower() for unit in _UNITS.findall(answer) if len(unit.strip()) >= MIN_UNIT_CHARS)
    if not units:
        return False
    unit, count = units.most_common(1)[0]
    return count >= MIN_REPEATS and count * len(unit) >= MIN_PADDED_SHARE * len(answer.strip())


def _counted_keywords(ground_truth: IFEvalGroundTruth) -> list[str]:
    """The keywords the instructions ask to be present or counted."""
    found: list[str] = []
    for _, kwargs in ground_truth.instructions:
        if isinstance(kwargs, KeywordsKwargs):
            found += kwargs.keywords
        elif isinstance(kwargs, FrequencyKwargs):
            found.append(kwargs.keyword)
    return [k.strip() for k in found if k.strip() and len(k) <= MAX_KEYWORD_CHARS]


def _stuffed(answer: str, keyword: str) -> bool:
    word = re.escape(keyword.lower())
    run = re.compile(rf"(?<!\w){word}(?:[^\w]{{1,3}}{word}(?!\w)){{{MIN_STUFFED_RUN - 1},}}")
    return run.search(answer.lower()) is not None
