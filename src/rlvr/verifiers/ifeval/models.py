"""Params and ground truth of the `ifeval` verifier.

The ground truth is IFEval's `{"instruction_id_list": [...], "kwargs": [{...}, ...]}`,
as an object or as the JSON string datasets store it in. open-instruct's RLVR rows
(Tülu 3) are read too: there the object is wrapped in a one-element list, written as a
Python literal, names the list `instruction_id`, and may give `None` for an
instruction without kwargs; their IF-RLVR alias `letters:letter_counting2` is IFEval's
letter check. Tülu 3's original rows (`allenai/RLVR-IFeval`) name one function of
open-instruct's `if_functions.py` with its own arguments
(`{"func_name": "verify_keyword_frequency", "word": "cat", "N": 3, ...}`), graded with
that function's semantics (see `tulu`). IFBench's and IF-RLVR's other constraints are
refused by name (see `ids`). Each instruction's kwargs are checked against a model of
their own, so an unknown id, a missing or misspelt kwarg, or a wrong type is a 4xx that
names `kwargs.i.field` in its loc before anything is graded. IFEval's own checker fills a missing
kwarg with a random value; a verifier must not, so every kwarg an instruction reads is
required. `null` values are dropped first: the Hugging Face copy of IFEval lists every
kwarg name of every instruction, unused ones as `null`.
"""

from __future__ import annotations

import ast
import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from rlvr.verifiers.ifeval import tulu
from rlvr.verifiers.ifeval.ids import ALIASES, unsupported_reason
from rlvr.verifiers.ifeval.kwargs import IFEVAL_KWARGS_MODELS, MAX_INSTRUCTIONS, InstructionKwargs

# A ground truth given as text is read here, past the service's accounting of what a
# body costs: real ones are under a few kilobytes, and this keeps reading one cheap.
MAX_GROUND_TRUTH_CHARS = 64 * 1024
# More kwargs than any instruction takes: past this the keys are not each reported.
MAX_UNKNOWN_KWARGS_LISTED = 5
# IFEval's 25 instruction types, then Tülu 3's 25 functions, each with the model of its kwargs.
KWARGS_MODELS: dict[str, type[InstructionKwargs]] = {**IFEVAL_KWARGS_MODELS, **tulu.KWARGS_MODELS}


class IFEvalParams(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"reward": "all", "mode": "strict"}, {"reward": "fraction", "mode": "loose"}]},
    )

    reward: Literal["all", "fraction"] = Field(
        "all", description="`all`: 1 only if every instruction holds; `fraction`: the share that hold."
    )
    mode: Literal["strict", "loose"] = Field(
        "strict",
        description="IFEval's strict check, or its loose one: an instruction also holds if it holds once the "
        "response's first and/or last line or its `*` characters are removed.",
    )
    grade_thinking: bool = Field(
        False,
        description="Grade the whole response, thinking included. By default only the answer after a reasoning "
        "model's thinking (`<think>…</think>` and the other templates' markers) is graded, as open-instruct does; "
        "a thinking block that never closes, with nothing before it, holds no answer.",
    )


def _known_id(instruction_id: str) -> str:
    if instruction_id not in KWARGS_MODELS:
        raise ValueError(unsupported_reason(instruction_id))
    return instruction_id


InstructionId = Annotated[
    str, AfterValidator(_known_id), WithJsonSchema({"type": "string", "enum": list(KWARGS_MODELS)})
]

_EXAMPLE: dict[str, Any] = {
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
    "kwargs": [{}, {"num_words": 50, "relation": "less than"}],
}


def _parse_string(data: Any) -> Any:
    """A ground truth stored as text: JSON, else a Python literal (open-instruct)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    if not isinstance(data, str):
        return data
    if len(data) > MAX_GROUND_TRUTH_CHARS:
        raise ValueError(f"ground truth longer than {MAX_GROUND_TRUTH_CHARS} characters")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(data)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"ground truth is a string but neither JSON nor a Python literal: {exc}") from exc


def _located(index: int, exc: ValidationError) -> list[InitErrorDetails]:
    """An instruction's kwargs errors, located under `kwargs[index]`."""
    located = []
    for err in exc.errors():
        detail = InitErrorDetails(type=err["type"], loc=("kwargs", index, *err["loc"]), input=err["input"])
        if "ctx" in err:
            detail["ctx"] = err["ctx"]
        located.append(detail)
    return located


