"""Which part of a response is the program: the code block a human reader sees.

Fences as CommonMark has them, read the way a reader of the raw text reads them:

- a fence is a run of 3 or more backticks or tildes; an opening one may be indented
  (inside a list item, or after the item's marker on the same line: `1. ```python`)
  and carries an info string, whose first word is the language (`python3`, `Py`,
  `{.python}`, `c++`, `node` ...); a backtick fence's info string has no backtick
  (else the line is inline code);
- the block ends at a line holding only a run of the same character at least as long,
  indented at most 3 columns more than the opening fence, or at the end of the text
  (a response cut off mid-block still has its code);
- the block's lines lose the opening fence's indentation, or as much of it as all of
  them have (so code in a list item keeps its own indentation);
- CRLF, CR and LF all end lines.

One pass over the lines, each looked at once, with string methods only: linear time
on any text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlvr.verifiers.code.languages import ALIASES

TAB = 4
THINK_CLOSE = "</think>"
FENCE_CHARS = "`~"
MIN_FENCE = 3


@dataclass(frozen=True, slots=True)
class Fence:
    char: str
    length: int
    indent: int  # the column the fence starts at
    tag: str = ""


def extract_code(response: str, language: str, defines: Sequence[str] = ()) -> str:
    """The last fenced block tagged with `language` (or an alias); else the last
    untagged block; else the whole response (with LF line ends). Where the tests name
    what the program must define (`defines`), the last such block that defines one of
    them at its top level wins over later ones that do not: a solution followed by an
    example of its use is the solution, as a reader sees it.

    A response with a `</think>` is read as the math verifier reads it: the answer
    after the last one first, so a draft in the thinking never stands in for the
    answer's own code; the thinking only where the answer has no block at all (and
    then, with no block anywhere, the answer's text is the program)."""
    text = _lf(response)
    close = text.rfind(THINK_CLOSE)
    answer = text if close < 0 else text[close + len(THINK_CLOSE) :]
    for read in (answer,) if close < 0 else (answer, text):
        program = _program(read, language, defines)
        if program is not None:
            return program
    return answer


def _program(text: str, language: str, defines: Sequence[str]) -> str | None:
    """The block of `text` that is the program (see `extract_code`), or None."""
    tagged: list[str] = []
    untagged: list[str] = []
    unknown: list[str] = []
    for tag, body in fenced_blocks(text):
        if not body.strip():
            continue  # an empty block is no one's program (a stray fence opens one)
        if not tag:
            untagged.append(body)
        elif ALIASES.get(tag) == language:
            tagged.append(body)
        elif tag not in ALIASES:
            unknown.append(body)
    # Blocks tagged with a name we do not know (`c`, `h`, `text`) come last: they
    # hold the program more often than the whole text around them does.
    blocks = tagged or untagged or unknown
    if not blocks:
        return None
    for block in reversed(blocks):
        if defines_any(block, language, defines):
            return block
    return blocks[-1]


def defines_any(code: str, language: str, names: Sequence[str]) -> bool:
    """Whether a top-level line of `code` defines one of `names` in `language`."""
    prefixes = _definition_prefixes(language, names)
    return bool(prefixes) and any(line.startswith(prefixes) for line in code.split("\n"))


def _definition_prefixes(language: str, names: Sequence[str]) -> tuple[str, ...]:
    """How a top-level line of `language` starts that defines one of `names`."""
    forms: tuple[str, ...] = ()
    if language == "python":
        forms = ("def {}(", "async def {}(", "class {}(", "class {}:", "{} =", "{}=", "{}:")
    elif language == "cpp":
        forms = ("int {}(", "int {} (", "signed {}(", "int32_t {}(", "auto {}(")
    elif language == "javascript":
        forms = ("function {}(", "function {} (", "async function {}(", "const {}", "let {}", "var {}")
        forms += tuple(f"export {form}" for form in forms)
    return tuple(form.format(name) for name in names for form in forms)


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """Every fenced block of `text`, in order, as (language tag, code)."""
    lines = _lf(text).split("\n")
    blocks: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        fence = opening_fence(lines[index]) or _opening_after_text(lines, index)
        index += 1
        if fence is None:
            continue
        if not fence.tag and index < len(lines) and _opens_tagged(lines[index]):
            continue  # a stray fence just before a block's own (```, then ```python)
        start, tag = index, fence.tag
        first = lines[index].strip().lower() if index < len(lines) else ""
        if not tag and first in ALIASES:
            # The language's name alone on the first line of an untagged block (as a chat
            # UI's code header is copied): no program starts with a bare name.
            start, tag = index + 1, first
            index += 1
        while index < len(lines) and not _closes(lines[index], fence):
            index += 1
        code = "\n".join(_dedent(lines[start:index], fence.indent))
        # A closed block's last line ended; an open one ends where the text does.
        blocks.append((tag, code + "\n" if index < len(lines) else code))
        index += 1  # past the closing fence
    return blocks


