"""The documented classes of disagreement between `ifeval` and IFEval's reference on real
responses (`bench/ifeval_real.py`), each a case where the reference is wrong:

- `reference_random_letter`: a `letter` outside a-z/A-Z (IFEval's rows 1122 and 1129 ask
  for `#` and `!`); the reference replaces it with a random ASCII letter, a coin toss,
  where rlvr counts the character asked for.
- `no_language`: nothing langdetect can read in the response (or, loose, one of its
  variants), which the reference counts as the language instruction followed.
"""

from __future__ import annotations

import string
from typing import Any

from rlvr.verifiers.ifeval.text import detect_language

REFERENCE_RANDOM_LETTER = "reference_random_letter"
NO_LANGUAGE = "no_language"
LANGUAGE_IDS = {"language:response_language", "change_case:english_capital", "change_case:english_lowercase"}


def draws_a_random_letter(iid: str, kwargs: dict[str, Any]) -> bool:
    """Whether the reference replaces this instruction's letter with a random one."""
    return iid == "keywords:letter_frequency" and kwargs["letter"] not in string.ascii_letters


def disagreement_class(iid: str, kwargs: dict[str, Any], variants: list[str]) -> str | None:
    """The documented class a disagreement on this instruction belongs to, or None."""
    if draws_a_random_letter(iid, kwargs):
        return REFERENCE_RANDOM_LETTER
    if iid in LANGUAGE_IDS and any(v.strip() and detect_language(v) is None for v in variants):
        return NO_LANGUAGE
    return None