def _unknown_kwargs(index: int, instruction_id: str, unknown: list[str]) -> InitErrorDetails:
    """One error for many unknown kwargs, rather than one for each."""
    shown = ", ".join(repr(key[:40]) for key in unknown[:MAX_UNKNOWN_KWARGS_LISTED])
    message = "{count} kwargs that {instruction} does not take: {shown}, ..."
    context = {"count": len(unknown), "instruction": instruction_id, "shown": shown}
    return InitErrorDetails(
        type=PydanticCustomError("unknown_kwargs", message, context), loc=("kwargs", index), input=None
    )


def _alias(instruction_id: Any) -> Any:
    """The id an alias stands for; anything but a string is left for the field's own
    validation to refuse (a list is unhashable: looking it up would raise a TypeError)."""
    return ALIASES.get(instruction_id, instruction_id) if isinstance(instruction_id, str) else instruction_id


class IFEvalGroundTruth(BaseModel):
    """The instructions a response must follow, with their kwargs."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra={"examples": [_EXAMPLE, json.dumps(_EXAMPLE)]}
    )

    instruction_id_list: list[InstructionId] = Field(
        min_length=1,
        max_length=MAX_INSTRUCTIONS,
        description="IFEval's instruction ids (`punctuation:no_comma`), or the name of one of Tülu 3's functions "
        "(`validate_lowercase`).",
    )
    kwargs: list[dict[str, Any]] = Field(
        max_length=MAX_INSTRUCTIONS, description="One object per instruction; `null` values are ignored."
    )
    # Filled by validation: `kwargs` checked against each instruction's model.
    _checked: tuple[InstructionKwargs, ...] = PrivateAttr(())

    @model_validator(mode="before")
    @classmethod
    def _from_dataset_forms(cls, data: Any) -> Any:
        data = _parse_string(data)
        if isinstance(data, list) and len(data) == 1:  # open-instruct: `[{...}]`
            data = _parse_string(data[0])
        if not isinstance(data, dict):
            return data
        if "func_name" in data:  # Tülu 3's RLVR-IFeval: one function and its arguments
            kwargs = {k: v for k, v in data.items() if k != "func_name"}
            return {"instruction_id_list": [data["func_name"]], "kwargs": [kwargs]}
        if "instruction_id" in data and "instruction_id_list" not in data:
            data = {("instruction_id_list" if k == "instruction_id" else k): v for k, v in data.items()}
        if isinstance(data.get("instruction_id_list"), list):
            data = {**data, "instruction_id_list": [_alias(i) for i in data["instruction_id_list"]]}
        if isinstance(data.get("kwargs"), list):
            data = {**data, "kwargs": [{} if kw is None else kw for kw in data["kwargs"]]}
        return data

    @model_validator(mode="after")
    def _check_kwargs(self) -> IFEvalGroundTruth:
        if len(self.kwargs) != len(self.instruction_id_list):
            raise ValueError(
                f"kwargs has {len(self.kwargs)} entries but instruction_id_list has {len(self.instruction_id_list)}"
            )
        checked: list[InstructionKwargs] = []
        errors: list[InitErrorDetails] = []
        for index, (iid, raw) in enumerate(zip(self.instruction_id_list, self.kwargs, strict=True)):
            model = KWARGS_MODELS[iid]
            unknown = [key for key, value in raw.items() if value is not None and key not in model.model_fields]
            if len(unknown) > MAX_UNKNOWN_KWARGS_LISTED:
                errors.append(_unknown_kwargs(index, iid, unknown))
                continue
            try:
                checked.append(model.model_validate({k: v for k, v in raw.items() if v is not None}))
            except ValidationError as exc:
                errors += _located(index, exc)
        if errors:
            # Raised as a ValidationError so that each error's loc names its field: `kwargs.2.letter`.
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        self._checked = tuple(checked)
        return self

    @property
    def instructions(self) -> list[tuple[str, InstructionKwargs]]:
        """Each instruction id with its validated kwargs."""
        return list(zip(self.instruction_id_list, self._checked, strict=True))
