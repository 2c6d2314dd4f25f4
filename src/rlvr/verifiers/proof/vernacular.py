"""Reading Coq text without Coq: comments and strings out, sentences and commands found.

Only to refuse early, with a clear reason, what a response may not use, and to check a
statement's shape. Soundness does not rest on it: the check file and `Print Assumptions`
judge every proof (see `coq`). One pass over the characters, then one over the words:
linear time on any text.
"""

from __future__ import annotations

import re

# Commands and tactics that a proof never needs and a hack does: they leave a gap in
# the proof, turn a kernel check off, or reach outside the checked file.
FORBIDDEN: tuple[tuple[str, ...], ...] = (
    ("Admitted",),
    ("admit",),
    ("Axiom",),
    ("Axioms",),
    ("Parameter",),
    ("Parameters",),
    ("Conjecture",),
    ("Unset", "Guard"),
    ("Unset", "Positivity"),
    ("Unset", "Universe"),
    ("bypass_check",),
    # Typing rules beyond Coq's defaults (UIP, an impredicative Set): axioms in effect.
    ("Set", "Definitional"),
    ("Set", "Impredicative"),
    ("Declare", "ML"),
    ("Add", "ML"),
    ("Add", "LoadPath"),
    ("Add", "Rec"),
    ("Load",),
    ("Redirect",),
    ("Drop",),
    ("Cd",),
    ("Extraction",),
    ("Primitive",),
    ("Register",),
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
_FIRST = {words[0] for words in FORBIDDEN}


def _scan(text: str) -> tuple[str, bool]:
    """`text` with each comment replaced by a space and each string's contents by
    nothing (quotes kept); and whether a comment or string is left open. Strings
    inside comments are read as Coq's lexer reads them (a `*)` in one does not close)."""
    out: list[str] = []
    depth = 0
    in_string = False
    i, n = 0, len(text)
    while i < n:
        pair = text[i : i + 2]
        char = text[i]
        if in_string:
            if pair == '""':
                i += 2
                continue
            if char == '"':
                in_string = False
                if depth == 0:
                    out.append('"')
        elif pair == "(*":
            depth += 1
            i += 2
            continue
        elif depth and pair == "*)":
            depth -= 1
            if depth == 0:
                out.append(" ")
            i += 2
            continue
        elif char == '"':
            in_string = True
            if depth == 0:
                out.append('"')
        elif depth == 0:
            out.append(char)
        i += 1
    return "".join(out), bool(depth or in_string)


def strip(text: str) -> str:
    return _scan(text)[0]


def unclosed(text: str) -> bool:
    return _scan(text)[1]


def forbidden(text: str) -> str:
    """The first forbidden command in `text` (outside comments and strings), as
    written; '' if none."""
    words = _WORD.findall(strip(text))
    for index, word in enumerate(words):
        if word not in _FIRST:
            continue
        for sequence in FORBIDDEN:
            if tuple(words[index : index + len(sequence)]) == sequence:
                return " ".join(sequence)
    return ""


def sentence_ends(code: str) -> bool:
    """Whether comment-free `code` has a sentence end: a '.' followed by a blank, or
    ending the text."""
    return any(code[i] == "." and (i + 1 == len(code) or code[i + 1].isspace()) for i in range(len(code)))


def defines(code: str, name: str, keywords: tuple[str, ...]) -> bool:
    """Whether comment-free `code` has a sentence `KEYWORD name` for one of `keywords`."""
    words = _WORD.findall(code)
    return any(words[i] in keywords and words[i + 1] == name for i in range(len(words) - 1))
