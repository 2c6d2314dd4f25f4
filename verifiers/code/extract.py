"""Which part of a response is the program."""

from __future__ import annotations

import re

from rlvr.verifiers.code.models import ALIASES

# An opening fence with an optional info string, up to a closing fence or the end (a
# response cut off mid-block still has its code).
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)


def extract_code(response: str, language: str) -> str:
    """The last fenced block tagged with `language` (or an alias); else the last
    untagged block; else the whole response."""
    tagged: list[str] = []
    untagged: list[str] = []
    for match in _FENCE.finditer(response):
        tag = match.group(2).strip().lower()
        body = match.group(3)
        if not tag:
            untagged.append(body)
        elif ALIASES.get(tag) == language:
            tagged.append(body)
    if tagged:
        return tagged[-1]
    if untagged:
        return untagged[-1]
    return response
