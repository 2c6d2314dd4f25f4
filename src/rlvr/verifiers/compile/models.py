"""Params of the `compile` verifier. Compiler flags come from an allow-list per
language: a flag is a command-line argument to a program that reads files (`-o`,
`-include`, `@file`, `-fplugin` ...), so only ones known to change diagnostics,
optimisation or the language standard are taken; any other is a 422 naming it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 30.0
DEFAULT_MEMORY_MB = 1024
MAX_FLAGS = 16
DEFAULT_WARNING_PENALTY = 0.1
# Files a compilation writes (the object file, its output) are capped at this.
OUTPUT_FILE_MB = 16

LanguageName = Literal["python", "c", "cpp", "javascript", "rust"]
ALIASES: dict[str, LanguageName] = {
    "python": "python",
    "python3": "python",
    "py": "python",
    "c": "c",
    "cpp": "cpp",
    "c++": "cpp",
    "cxx": "cpp",
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "rust": "rust",
    "rs": "rust",
}

_C_FAMILY = frozenset(
    {"-O0", "-O1", "-O2", "-O3", "-Os", "-Og", "-g", "-w", "-DNDEBUG", "-Werror"}
    | {"-Wall", "-Wextra", "-pedantic", "-Wpedantic", "-pedantic-errors", "-Wshadow", "-Wconversion"}
    | {"-Wsign-conversion", "-Wformat=2", "-Wundef", "-Wcast-align", "-Wnull-dereference", "-Wunused"}
    | {"-Wuninitialized", "-Wdouble-promotion", "-Wmissing-declarations", "-Wswitch-enum"}
)
_C_STANDARDS = ("c89", "c90", "c99", "c11", "c17", "c18", "c2x", "gnu89", "gnu99", "gnu11", "gnu17", "gnu2x")
_CPP_STANDARDS = ("98", "03", "11", "14", "17", "20", "2a", "23", "2b")
ALLOWED_FLAGS: dict[LanguageName, frozenset[str]] = {
    "c": _C_FAMILY | {f"-std={s}" for s in _C_STANDARDS},
    "cpp": _C_FAMILY
    | {f"-std={p}++{s}" for p in ("c", "gnu") for s in _CPP_STANDARDS}
    | {"-fno-exceptions", "-fno-rtti", "-Wold-style-cast", "-Wnon-virtual-dtor", "-Woverloaded-virtual"},
    "rust": frozenset({"--edition=2015", "--edition=2018", "--edition=2021", "-O"}),
    "python": frozenset(),
    "javascript": frozenset(),
}


def _language(value: Any) -> Any:
    if isinstance(value, str):
        found = ALIASES.get(value.strip().lower())
        if found is None:
            raise ValueError(f"unknown language {value!r}; known: python, c, cpp, javascript, rust")
        return found
    return value


Language = Annotated[LanguageName, BeforeValidator(_language)]


class CompileParams(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"language": "cpp", "flags": ["-std=c++17", "-Wall", "-Wextra"], "reward": "binary"},
                {"language": "c", "flags": ["-std=c11", "-Wall"], "reward": "warnings_penalty", "warning_penalty": 0.2},
                {"language": "python"},
            ]
        },
    )

    language: Language = Field(description="python (byte-compile), c, cpp, javascript (node --check) or rust.")
    flags: list[str] = Field(
        default_factory=list,
        max_length=MAX_FLAGS,
        description="Compiler flags, each from the language's allow-list (C/C++: -std=..., -O0..-O3, -Wall, "
        "-Wextra, -pedantic ...; rust: --edition=..., -O; python and javascript: none).",
    )
    warnings_as_errors: bool = Field(False, description="A compilation with any warning scores 0.")
    reward: Literal["binary", "warnings_penalty"] = Field(
        "binary", description="binary: 1 if it compiles; warnings_penalty: 1 minus warning_penalty per warning."
    )
    warning_penalty: float = Field(
        DEFAULT_WARNING_PENALTY, ge=0, le=1, description="Taken off per warning under reward=warnings_penalty."
    )
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, description="Compilation time limit, seconds.")
    memory_mb: int = Field(
        DEFAULT_MEMORY_MB, ge=256, le=4096, description="Memory (address space) limit of the compiler, MiB."
    )

    @model_validator(mode="after")
    def _allowed_flags(self) -> CompileParams:
        allowed = ALLOWED_FLAGS[self.language]
        for index, flag in enumerate(self.flags):
            if flag not in allowed:
                shown = ", ".join(sorted(allowed)) or "none"
                raise ValueError(f"flags[{index}]: {flag!r} is not allowed for {self.language} (allowed: {shown})")
        return self
