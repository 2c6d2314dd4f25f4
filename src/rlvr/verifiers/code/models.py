"""Params and the four ground-truth formats of the `code` verifier, validated strictly:
the ground truth is trusted in meaning but arrives over HTTP, so sizes are capped."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from rlvr.verifiers.code.helpers import prompt_module
from rlvr.verifiers.code.languages import ALIASES

MAX_TESTS = 500
MAX_TEST_CHARS = 64 * 1024
MAX_CODE_CHARS = 1024 * 1024
MAX_GROUND_TRUTH_BYTES = 16 * 1024 * 1024


def _language(value: Any) -> Any:
    if isinstance(value, str):
        found = ALIASES.get(value.strip().lower())
        if found is None:
            raise ValueError(f"unknown language {value!r}; known: python, cpp, javascript")
        return found
    return value


LanguageName = Literal["python", "cpp", "javascript"]
Language = Annotated[LanguageName, BeforeValidator(_language)]
Identifier = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")]
TestText = Annotated[str, Field(max_length=MAX_TEST_CHARS)]


class CodeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reward: Literal["all", "fraction"] = Field(
        "all", description="1 only if every test passes, or the fraction passed."
    )
    timeout_s: float = Field(5.0, gt=0, le=20, description="Per-test time limit, seconds.")
    memory_mb: int = Field(512, ge=64, le=4096, description="Per-process memory (address space) limit, MiB.")
    stop_on_failure: bool = Field(False, description="Stop at the first failing test.")
    signals: bool = Field(
        True,
        description="Report hacking signals. Off, none are read, and the program runs without the audit hook"
        " that notes what it does (a few percent of grading's CPU).",
    )


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _size(cls, data: Any) -> Any:
        # Measured on what was given, as compact JSON bytes: a dump of the model and its
        # text would be two more copies of a ground truth that may be megabytes.
        if isinstance(data, dict) and len(msgspec.json.encode(data, enc_hook=repr)) > MAX_GROUND_TRUTH_BYTES:
            raise ValueError(f"ground truth larger than {MAX_GROUND_TRUTH_BYTES} bytes")
        return data


def _require_same_length(inputs: list[Any], outputs: list[Any]) -> None:
    if len(inputs) != len(outputs):
        raise ValueError("inputs and outputs differ in length")


def _require_python(language: str, style: str) -> None:
    if language != "python":
        raise ValueError(f"{style} tests are supported for python only")


class AssertTests(_Strict):
    """MBPP / KodCode style: Python statements, each one test."""

    language: Language = "python"
    tests: list[TestText] = Field(min_length=1, max_length=MAX_TESTS)
    setup: str | None = Field(None, max_length=MAX_CODE_CHARS, description="Run before the tests (e.g. imports).")

    @model_validator(mode="after")
    def _python_only(self) -> AssertTests:
        # In C++ or JS the asserts would run inside the program's own process, where
        # it could forge their outcome; use stdin/stdout (or call-based JS) tests.
        _require_python(self.language, "assert-style")
        return self


class HumanEvalTests(_Strict):
    """HumanEval style: a `check(candidate)` function and the entry point's name."""

    test: str = Field(max_length=MAX_CODE_CHARS)
    entry_point: Identifier
    language: Language = "python"
    prompt: str | None = Field(
        None,
        max_length=MAX_CODE_CHARS,
        description="The task's prompt (HumanEval's `prompt` column, or text with it in a fenced block). "
        "The functions it defines whole, other than the entry point, are what the check calls: "
        "they come from here, never from the program, which could redefine them. Where it is absent, "
        "the item's prompt stands in if it holds Python defining the entry point.",
    )

    @model_validator(mode="after")
    def _python_only(self) -> HumanEvalTests:
        _require_python(self.language, "HumanEval-style")
        return self

    @field_validator("prompt")
    @classmethod
    def _has_python(cls, prompt: str | None) -> str | None:
        if prompt is not None:
            prompt_module(prompt)
        return prompt


class CallTests(_Strict):
    """APPS / TACO / LiveCodeBench call-based: `fn_name(*inputs[i]) == outputs[i]`."""

    fn_name: Identifier
    inputs: list[list[Any]] = Field(min_length=1, max_length=MAX_TESTS)
    outputs: list[Any] = Field(min_length=1, max_length=MAX_TESTS)
    language: Language = "python"
    outputs_wrapped: bool = Field(
        False,
        description="Each output is the expected value wrapped in a list of one, as APPS and TACO store "
        "call-based outputs: the value inside passes, and so does the list, as their harness accepts either. "
        "Not inferred: elsewhere a list of one is an answer, and its element a wrong one.",
    )

    @model_validator(mode="after")
    def _shape(self) -> CallTests:
        _require_same_length(self.inputs, self.outputs)
        if self.outputs_wrapped and not all(type(o) is list and len(o) == 1 for o in self.outputs):
            raise ValueError("outputs_wrapped: every output must then be a list of one value")
        if self.language == "cpp":
            raise ValueError("call-based tests are supported for python and javascript")
        return self


class StdioTests(_Strict):
    """stdin/stdout: feed `inputs[i]`, expect `outputs[i]`."""

    inputs: list[Annotated[str, Field(max_length=MAX_GROUND_TRUTH_BYTES)]] = Field(min_length=1, max_length=MAX_TESTS)
    outputs: list[Annotated[str, Field(max_length=MAX_GROUND_TRUTH_BYTES)]] = Field(min_length=1, max_length=MAX_TESTS)
    language: Language = "python"

    @model_validator(mode="after")
    def _shape(self) -> StdioTests:
        _require_same_length(self.inputs, self.outputs)
        return self


_FORMS: tuple[tuple[str, type[_Strict]], ...] = (
    ("fn_name", CallTests),
    ("entry_point", HumanEvalTests),
    ("test", HumanEvalTests),
    ("tests", AssertTests),
    ("inputs", StdioTests),
    ("outputs", StdioTests),
)


def _form(value: Any) -> str | None:
    """Which format a ground truth is in, by the key only that format has: it is then
    checked against that one, so its errors are that format's alone (not four formats'
    for each key it has)."""
    if isinstance(value, _Strict):
        return f"({type(value).__name__})"
    if isinstance(value, dict):
        for key, form in _FORMS:
            if key in value:
                return f"({form.__name__})"
    return None


GroundTruth = Annotated[
    Annotated[AssertTests, Tag("(AssertTests)")]
    | Annotated[HumanEvalTests, Tag("(HumanEvalTests)")]
    | Annotated[CallTests, Tag("(CallTests)")]
    | Annotated[StdioTests, Tag("(StdioTests)")],
    Discriminator(
        _form,
        custom_error_type="code_ground_truth_form",
        custom_error_message="a code ground truth has `tests` (asserts), `test` and `entry_point` (HumanEval), "
        "`fn_name`, `inputs` and `outputs` (call-based), or `inputs` and `outputs` (stdin/stdout)",
    ),
]