def _indent(line: str) -> tuple[int, int]:
    """The leading whitespace of `line`: its width in columns (tabs to the next stop
    of 4) and its length in characters."""
    column = 0
    for n, char in enumerate(line):
        if char == " ":
            column += 1
        elif char == "\t":
            column += TAB - column % TAB
        else:
            return column, n
    return column, len(line)


def _fence_run(text: str) -> tuple[str, int]:
    """The fence character that `text` starts with and how many of it, or ("", 0)."""
    char = text[:1]
    if not char or char not in FENCE_CHARS:
        return "", 0
    length = len(text) - len(text.lstrip(char))
    return (char, length) if length >= MIN_FENCE else ("", 0)


def _list_marker(text: str) -> int:
    """The width of a list item's marker and the blank after it (`- `, `12. `, `3) `)
    at the start of `text`, or 0."""
    digits = len(text) - len(text.lstrip("0123456789"))
    if 0 < digits <= 9 and text[digits : digits + 1] in (".", ")"):
        marker = digits + 1
    elif text[:1] in ("-", "*", "+"):
        marker = 1
    else:
        return 0
    blank = len(text) - marker - len(text[marker:].lstrip(" \t"))
    return marker + blank if blank else 0


def opening_fence(line: str) -> Fence | None:
    column, start = _indent(line)
    rest = line[start:]
    marker = _list_marker(rest)
    if marker:  # a fence as the first thing in a list item: `1. ```python`
        column = len(line[: start + marker].expandtabs(TAB))
        rest = rest[marker:]
    char, length = _fence_run(rest)
    if not char:
        return None
    info = rest[length:].strip()
    if char == "`" and "`" in info:
        return None
    words = info.split(maxsplit=1)
    return Fence(char, length, column, _language(words[0]) if words else "")


def _opens_tagged(line: str) -> bool:
    fence = opening_fence(line)
    return fence is not None and fence.tag in ALIASES


def _opening_after_text(lines: list[str], index: int) -> Fence | None:
    """A backtick fence after text on line `index` (`Here is the code: ```python`), which
    CommonMark does not open but a reader of the raw text sees open a block; only with
    a language we know after it, which tells it from inline code, and not where the
    next line that is not blank opens a fence itself (`... in ```python`, then the block:
    prose that names the fence). The line is looked at first: only such a line looks on
    past the blank lines after it, so each blank line is passed over once."""
    line = lines[index].rstrip()
    end = line.rfind("`")
    tag = _language(line[end + 1 :])
    if end < 0 or tag not in ALIASES or tag != line[end + 1 :].lower():
        return None
    start = len(line[: end + 1].rstrip("`"))
    if end + 1 - start < MIN_FENCE or not line[:start].strip():
        return None
    following = index + 1
    while following < len(lines) and not lines[following].strip():
        following += 1
    if following < len(lines) and opening_fence(lines[following]) is not None:
        return None
    return Fence("`", end + 1 - start, 0, tag)


def _language(word: str) -> str:
    """The language an info string's first word names: `{.python}`, `python3.11`,
    `python:solution.py`, `python,linenos` and `Python3` all say python 3. The name
    ends at the first character no language name has (`c++`, `c#`, `python-repl` keep
    theirs; a version, a file name or options after it go)."""
    name = word.lstrip("{.").lower()
    for index, ch in enumerate(name):
        if not (ch.isalnum() or ch in "+#-_"):
            return name[:index]
    return name


def _closes(line: str, fence: Fence) -> bool:
    column, start = _indent(line)
    if column > fence.indent + 3:
        return False
    char, length = _fence_run(line[start:])
    return char == fence.char and length >= fence.length and not line[start + length :].strip()


def _dedent(lines: list[str], indent: int) -> list[str]:
    """The block's lines without the fence's indentation, or as much of it as every
    non-blank line has."""
    widths = [_indent(line)[0] for line in lines if line.strip()]
    cut = min([indent, *widths])
    return [_cut(line, cut) for line in lines] if cut else lines


def _cut(line: str, columns: int) -> str:
    _, start = _indent(line)
    lead = line[:start]
    if "\t" in lead:
        lead = lead.expandtabs(TAB)
    return lead[columns:] + line[start:]
