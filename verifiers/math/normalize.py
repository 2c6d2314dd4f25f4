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

_TEXT_CMD = r"\\(?:text|textbf|textit|textrm|texttt|textsf|mathrm|mbox|operatorname\*?)"
_WHOLE_TEXT_RE = re.compile(r"^" + _TEXT_CMD + r"\s*\{([^{}]*)\}$")
_TEXT_ANY_RE = re.compile(_TEXT_CMD + r"\s*\{([^{}]*)\}")
# Connectives in running text that separate alternatives or list items.
_TEXT_CONNECTIVE_RE = re.compile(_TEXT_CMD + r"\s*\{\s*(or|and|,)\s*\}", re.IGNORECASE)
_WORD_OR_RE = re.compile(r"(?:^|\s+)or\s+|\\(?:vee|lor)(?![a-zA-Z])")
_WORD_AND_RE = re.compile(r"\s+and\s+")
_DEGREE_RE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\degree(?![a-zA-Z])")
_DEGREE_NUM_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:\^\s*\{?\s*\\circ\s*\}?|\\degree(?![a-zA-Z]))")
_PERCENT_RE = re.compile(r"\\?%")
_DOLLAR_RE = re.compile(r"\\\$|\$|\\textdollar(?![a-zA-Z])")
_TRAILING_PUNCT_RE = re.compile(r"(?:[\s.,;:]|\\\.)+$")
# A unit written as words after a value: `12 \text{ cm}^2`, `5 meters`, `3 \mathrm{kg}`.
_UNIT_TEXT_TAIL_RE = re.compile(
    r"(?<=[0-9}a-zA-Z)\]])\s*(?:" + _TEXT_CMD + r"\s*\{\s*[a-zA-Z][a-zA-Z .\-/]*\}"
    r"(?:\s*\^\s*\{?\d\}?)?)+$"
)
_UNIT_WORD_TAIL_RE = re.compile(r"(?<=[0-9}])\s+(?:[a-zA-Z]{2,}\.?\s*)+(?:\^\s*\{?\d\}?)?$")
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
    s = s.strip()
    changed = True
    while changed and s:
        changed = False
        for left, right in _MATH_WRAPPERS:
            if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
                s = s[len(left) : len(s) - len(right)].strip()
                changed = True
                break
    return s


def _has_trig(s: str) -> bool:
    return _TRIG_RE.search(s) is not None


def _rewrite(answer: str) -> str:
    s = _UNICODE_RE.sub(lambda m: _UNICODE[m.group(0)], answer)
    s = strip_math_wrappers(s)
    for pattern, repl in _REWRITES:
        s = pattern.sub(repl, s)
    s = _TRAILING_PUNCT_RE.sub("", s.strip())
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


def _drop_units(s: str) -> str:
    for tail in (_UNIT_TEXT_TAIL_RE, _UNIT_WORD_TAIL_RE):
        stripped = tail.sub("", s)
        # What is left must still be an answer.
        if stripped != s and stripped.strip():
            s = stripped
    return s


def normalize(answer: str) -> Normalized:
    s = _rewrite(answer)
    whole = _WHOLE_TEXT_RE.match(s)
    if whole is not None:
        inner = _SPACE_RUN_RE.sub(" ", whole.group(1)).strip()
        inner = _TRAILING_PUNCT_RE.sub("", inner)
        # `\text{5 cm}` and `\text{(A)}` are not words: normalise the inside as math.
        if not any(ch.isdigit() for ch in inner) and "(" not in inner:
            return Normalized(inner, is_text=True)
        s = inner

    s = _connectives_as_separators(s)
    s, degrees = _drop_degrees(s)
    percent = _PERCENT_RE.search(s) is not None
    s = _PERCENT_RE.sub("", s)
    s = _drop_units(_DOLLAR_RE.sub("", s))
    # Any `\text{...}` left is prose inside math (`x \text{ is } 3` is rare); unwrap it.
    s = _TEXT_ANY_RE.sub(lambda m: m.group(1), s)
    s = _SPACE_RUN_RE.sub(" ", s).strip()
    s = _SPACE_DROP_RE.sub("", s)
    s = _TRAILING_PUNCT_RE.sub("", s)
    return Normalized(s, percent=percent, degrees=degrees)
