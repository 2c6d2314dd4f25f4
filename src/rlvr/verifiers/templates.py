"""The model's own answer in a response decoded with its chat template's tokens.

A response may carry the special tokens of the template it was written in: a
reasoning model's thought markers (`<|begin_of_thought|>`, `<think>`, `[THINK]`,
`◁think▷`, Harmony's `analysis` channel), the end of its turn (`<|im_end|>`,
`<|eot_id|>`, `</s>`, `<｜end▁of▁sentence｜>`), or a turn it went on to write for
the user. `assistant_text` keeps the model's first turn, with every thought
marker rewritten to `<think>`/`</think>`, which the verifiers read. Any other
token, known (`<|begin_of_solution|>`) or not (`<|reserved_special_token_3|>`),
becomes a line break: an unknown token separates text, it never ends the answer.

Each token is matched by one bounded pattern and the text is walked once, so the
cost is linear in its length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["assistant_text"]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

_TOKEN_RE = re.compile(
    r"<\|[^|<>\n]{1,48}\|>"
    r"|<\uff5c[^\uff5c<>\n]{1,48}\uff5c>"
    r"|</?(?:think|thinking|thought|reasoning|seed:think|seed:eos|s|eos|bos|end_of_turn|start_of_turn)>"
    r"|\[/?(?:INST|THINK)\]"
    r"|\u25c1/?think\u25b7",
    re.IGNORECASE,
)
_TOKEN_CHARS = ("<", "[", "\u25c1")

_THINK_OPENS = frozenset(
    {"<think>", "<thinking>", "<thought>", "<reasoning>", "<seed:think>", "[think]", "\u25c1think\u25b7"}
    | {"<|begin_of_thought|>", "<|thinking|>", "<|start_thinking|>", "<|begin_of_thinking|>"}
)
_THINK_CLOSES = frozenset(
    {"</think>", "</thinking>", "</thought>", "</reasoning>", "</seed:think>", "[/think]", "\u25c1/think\u25b7"}
    | {"<|end_of_thought|>", "<|/thinking|>", "<|end_thinking|>", "<|end_of_thinking|>"}
)
_TURN_ENDS = frozenset(
    {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|endoftext|>", "<|end_of_text|>", "<|end|>", "<|return|>"}
    | {
        "<end_of_turn>",
        "</s>",
        "<eos>",
        "<seed:eos>",
        "<|end_of_turn_token|>",
        "<\uff5cend\u2581of\u2581sentence\uff5c>",
    }
)
# A turn start is followed by its role's name (`<|im_start|>assistant`).
_TURN_STARTS = frozenset(
    {"<|im_start|>", "<|start_header_id|>", "<start_of_turn>", "<|start|>", "<|start_of_turn_token|>"}
    | {"<s>", "<bos>", "<|begin_of_text|>", "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "[inst]"}
)
# Tokens that are a role themselves: what follows is that role's turn.
_ROLE_TOKENS = {
    "<|user|>": "user",
    "<|assistant|>": "assistant",
    "<|system|>": "system",
    "<\uff5cuser\uff5c>": "user",
    "<\uff5cassistant\uff5c>": "assistant",
    "[inst]": "user",
    "[/inst]": "assistant",
    "<|user_token|>": "user",
    "<|chatbot_token|>": "assistant",
    "<|system_token|>": "system",
}
_MODEL_ROLES = frozenset({"assistant", "model", "gpt", "bot", "chatbot"})
_ROLE_HEADER_RE = re.compile(r"[ \t]*(assistant|model|user|system|developer|tool|human|gpt|bot|chatbot)\b", re.I)
# Harmony (gpt-oss): `<|channel|>analysis<|message|>` thinks, `<|channel|>final<|message|>` answers.
_CHANNEL = "<|channel|>"
_MESSAGE = "<|message|>"
_MAX_CHANNEL_NAME = 40


@dataclass(slots=True)
class _Turn:
    role: str | None
    parts: list[str] = field(default_factory=list)
    thinking: bool = False
    paused: bool = False

    def text(self) -> str:
        return "".join(self.parts)

    def is_model_turn(self) -> bool:
        return (self.role is None or self.role in _MODEL_ROLES) and bool(self.text().strip())


@lru_cache(maxsize=8)
def assistant_text(text: str) -> str:
    """The model's first turn of `text`, thought markers as `<think>`/`</think>`."""
    if not any(ch in text for ch in _TOKEN_CHARS) or _TOKEN_RE.search(text) is None:
        return text
    turns = _turns(text)
    for turn in turns:
        if turn.is_model_turn():
            return turn.text()
    return ""


def _turns(text: str) -> list[_Turn]:
    turns = [_Turn(None)]
    pos = 0
    header = False  # the text after a turn start opens with its role's name
    for m in _TOKEN_RE.finditer(text):
        if m.start() < pos:
            continue
        _add(turns, text[pos : m.start()], header)
        header = False
        pos = m.end()
        token = m.group(0).lower()
        turn = turns[-1]
        if token == _CHANNEL:
            pos = _channel(turn, text, pos)
        elif token in _THINK_OPENS or token in _THINK_CLOSES:
            _think(turn, token in _THINK_OPENS)
        elif token in _ROLE_TOKENS:
            if turn.is_model_turn():
                break  # the model's turn is complete; nothing after it is read
            _new_turn(turns, _ROLE_TOKENS[token])
        elif token in _TURN_STARTS:
            header = True
            if turn.is_model_turn() and not turn.paused:
                break
            if not turn.paused:
                _new_turn(turns, None)
        elif token in _TURN_ENDS and turn.thinking:
            # Harmony ends its thinking channel with `<|end|>` and answers in a
            # `<|start|>assistant` channel after it: the turn pauses, not ends.
            turn.paused = True
            turn.parts.append("\n")
        elif token in _TURN_ENDS:
            if turn.is_model_turn():
                break
            _new_turn(turns, None)
        else:
            turn.parts.append("\n")
    else:
        _add(turns, text[pos:], header)
    return turns


def _new_turn(turns: list[_Turn], role: str | None) -> None:
    """Start a turn; a blank one before it held nothing to keep, and is reused."""
    last = turns[-1]
    if not last.thinking and not "".join(last.parts).strip():
        last.role, last.parts, last.paused = role, [], False
    else:
        turns.append(_Turn(role))


def _add(turns: list[_Turn], chunk: str, header: bool) -> None:
    """Add the text between two tokens; after a turn start it opens with a role's
    name, and a paused turn goes on only if that role is the model's."""
    turn = turns[-1]
    m = _ROLE_HEADER_RE.match(chunk) if header else None
    if m is not None:
        role = m.group(1).lower()
        chunk = chunk[m.end() :]
        if turn.paused and role not in _MODEL_ROLES:
            turn = _Turn(role)
            turns.append(turn)
        elif turn.role is None:
            turn.role = role
    if chunk:
        turn.paused = False
    turn.parts.append(chunk)


def _think(turn: _Turn, opening: bool) -> None:
    if opening != turn.thinking:
        turn.parts.append(THINK_OPEN if opening else THINK_CLOSE)
        turn.thinking = opening
    else:
        turn.parts.append("\n")


def _channel(turn: _Turn, text: str, pos: int) -> int:
    """A Harmony channel header: `final` closes the thinking, any other channel opens it."""
    end = text.find(_MESSAGE, pos, pos + _MAX_CHANNEL_NAME + len(_MESSAGE))
    if end < 0:
        turn.parts.append("\n")
        return pos
    name = text[pos:end].strip().lower()
    _think(turn, not name.startswith("final"))
    return end + len(_MESSAGE)
