"""Params and ground truth of the `proof` verifier, checked before any grading: a
ground truth that could never be proved (no statement, a statement naming another
constant, a second sentence smuggled into it, a preamble with axioms) is the request's
error, a 422 naming the field."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlvr.verifiers.proof import vernacular

MAX_STATEMENT_CHARS = 64 * 1024
MAX_PREAMBLE_CHARS = 256 * 1024
MAX_IMPORTS = 32
DEFAULT_TIMEOUT_S = 20.0
MAX_TIMEOUT_S = 30.0
DEFAULT_MEMORY_MB = 2048

# Coq's identifiers (ASCII), and dotted library paths of them.
IDENT = r"[A-Za-z_][A-Za-z0-9_']{0,99}"
LIBRARY = rf"{IDENT}(\.{IDENT}){{0,9}}"
Library = Annotated[str, Field(pattern=rf"^{LIBRARY}$")]
# Libraries a ground truth may not load for the response (see `vernacular.FORBIDDEN`).
REFUSED_LIBRARIES = frozenset({"Ltac2"})
THEOREM_KEYWORDS = ("Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Property", "Example")
# Coq's keywords, and the names the check files use themselves (see `coq`).
RESERVED = frozenset(
    "_ as at by cofix else end exists exists2 fix for forall fun if in let match return then using where with"
    " Prop SProp Set Type rlvr_goal rlvr_check".split()
)
_HEAD = re.compile(rf"({'|'.join(THEOREM_KEYWORDS)})\s+({IDENT})(?![A-Za-z0-9_'])")


class ProofParams(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"language": "coq", "timeout_s": 20.0}]})

    language: Literal["coq"] = Field("coq", description="The proof language; `coq` (8.16) for now.")
    timeout_s: float = Field(
        DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, description="Time limit for checking the response's script, seconds."
    )
    memory_mb: int = Field(
        DEFAULT_MEMORY_MB, ge=512, le=4096, description="Memory (address space) limit of the checker, MiB."
    )
    allow_recursion: bool = Field(
        False,
        description="Let the response define its own recursion (Fixpoint, CoFixpoint, fix, cofix, Function). "
        "Off by default: Coq 8.16.1's guard checker, and coqchk's, accept some non-terminating fixpoints "
        "that prove False (coq/coq#20455).",
    )


class ProofGroundTruth(BaseModel):
    """A theorem to prove: its statement as a Coq sentence, the name it declares, the
    standard-library modules it needs and trusted definitions it may refer to."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "statement": "Theorem add_comm : forall n m : nat, n + m = m + n.",
                    "name": "add_comm",
                    "imports": ["Arith"],
                    "preamble": "",
                },
                {
                    "statement": "Lemma double_even : forall n, even (double n) = true.",
                    "name": "double_even",
                    "imports": ["Bool"],
                    "preamble": "Fixpoint double (n : nat) : nat := match n with O => O | S k => S (S (double k)) end.",
                },
            ]
        },
    )

    statement: str = Field(
        min_length=1,
        max_length=MAX_STATEMENT_CHARS,
        description="One sentence `Theorem NAME binders : type.` (or Lemma, Fact, Remark, Corollary, "
        "Proposition, Property, Example).",
    )
    name: str = Field(pattern=rf"^{IDENT}$", description="The name the statement declares.")
    imports: list[Library] = Field(
        default_factory=list,
        max_length=MAX_IMPORTS,
        description="Standard-library modules, e.g. `Arith`, `Lists.List`.",
    )
    preamble: str = Field(
        "",
        max_length=MAX_PREAMBLE_CHARS,
        description="Trusted definitions the statement uses; the response sees them too. No axioms.",
    )

    @model_validator(mode="after")
    def _well_formed(self) -> ProofGroundTruth:
        if self.name in RESERVED:
            raise ValueError(f"name: {self.name!r} is reserved")
        refused = [m for m in self.imports if REFUSED_LIBRARIES & set(m.split("."))]
        if refused:
            raise ValueError(f"imports: {refused[0]!r} would load Ltac2 for the response, which it may not use")
        problem = statement_problem(self.statement, self.name)
        if problem:
            raise ValueError(f"statement: {problem}")
        found = vernacular.forbidden(self.preamble)
        if found:
            raise ValueError(f"preamble: uses {found!r}, which a trusted preamble may not")
        if vernacular.unclosed(self.preamble):
            raise ValueError("preamble: unterminated comment or string")
        return self


def statement_problem(statement: str, name: str) -> str:
    """Why `statement` is not one well-formed theorem sentence declaring `name`; ''."""
    if vernacular.unclosed(statement):
        return "unterminated comment or string"
    code = vernacular.strip(statement).strip()
    head = _HEAD.match(code)
    if head is None:
        return f"must start with one of {', '.join(THEOREM_KEYWORDS)} and a name"
    if head.group(2) != name:
        return f"declares {head.group(2)!r}, not the ground truth's name {name!r}"
    if not code.endswith("."):
        return "must end with '.'"
    if vernacular.sentence_ends(code[:-1]):
        return "must be a single sentence (a '.' followed by a space ends a sentence)"
    if ":" not in code[head.end() :]:
        return "has no ':' before its type"
    depth = 0
    for char in code:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            break
    if depth != 0:
        return "has unbalanced parentheses"
    return ""
