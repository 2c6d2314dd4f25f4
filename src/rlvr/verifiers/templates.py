"""The model's own answer in a response decoded with its chat template's tokens.

A response may carry the special tokens of the template it was written in: a
reasoning model's thought markers (`<|begin_of_thought|>`, `<think>`, `[THINK]`,
`◁think▷`, Harmony's `analysis` channel), the end of its turn (`<|im_end|>`,
`<|eot_id|>`, `</s>`, `<｜end▁of▁sentence｜>`), or a turn it went on to write for
the user. `assistant_text` keeps the model's first turn, with every thought
marker rewritten to `<think>`/`</think>`, which the verifiers read; `turns` lists
every turn, for a verifier that must also see what lies outside the model's.
Any other token, known (`<|begin_of_solution|>`) or not
(`<|reserved_special_token_3|>`), becomes a line break: an unknown token separates
text, it never ends the answer.

A thought marker closes only thinking that its own family opened, written in the same
case (`[/THINK]` closes `[THINK]`, not `<think>`; `</THINK>` closes `<THINK>`, not
`<think>`): inside a template's thinking, another template's close is more thinking,
as a chat UI showing the template's own markers would show it. Tokens are matched in ASCII only, so a Kelvin
sign does not spell `</think>`.

Thinking that the template opened in the prompt (DeepSeek-R1, Qwen3) is read with
`primed=True`: the model's first turn begins inside a `<think>` block.

Each token is matched by one bounded pattern and the text is walked once, so the
cost is linear in its length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

__all__ = ["THINK_CLOSE", "THINK_OPEN", "Turn", "assistant_text", "reply_text", "turns"]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

_TOKEN_RE = re.compile(
    r"<\|[^|<>\n]{1,48}\|>"
    r"|<\uff5c[^\uff5c<>\n]{1,48}\uff5c>"
    r"|</?(?:think|thinking|thought|reasoning|seed:think|seed:eos|s|eos|bos|end_of_turn|start_of_turn)>"
    r"|\[/?(?:INST|THINK)\]"
    r"|\u25c1/?think\u25b7",
    re.IGNORECASE | re.ASCII,
)
_TOKEN_CHARS = ("<", "[", "\u25c1")

# Each thought marker (lower case) with its family: a close ends only its family's thinking.
_THINK_OPENS = {
    "<think>": "think",
    "<thinking>": "thinking",
    "<thought>": "thought",
    "<reasoning>": "reasoning",
    "<seed:think>": "seed",
    "[think]": "mistral",
    "\u25c1think\u25b7": "kimi",
    "<|begin_of_thought|>": "of_thought",
    "<|thinking|>": "pipe_thinking",
    "<|start_thinking|>": "start_thinking",
    "<|begin_of_thinking|>": "of_thinking",
}
_THINK_CLOSES = {
    "</think>": "think",
    "</thinking>": "thinking",
    "</thought>": "thought",
    "</reasoning>": "reasoning",
    "</seed:think>": "seed",
    "[/think]": "mistral",
    "\u25c1/think\u25b7": "kimi",
    "<|end_of_thought|>": "of_thought",
    "<|/thinking|>": "pipe_thinking",
    "<|end_thinking|>": "start_thinking",
    "<|end_of_thinking|>": "of_thinking",
}
_PRIMED_FAMILY = "think/lower"


def _cased(family: str, written: str) -> str:
    """A marker's family with the case it is written in: `</THINK>` does not close
    `<think>`, as a chat UI reading the template's own markers would not."""
    if written == written.lower():
        return f"{family}/lower"
    return f"{family}/upper" if written == written.upper() else f"{family}/mixed"
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
_ROLE_HEADER_RE = re.compile(
    r"[ \t]*(assistant|model|user|system|developer|tool|human|gpt|bot|chatbot)\b", re.IGNORECASE | re.ASCII
)
# Harmony (gpt-oss): `<|channel|>analysis<|message|>` thinks, `<|channel|>final<|message|>` answers.
_CHANNEL = "<|channel|>"
_MESSAGE = "<|message|>"
_HARMONY_FAMILY = "harmony"
_MAX_CHANNEL_NAME = 40


class Turn(NamedTuple):
    """One turn: its role (`None` where no header named one), its text with thought
    markers as `<think>`/`</think>`, and whether it is the model's."""

    role: str | None
    text: str
    is_model: bool


@dataclass(slots=True)
class _Turn:
    role: str | None
    parts: list[str] = field(default_factory=list)
    thinking: str | None = None  # the family of the thinking block open in this turn
    paused: bool = False
    # Kept as parts arrive: re-reading the parts on every token would be quadratic.
    has_text: bool = False

    def add(self, part: str) -> None:
        if part:
            self.parts.append(part)
            self.has_text = self.has_text or not part.isspace()

    def is_model_role(self) -> bool:
        return self.role is None or self.role in _MODEL_ROLES

    def is_model_turn(self) -> bool:
        return self.is_model_role() and self.has_text


@lru_cache(maxsize=8)
def assistant_text(text: str, primed: bool = False) -> str:
    """The model's first turn of `text`, thought markers as `<think>`/`</think>`."""
    if not primed and not _has_token(text):
        return text
    for turn in turns(text, primed=primed):
        if turn.is_model:
            return turn.text
    return ""


