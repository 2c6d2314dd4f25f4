"""String normalisation of one extracted answer.

The output is a canonical LaTeX-ish string: the first equivalence stage compares
these strings, and every later stage starts from them. Normalisation only removes
what never changes the mathematical value (spacing, delimiters sizing, wrappers,
units, trailing punctuation) and records what it removed that may matter to a later
stage (a percent sign, a degree sign).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Unicode that models emit in place of LaTeX commands.
_UNICODE = {
    "\u2212": "-",  # minus sign
    "\u2013": "-",
    "\u00d7": r"\times ",
    "\u00b7": r"\cdot ",
    "\u22c5": r"\cdot ",
    "\u221a": r"\sqrt ",
    "\u03c0": r"\pi ",
    "\u221e": r"\infty ",
    "\u2264": r"\le ",
    "\u2265": r"\ge ",
    "\u2260": r"\ne ",
    "\u222a": r"\cup ",
    "\u00b0": r"^\circ ",
    "\u00b2": "^2",  # `15 cm²`
    "\u00b3": "^3",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
}
_UNICODE_RE = re.compile("|".join(map(re.escape, _UNICODE)))

_MATH_WRAPPERS = (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]"))


def _command(names: str) -> re.Pattern[str]:
    """The LaTeX commands `names` (a regex alternation), never the start of a longer
    command (`\\le` is not `\\left`)."""
    return re.compile(rf"\\(?:{names})(?![a-zA-Z])")


# (pattern, replacement) applied in order. Spacing commands go first so later
# patterns never see them.
_REWRITES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)\b"), ""),
    # `\\` is a row break, so a spacing command never follows another backslash.
    (re.compile(r"(?<!\\)\\(?:[,;:!> ]|quad\b|qquad\b|enspace\b|thinspace\b)"), " "),
    (re.compile(r"~"), " "),
    (re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)[lr]?(?![a-zA-Z])\s*\.?"), ""),
    (_command("[dt]frac"), r"\\frac"),
    (_command("[dt]binom"), r"\\binom"),
    (_command("leqslant|leq"), r"\\le"),
    (_command("geqslant|geq"), r"\\ge"),
    (_command("neq"), r"\\ne"),
    (_command("lt"), "<"),
    (_command("gt"), ">"),
    (re.compile(r"<="), r"\\le "),
    (re.compile(r">="), r"\\ge "),
    (re.compile(r"!="), r"\\ne "),
    (_command("varnothing"), r"\\emptyset"),
    (_command("lbrace"), r"\\{"),
    (_command("rbrace"), r"\\}"),
    (_command("lbrack"), "["),
    # A vector `\langle 1, 2 \rangle` is an ordered tuple.
    (_command("langle"), "("),
    (_command("rangle"), ")"),
    (_command("rbrack"), "]"),
    (re.compile(r"\\(?:mathbf|mathit|mathsf|boldsymbol|bm)\s*\{([^{}]*)\}"), r"\1"),
    # `1{,}000` is how LaTeX typesets a thousands separator.
    (re.compile(r"\{,\}"), ","),
]

_TEXT_CMD = r"\\(?:text|textbf|textit|textrm|texttt|textsf|textnormal|mathrm|mbox|operatorname\*?)"
_WHOLE_TEXT_RE = re.compile(r"^" + _TEXT_CMD + r"\s*\{([^{}]*)\}$")
_TEXT_ANY_RE = re.compile(_TEXT_CMD + r"\s*\{([^{}]*)\}")
# Connectives in running text that separate alternatives or list items.
_TEXT_CONNECTIVE_RE = re.compile(_TEXT_CMD + r"\s*\{\s*(or|and|,)\s*\}", re.IGNORECASE)
# Connectives are matched only where whitespace starts (`(?<!\S)`), so a long run of
# spaces is scanned once, not once per starting position.
# `(11,7)or(7,11)`, `1orW(x)=-1`: data sets that strip spaces glue `or` between a
# closing bracket or digit and what opens the next alternative.
_WORD_OR_RE = re.compile(r"(?<!\S)or(?=\s)|(?<=[)\]}0-9])or(?=[(\[{A-Z0-9-])|\\(?:vee|lor)(?![a-zA-Z])")
_WORD_AND_RE = re.compile(r"(?<=\s)and(?=\s)")
# One optional brace between the caret and `\circ`, never two adjacent `\s*` that
# could split a run of spaces in every possible way.
_DEGREE = r"(?:\^\s*(?:\{\s*)?\\circ(?:\s*\})?|\\degree(?![a-zA-Z]))"
_DEGREE_RE = re.compile(_DEGREE)
# A number starts where no digit precedes it, so a long digit run is tried once.
_DEGREE_NUM_RE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*" + _DEGREE)
_DOUBLE_ESCAPE_RE = re.compile(r"\\\\(?=[a-zA-Z])")
_PERCENT_RE = re.compile(r"\\?%")
# Currency signs, whichever side of the number they are written on (`1,000.99€`).
_DOLLAR_RE = re.compile(r"\\\$|\$|\\textdollar(?![a-zA-Z])|\\euro(?![a-zA-Z])|[\u20ac\u00a3\u00a5]")
# A squared or cubed length glued to a written-out decimal (`1,000.99m^2`); never
# after an integer, where `5m^2` is as likely a product as an area.
_GLUED_AREA_RE = re.compile(r"^([+-]?(?:\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+))(?:mm|cm|dm|km|m|in|ft)\^\{?[23]\}?$")
_TRAILING_PUNCT = frozenset(" \t\n\r\f\v.,;:")
_TEXT_CMD_NAMES = ("text", "textbf", "textit", "textrm", "texttt", "textsf", "textnormal", "mathrm", "mbox")
# A unit word (`cm`, `meters`, `sq.`), optionally squared on the last one (`cm^2`).
_UNIT_WORD_RE = re.compile(r"[a-zA-Z]{2,}\.?")
# `^{2}` is the longest unit power read.
MAX_UNIT_POWER_CHARS = 8
_UNIT_POWER_RE = re.compile(r"\^\s*(?:\{\d\}|\d)")
_UNIT_TEXT_BODY_RE = re.compile(r"\s*[a-zA-Z][a-zA-Z .\-/]*")
_UNIT_BEFORE = frozenset("0123456789}")
# Words after a number that scale it: never a unit to drop (`5 million` is not 5).
_MAGNITUDES = frozenset({"hundred", "thousand", "million", "billion", "trillion", "dozen", "lakh", "crore"})
# A multiple of a constant takes units too: `12\pi inches per second`.
_CONSTANTS_BEFORE_UNITS = ("\\pi", "\\sqrt2", "\\sqrt3")
_UNIT_TEXT_BEFORE = frozenset("0123456789})]abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SPACE_RUN_RE = re.compile(r"\s+")
# A space matters only between two letters (`\pi r`); drop every other one.
_SPACE_DROP_RE = re.compile(r"(?<![a-zA-Z]) | (?![a-zA-Z])")
_TRIG_RE = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![a-zA-Z])")
_WORD_RE = re.compile(r"^[A-Za-z][A-Za-z '\-]*[A-Za-z]$")


@dataclass(frozen=True, slots=True)
class Normalized:
    """A normalised answer and what normalisation took off it."""

    text: str
    percent: bool = False
    degrees: bool = False
    # The whole answer was `\text{...}` (a name, a word): compare as words.
    is_text: bool = False

    @property
    def words(self) -> bool:
        """Plain words (`Evelyn`, `even`): compared case-insensitively, never parsed."""
        return self.is_text or (len(self.text) >= 3 and _WORD_RE.match(self.text) is not None)


def strip_math_wrappers(s: str) -> str:
    """Peel `$..$`, `$$..$$`, `\\(..\\)`, `\\[..\\]` off both ends; one slice at the end,
    so `$` repeated across a whole response costs one pass."""
    lo, hi = 0, len(s)
    while lo < hi and s[lo].isspace():
        lo += 1
    hi = _rstrip_end(s, hi)
    changed = True
    while changed and lo < hi:
        changed = False
        for left, right in _MATH_WRAPPERS:
            if hi - lo >= len(left) + len(right) and s.startswith(left, lo) and s.endswith(right, lo, hi):
                lo, hi = lo + len(left), hi - len(right)
                while lo < hi and s[lo].isspace():
                    lo += 1
                hi = _rstrip_end(s, hi)
                changed = True
                break
    return s[lo:hi]


def strip_trailing_punct(s: str) -> str:
    """Drop trailing spaces, `.,;:` and `\\.`; one right-to-left pass."""
    end = len(s)
    while end:
        if s.startswith("\\.", end - 2) and end >= 2:
            end -= 2
        elif s[end - 1] in _TRAILING_PUNCT:
            end -= 1
        else:
            break
    return s[:end]


def _has_trig(s: str) -> bool:
    return _TRIG_RE.search(s) is not None


# `12^{\mathrm{th}}`, `3^\text{rd}`, `21st`: an ordinal is its number.
_ORDINAL_RE = re.compile(
    r"(\d)(?:[ \t]*\^[ \t]*\{?[ \t]*(?:\\(?:mathrm|text|textrm)[ \t]*\{)?[ \t]*(?:st|nd|rd|th)[ \t]*\}?[ \t]*\}?"
    r"|(?:st|nd|rd|th)(?![a-zA-Z]))"
)


def _rewrite(answer: str) -> str:
    s = _UNICODE_RE.sub(lambda m: _UNICODE[m.group(0)], answer)
    if "&" not in s:
        # `\\\\le`, `\\\\frac`: LaTeX escaped twice (a JSON mishap); outside a matrix a
        # row break never comes right before a command name.
        s = _DOUBLE_ESCAPE_RE.sub(r"\\", s)
    s = strip_math_wrappers(s)
    s = _ORDINAL_RE.sub(r"\1", s)
    for pattern, repl in _REWRITES:
        s = pattern.sub(repl, s)
    s = strip_trailing_punct(s.strip())
    return strip_math_wrappers(s)


def _connectives_as_separators(s: str) -> str:
    """Word connectives become separators the structure parser splits on."""
    s = _TEXT_CONNECTIVE_RE.sub(lambda m: r" \lor " if m.group(1).lower() == "or" else ",", s)
    s = _WORD_OR_RE.sub(lambda _: r" \lor ", s)
    return _WORD_AND_RE.sub(",", s)


def _drop_degrees(s: str) -> tuple[str, bool]:
    if not _DEGREE_RE.search(s):
        return s, False
    if _has_trig(s):
        # Inside a trig function a degree is a unit that changes the value.
        s = _DEGREE_NUM_RE.sub(lambda m: f"({m.group(1)}\\pi/180)", s)
    return _DEGREE_RE.sub("", s), True


def _rstrip_end(s: str, end: int) -> int:
    """`len(s[:end].rstrip())` without copying."""
    while end > 0 and s[end - 1].isspace():
        end -= 1
    return end


def _token_start(s: str, end: int) -> int:
    """Start of the whitespace-free token that ends at `end`."""
    start = end
    while start > 0 and not s[start - 1].isspace():
        start -= 1
    return start


def _unit_words_start(s: str) -> int:
    """Where a tail of unit words (`5 square meters`, `12 cm^2`) starts, or -1.

    Read right to left one whitespace-separated token at a time, so the cost is
    linear whatever the words are (a regex of repeated words backtracks
    exponentially on a long run of them).
    """
    end = _rstrip_end(s, len(s))
    start = -1
    while end > 0:
        begin = _token_start(s, end)
        stop = end
        if start < 0:  # only the last word may be squared: `cm^2`
            power = _UNIT_POWER_RE.search(s, begin, end)
            stop = power.start() if power is not None and power.end() == end else end
        if _UNIT_WORD_RE.fullmatch(s, begin, stop) is None or s[begin:stop].casefold() in _MAGNITUDES:
            break
        start = begin
        end = _rstrip_end(s, begin)
    if start <= 0 or start == end or end == 0:
        return -1
    if s[end - 1] not in _UNIT_BEFORE and not s.endswith(_CONSTANTS_BEFORE_UNITS, 0, end):
        return -1
    return start


def _unit_text_start(s: str) -> int:
    """Where a tail of `\\text{unit}` groups (`12 \\text{ cm}^2`) starts, or -1; one
    right-to-left pass (units hold no braces, so each group ends at its `{`)."""
    end = _rstrip_end(s, len(s))
    start = -1
    while end > 0:
        power = _UNIT_POWER_RE.search(s, max(0, end - MAX_UNIT_POWER_CHARS), end)
        stop = _rstrip_end(s, power.start() if power is not None and power.end() == end else end)
        if not s.startswith("}", stop - 1):
            break
        brace = s.rfind("{", 0, stop - 1)
        if brace < 0 or _UNIT_TEXT_BODY_RE.fullmatch(s, brace + 1, stop - 1) is None:
            break
        if s[brace + 1 : stop - 1].strip().casefold() in _MAGNITUDES:
            break
        head = _rstrip_end(s, brace)
        name = next((n for n in _TEXT_CMD_NAMES if s.endswith("\\" + n, 0, head)), None)
        if name is None:
            break
        start = head - len(name) - 1
        end = _rstrip_end(s, start)
    if start <= 0 or end == 0 or s[end - 1] not in _UNIT_TEXT_BEFORE:
        return -1
    return start


def _drop_units(s: str) -> str:
    for tail_start in (_unit_text_start, _unit_words_start):
        start = tail_start(s)
        # What is left must still be an answer.
        if start > 0 and s[:start].strip():
            s = s[:start].rstrip()
    return s


def normalize(answer: str) -> Normalized:
    s = _rewrite(answer)
    whole = _WHOLE_TEXT_RE.match(s)
    if whole is not None:
        inner = _SPACE_RUN_RE.sub(" ", whole.group(1)).strip()
        inner = strip_trailing_punct(inner)
        # `\text{5 cm}` and `\text{(A)}` are not words: normalise the inside as math.
        if not any(ch.isdigit() for ch in inner) and "(" not in inner:
            return Normalized(inner, is_text=True)
        s = inner

    s = _connectives_as_separators(s)
    s, degrees = _drop_degrees(s)
    percent = _PERCENT_RE.search(s) is not None
    s = _PERCENT_RE.sub("", s)
    s = _drop_units(_GLUED_AREA_RE.sub(r"\1", _DOLLAR_RE.sub("", s).strip()))
    # Any `\text{...}` left is prose inside math (`x \text{ is } 3` is rare); unwrap it.
    s = _TEXT_ANY_RE.sub(lambda m: m.group(1), s)
    s = _SPACE_RUN_RE.sub(" ", s).strip()
    s = _SPACE_DROP_RE.sub("", s)
    s = strip_trailing_punct(s)
    return Normalized(s, percent=percent, degrees=degrees)
