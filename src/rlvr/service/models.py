"""HTTP contract v1: request and response bodies of the API (field names are binding).
The answers of grading are `rlvr.results`' models, named here with the rest."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag
from pydantic.dataclasses import dataclass

__all__ = [
    "ErrorBody",
    "ErrorResponse",
    "GradeItem",
    "GradeRequest",
    "GradeResponse",
    "GradeResult",
    "GradeStats",
    "GroupStats",
    "InvalidItem",
    "ValidateResponse",
    "VerifierInfo",
    "VerifierList",
    "VerifierRef",
]

from rlvr.results import GradeResponse, GradeResult, GradeStats, GroupStats
from rlvr.service.groups import Advantage

# Items and their references are validated dataclasses with slots, not models: a
# request holds up to `max_items` and `max_verifier_refs` of them, and a model costs
# several times the memory (its dict and its set of fields given).
_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


@dataclass(slots=True, config=_STRICT)
class VerifierRef:
    """One entry of a composite verifier list: reward = Σ weight·score."""

    name: Annotated[str, Field(min_length=1, max_length=200, description="Registered verifier name.")]
    weight: Annotated[float, Field(ge=-1e6, le=1e6, description="Weight of this verifier's score.")] = 1.0
    params: Annotated[dict[str, Any], Field(description="This verifier's parameters.")] = field(default_factory=dict)


def _verifier_shape(value: Any) -> str:
    return "verifier-list" if isinstance(value, list) else "verifier-name"


# A discriminated union, so that a bad list is reported as a bad list, not also as "not a string".
VerifierField = Annotated[
    Annotated[str, Tag("verifier-name")] | Annotated[list[VerifierRef], Tag("verifier-list")],
    Discriminator(_verifier_shape),
]
UNION_TAGS = frozenset({"verifier-name", "verifier-list"})


@dataclass(slots=True, config=_STRICT)
class GradeItem:
    response: Annotated[str, Field(description="The text to grade.")]
    verifier: Annotated[
        VerifierField,
        Field(
            description="A verifier name, or a weighted list of verifiers.",
            examples=["format", [{"name": "math", "weight": 1.0}, {"name": "format", "weight": 0.1}]],
        ),
    ]
    id: Annotated[str | None, Field(max_length=1000, description="Echoed back in the result.")] = None
    prompt: Annotated[str, Field(description="The prompt the response answers.")] = ""
    ground_truth: Annotated[Any, Field(description="Whatever the verifier's ground-truth schema accepts.")] = None
    params: Annotated[dict[str, Any], Field(description="Verifier parameters when `verifier` is a name.")] = field(
        default_factory=dict
    )
    group: Annotated[str | None, Field(max_length=1000, description="Id of the prompt group (GRPO).")] = None
    metadata: Annotated[dict[str, Any] | None, Field(description="Opaque; ignored by grading.")] = None


class GradeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    items: list[GradeItem] = Field(description="Items to grade; results come back in this order.")
    deadline_s: float | None = Field(
        None,
        gt=0,
        description="Per-item deadline for this request, from the server's min_deadline_s (0.05 s) "
        "to its max_deadline_s.",
    )
    advantage: Advantage | None = Field(
        None,
        description="Compute each item's advantage within its `group` (every item then needs a group): "
        "grpo (r - mean) / (std + 1e-4), dr_grpo r - mean, rloo r - mean of the others.",
    )
    strict: bool = Field(
        False,
        description="Refuse the whole request (422) when any item's params or ground truth are invalid. "
        "By default such an item comes back `verdict: error`, `mask: true`, naming the fields, and the "
        "rest are graded.",
    )


class InvalidItem(BaseModel):
    """An item `/v1/grade` would answer masked without grading it."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    index: int = Field(description="The item's place in the request's `items`.")
    id: str | None = None
    verifier: str = Field(description="The verifier whose models refused the item.")
    errors: list[str] = Field(description="Each invalid field, named within the item (`ground_truth.kwargs[2]...`).")


class ValidateResponse(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    valid: bool = Field(description="Every item would be graded.")
    items: int
    invalid: list[InvalidItem]


class ErrorBody(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorResponse(BaseModel):
    error: ErrorBody


class SignalInfo(BaseModel):
    name: str
    description: str = Field(description="What the response tried, in one line.")
    example: str = Field(description="A response (or program) that raises it.")


class VerifierInfo(BaseModel):
    name: str
    version: str | None = None
    description: str | None = None
    params_schema: dict[str, Any] | None = None
    ground_truth_schema: dict[str, Any] | None = None
    default_deadline_s: float | None = None
    available: bool
    availability: dict[str, Any] = Field(default_factory=dict)
    signals: list[SignalInfo] = Field(
        default_factory=list, description="The signals its results may carry (`signals`): telemetry, never reward."
    )
    error: str | None = Field(None, description="Why the plugin failed to load, if it did.")
    source: str


class VerifierList(BaseModel):
    verifiers: list[VerifierInfo]