_THINK_CLOSE_RE = re.compile(re.escape(THINK_CLOSE), re.IGNORECASE)


def reply_text(text: str) -> str:
    """`assistant_text`, where a reply that closes thinking it never opened began inside
    it: DeepSeek-R1's template opens `<think>` in the prompt, so its replies hold only
    the `</think>`, and the answer it reasoned to before that is still thinking."""
    own = assistant_text(text)
    if THINK_OPEN in own or THINK_CLOSE in own or _THINK_CLOSE_RE.search(text) is None:
        return own
    primed = assistant_text(text, primed=True)
    return primed if THINK_CLOSE in primed else own


@lru_cache(maxsize=8)
def turns(text: str, *, primed: bool = False) -> tuple[Turn, ...]:
    """Every turn of `text`, in order, blank ones left out; with `primed`, the model's
    first turn begins inside a `<think>` block its template opened in the prompt."""
    if not primed and not _has_token(text):
        return (Turn(None, text, True),) if text.strip() else ()
    parsed = _Parser(primed).parse(text)
    return tuple(Turn(t.role, "".join(t.parts), t.is_model_role()) for t in parsed if t.has_text)


def _has_token(text: str) -> bool:
    return any(ch in text for ch in _TOKEN_CHARS) and _TOKEN_RE.search(text) is not None


class _Parser:
    def __init__(self, primed: bool) -> None:
        self.turns = [_Turn(None)]
        self.header = False  # the text after a turn start opens with its role's name
        self.prime = primed  # the model's first turn is still to be put inside `<think>`

    def parse(self, text: str) -> list[_Turn]:
        pos = 0
        for m in _TOKEN_RE.finditer(text):
            if m.start() < pos:
                continue
            self._chunk(text[pos : m.start()])
            pos = self._token(m.group(0), text, m.end())
        self._chunk(text[pos:])
        return self.turns

    def _token(self, written: str, text: str, pos: int) -> int:
        """Read one token; return where the text after it starts."""
        token = written.lower()
        turn = self.turns[-1]
        if token == _CHANNEL:
            return _channel(turn, text, pos)
        if token in _THINK_OPENS:
            _open(turn, _cased(_THINK_OPENS[token], written))
        elif token in _THINK_CLOSES:
            self._primed(turn)
            _close(turn, _cased(_THINK_CLOSES[token], written))
        elif token in _ROLE_TOKENS:
            self._new_turn(_ROLE_TOKENS[token])
        elif token in _TURN_STARTS:
            self.header = True
            if not turn.paused:
                self._new_turn(None)
        elif token in _TURN_ENDS and turn.thinking:
            # Harmony ends its thinking channel with `<|end|>` and answers in a
            # `<|start|>assistant` channel after it: the turn pauses, not ends.
            turn.paused = True
            turn.add("\n")
        elif token in _TURN_ENDS:
            self._new_turn(None)
        else:
            turn.add("\n")
        return pos

    def _new_turn(self, role: str | None) -> None:
        """Start a turn; a blank one before it held nothing to keep, and is reused."""
        last = self.turns[-1]
        if not last.thinking and not last.has_text:
            last.role, last.parts, last.paused = role, [], False
        else:
            self.turns.append(_Turn(role))

    def _chunk(self, chunk: str) -> None:
        """Add the text between two tokens; after a turn start it opens with a role's
        name, and a paused turn goes on only if that role is the model's."""
        turn = self.turns[-1]
        m = _ROLE_HEADER_RE.match(chunk) if self.header else None
        self.header = False
        if m is not None:
            role = m.group(1).lower()
            chunk = chunk[m.end() :]
            if turn.paused and role not in _MODEL_ROLES:
                turn = _Turn(role)
                self.turns.append(turn)
            elif turn.role is None:
                turn.role = role
        if chunk and not chunk.isspace():
            turn.paused = False
            self._primed(turn)
        turn.add(chunk)

    def _primed(self, turn: _Turn) -> None:
        """Open the prompt's thinking where the model's first turn begins."""
        if self.prime and turn.is_model_role() and not turn.has_text:
            self.prime = False
            _open(turn, _PRIMED_FAMILY)


def _open(turn: _Turn, family: str) -> None:
    if turn.thinking:
        turn.add("\n")
    else:
        turn.add(THINK_OPEN)
        turn.thinking = family


def _close(turn: _Turn, family: str) -> None:
    if turn.thinking == family:
        turn.add(THINK_CLOSE)
        turn.thinking = None
    else:
        turn.add("\n")


def _channel(turn: _Turn, text: str, pos: int) -> int:
    """A Harmony channel header: `final` closes the thinking, any other channel opens it."""
    end = text.find(_MESSAGE, pos, pos + _MAX_CHANNEL_NAME + len(_MESSAGE))
    if end < 0:
        turn.add("\n")
        return pos
    name = text[pos:end].strip().lower()
    if name.startswith("final"):
        _close(turn, _HARMONY_FAMILY)
    else:
        _open(turn, _HARMONY_FAMILY)
    return end + len(_MESSAGE)
