"""Chat-template turn tokens in the text a trainer sends: a response decoded with its
special tokens (`...\n```<|im_end|>`), or a prompt rendered through the chat template.
Prose responses (math) are read through `templates.assistant_text`, which knows the
reasoning templates too.

Only the `<|name|>` form that ChatML, Llama 3 and most templates use; each token is
matched by one bounded pattern, so every function here runs in linear time.
"""

from __future__ import annotations

import re

__all__ = ["cut_code_at_turn_end", "without_turn_tokens"]

_TURN_TOKEN_START = "<|"
# `<|im_start|>`, `<|im_end|>`, `<|endoftext|>`, `<|eot_id|>`, `<|start_header_id|>`.
_TURN_TOKEN_RE = re.compile(r"<\|[a-z_]{2,20}\|>")

# Text before a token on its line that still makes it a turn's end: indentation and a
# fence (```<|im_end|>); anything longer is a line of code or prose that quotes it.
_MAX_LEAD = 16


def cut_code_at_turn_end(text: str) -> str:
    """The code response up to the token that ends its turn. Code may quote a token (a string
    `'<|im_end|>'` in a tokenizer task, a mention in the thinking): only a token that
    starts its line, follows a fence alone on its line, or ends the text (with nothing
    after it but blanks and more tokens) ends the turn."""
    if _TURN_TOKEN_START not in text:
        return text
    tail = _trailing_tokens_start(text)
    line_start = 0
    scanned = 0
    for m in _TURN_TOKEN_RE.finditer(text):
        newline = text.rfind("\n", scanned, m.start())
        if newline >= 0:
            line_start = newline + 1
        scanned = m.start()
        lead = text[line_start : m.start()] if m.start() - line_start <= _MAX_LEAD else "x"
        if m.start() >= tail or not lead.strip(" \t`~"):
            return text[: m.start()]
    return text


def _trailing_tokens_start(text: str) -> int:
    """Where the run of blanks and tokens that ends `text` starts (len(text) if none)."""
    end = len(text)
    while True:
        while end > 0 and text[end - 1].isspace():
            end -= 1
        start = text.rfind(_TURN_TOKEN_START, max(0, end - 24), end)
        if start < 0 or _TURN_TOKEN_RE.fullmatch(text, start, end) is None:
            return end
        end = start


def without_turn_tokens(text: str) -> str:
    """`text` with each chat-template token replaced by a line break: a rendered
    prompt's turns as plain text, where a fence that the template closed with
    ```` ```<|im_end|> ```` closes on a line of its own."""
    return _TURN_TOKEN_RE.sub("\n", text) if _TURN_TOKEN_START in text else text
