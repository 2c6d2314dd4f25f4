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
    ("Remove", "LoadPath"),
    ("Load",),
    ("Redirect",),
    ("Drop",),
    ("Quit",),
    ("Cd",),
    ("Pwd",),
    # Every command that writes, reads or locates a file (Coq 8.16's command index):
    # `Extraction` covers Separate, Recursive and Library extraction, TestCompile and
    # the Extraction options (Output Directory, File Comment).
    ("Extraction",),
    ("Print", "Universes"),
    ("Print", "Sorted", "Universes"),
    ("Locate", "File"),
    ("Locate", "Library"),
    ("Extra", "Dependency"),
    ("Print", "LoadPath"),
    ("Print", "ML"),
    ("NativeCompute",),
    ("Primitive",),
    ("Register",),
    # Tactics that put a term in the proof without type-checking it (the Coq 8.16
    # VM soundness bug coq/coq#16957 needs one), and Ltac2's binding of any OCaml
    # function of a loaded plugin as a tactic. Ltac2 writes `Ltac2 @ external`.
    ("exact_no_check",),
    ("vm_cast_no_check",),
    ("native_cast_no_check",),
    ("change_no_check",),
    ("convert_concl_no_check",),
    # Ltac2, wholly: its `@ external` binds any OCaml function of a loaded plugin as a
    # tactic, and its `Constr.Unsafe` builds a fixpoint with none of the words below
    # (the guard-checker bug coq/coq#20455 then proves False). No standard-library
    # module loads it, so a proof that does names it.
    ("Ltac2",),
)
# A sentence setting an option whose name begins with a forbidden word, taken out before
# the words are read: `Set Primitive Projections.` is a typing option, not the
# `Primitive` command (which `Primitive Projections := ...` is).
_OPTION_SENTENCE = re.compile(
    r"(?:^|(?<=\.\s))\s*(?:#\[[^\]]*\]\s*)?(?:(?:Local|Global|Export)\s+)?(?:Set|Unset)\s+Primitive\s+Projections\s*\.(?=\s|$)"
)
# Recursion a response writes itself. Coq 8.16.1's guard checker, and coqchk's with it,
# accepts some fixpoints that do not terminate, which prove False with no axiom
# (coq/coq#20455, #20413; fixed in Coq 9.0.1): refused unless the request allows it.
# Inductions go through the standard library's trusted recursors and are unaffected.
RECURSION: tuple[tuple[str, ...], ...] = (("Fixpoint",), ("CoFixpoint",), ("fix",), ("cofix",), ("Function",))
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")


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


def forbidden(text: str, also: tuple[tuple[str, ...], ...] = ()) -> str:
    """The first forbidden command in `text` (outside comments and strings), or of
    `also`, as written; '' if none."""
    sequences = FORBIDDEN + also
    first = {words[0] for words in sequences}
    words = _WORD.findall(_OPTION_SENTENCE.sub(" ", strip(text)))
    for index, word in enumerate(words):
        if word not in first:
            continue
        for sequence in sequences:
            if tuple(words[index : index + len(sequence)]) == sequence:
                return " ".join(sequence)
    return ""


def words(text: str) -> set[str]:
    """The words of `text`'s code, comments and strings out."""
    return set(_WORD.findall(strip(text)))


def sentence_ends(code: str) -> bool:
    """Whether comment-free `code` has a sentence end: a '.' followed by a blank, or
    ending the text."""
    return any(code[i] == "." and (i + 1 == len(code) or code[i + 1].isspace()) for i in range(len(code)))


def defines(code: str, name: str, keywords: tuple[str, ...]) -> bool:
    """Whether comment-free `code` has a sentence `KEYWORD name` for one of `keywords`."""
    words = _WORD.findall(code)
    return any(words[i] in keywords and words[i + 1] == name for i in range(len(words) - 1))
