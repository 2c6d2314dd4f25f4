r"""Text that must not count, and delimiters that must not reach the parser.

- Hidden text: HTML comments, `\phantom{...}` (and `\hphantom`, `\vphantom`), and
  text coloured white (`\color{white}`, `\textcolor{white}{...}`). A reader never
  sees it, so a grader must not read an answer from it; a policy that learns to
  hide a second answer there gains nothing.
- Stray delimiters: policies mid-training end answers with `15 \\`, `\(2401` or
  `15 \]`. Math-mode delimiters never change a value, so an answer loses every
  unescaped `$`, `\(`, `\)`, `\[`, `\]`, trailing row breaks and escapes, and
  braces left without a partner.

Every scan is a single left-to-right pass (hidden spans never overlap), so the
cost is linear in the text.
"""

from __future__ import annotations

import re

_HIDDEN_RE = re.compile(
    r"<!--|\\(?:[hv]?phantom(?![a-zA-Z])|textcolor\s*\{\s*white\s*\})\s*(?=\{)|\\color\s*\{\s*white\s*\}"
)
_COMMENT_CLOSE = "-->"
_MATH_DELIM_RE = re.compile(r"(?<!\\)(?:\\[()\[\]]|\$)")
_TRAILING_JUNK = " \t\n\r\\"
_MARKDOWN_EMPHASIS = "*_"


def group_end(text: str, open_at: int) -> int:
    """Index just past the `}` matching the `{` at `open_at`, or len(text) if unclosed."""
    depth = 0
    i = open_at
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _enclosing_group_end(text: str, start: int) -> int:
    """Index of the `}` closing the group `start` lies in (a `\\color` switch lasts
    until then), or len(text) at top level."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return len(text)


def _hidden_end(text: str, m: re.Match[str]) -> int:
    token = m.group(0)
    if token == "<!--":
        close = text.find(_COMMENT_CLOSE, m.end())
        return len(text) if close < 0 else close + len(_COMMENT_CLOSE)
    if token.startswith("\\color"):
        after = m.end()
        while after < len(text) and text[after].isspace():
            after += 1
        if text.startswith("{", after):
            return group_end(text, after)
        return _enclosing_group_end(text, after)
    return group_end(text, m.end())


def remove_hidden(text: str) -> str:
    """`text` with every hidden span replaced by a space."""
    if "<!--" not in text and "phantom" not in text and "white" not in text:
        return text
    out: list[str] = []
    pos = 0
    for m in _HIDDEN_RE.finditer(text):
        if m.start() < pos:
            continue  # inside a span already hidden
        out.append(text[pos : m.start()])
        out.append(" ")
        pos = _hidden_end(text, m)
    out.append(text[pos:])
    return "".join(out)


def _unmatched_braces(s: str) -> set[int]:
    """Positions of unescaped braces that have no partner."""
    opens: list[int] = []
    lone: set[int] = set()
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            opens.append(i)
        elif ch == "}":
            if opens:
                opens.pop()
            else:
                lone.add(i)
        i += 1
    return lone | set(opens)


def strip_stray_delimiters(answer: str) -> str:
    """`answer` without math-mode delimiters, trailing escapes or lone braces."""
    s = _MATH_DELIM_RE.sub(" ", answer)
    # A trailing `\\` (row break) or lone `\` escapes nothing.
    s = s.rstrip(_TRAILING_JUNK).strip()
    lone = _unmatched_braces(s)
    if lone:
        s = "".join(ch for i, ch in enumerate(s) if i not in lone).strip()
    # `**15**` is markdown emphasis around the answer.
    lo, hi = 0, len(s)
    while hi - lo >= 2 and s[lo] == s[hi - 1] and s[lo] in _MARKDOWN_EMPHASIS:
        lo, hi = lo + 1, hi - 1
    return s[lo:hi].strip()
