"""What grading answers, defined once: the grader builds these, the service serialises
them (and `openapi.yaml` is generated from them), and `RewardClient` parses into
`GradeResult`. A leaf module: every layer and the client may import it.

    GradeResponse
    ├── results: [GradeResult]     one per item, in request order
    └── stats: GradeStats          the request's counts, and GroupStats per `group`

A result's `details` is free-form on purpose: each verifier reports what it found (the
extracted answer, the tests that failed); no schema holds across verifiers.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Details", "GradeResponse", "GradeResult", "GradeStats", "GroupStats", "Verdict"]

# What a verifier reports of one item beside its verdict (the extracted answer, the tests
# that failed): free-form, since no schema holds across verifiers.
Details = dict[str, Any]


class Verdict(enum.StrEnum):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    PARTIAL = "partial"
    NO_ANSWER = "no_answer"
    TIMEOUT = "timeout"
    ERROR = "error"


# Answers always carry every field: their schema says so, defaults or not.
_ANSWER = ConfigDict(json_schema_serialization_defaults_required=True)


class GradeResult(BaseModel):
    """One item's result, in the order of the request's items."""

    # The fields the server always fills default to empty, for results built by hand
    # (`GradeResult(reward=1.0, verdict="correct", mask=False)`).
    model_config = _ANSWER

    id: str | None = None
    reward: float
    verdict: Verdict
    mask: bool = Field(description="True when the grader itself failed: drop the item, do not learn from it.")
    scores: dict[str, float] = Field(default_factory=dict)
    reason: str = ""
    details: Details = Field(default_factory=dict, description="Free-form: what the verifier reports.")
    cached: bool = False
    elapsed_ms: float = 0.0
    group: str | None = None
    advantage: float | None = Field(None, description="Within the item's group; null when masked or not asked for.")
    agreement: float | None = Field(
        None, description="Share of the item's group that gave the same canonical answer (verifiers that report one)."
    )
    signals: list[str] = Field(
        default_factory=list,
        description="What the response tried that its verifiers guard against (names: GET /v1/verifiers). "
        "Telemetry: never a change of reward or verdict.",
    )


class GroupStats(BaseModel):
    """Statistics of the unmasked items sharing one `group` (definitions: `rlvr.service.groups`)."""

    model_config = ConfigDict(populate_by_name=True, json_schema_serialization_defaults_required=True)

    n: int = Field(description="Unmasked items in the group.")
    masked: int = Field(description="Masked items, left out of every statistic.")
    mean: float | None
    std: float | None = Field(description="Unbiased standard deviation of the rewards; 0 for one item.")
    pass_at_k: dict[str, float] = Field(
        alias="pass@k", description="Unbiased pass@k for k = 1, 2, 4, ... up to n; correct means verdict correct."
    )
    zero_std: bool = Field(description="Every reward equal: the group gives no gradient.")
    maj_at_n: bool | None = Field(
        alias="maj@n", description="Whether the most frequent canonical answer is correct; null without answers."
    )
    signals: dict[str, int] = Field(
        default_factory=dict, description="Items of the group (masked ones too) that raised each signal."
    )


class GradeStats(BaseModel):
    model_config = _ANSWER

    items: int
    unique: int = Field(description="Distinct (verifier, params, ground truth, prompt, response) units.")
    cache_hits: int
    dispatched: int
    elapsed_ms: float
    invalid: int = Field(
        0, description="Items masked without grading: their params or ground truth are invalid for their verifier."
    )
    verdicts: dict[str, int]
    signals: dict[str, int] = Field(default_factory=dict, description="Items that raised each signal.")
    groups: dict[str, GroupStats] = Field(default_factory=dict, description="Per `group` of the request.")


class GradeResponse(BaseModel):
    model_config = _ANSWER

    results: list[GradeResult]
    stats: GradeStats

    def to_json(self) -> dict[str, Any]:
        """The answer's JSON object, as the API sends it."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json_bytes(self) -> bytes:
        """The answer as the API sends it: UTF-8 JSON, in which a float that is not
        finite is null (JSON has no NaN)."""
        # The serializer's own bytes: `model_dump_json` returns text, and encoding it holds
        # a second copy of an answer that can be several times the request.
        return self.__pydantic_serializer__.to_json(self, by_alias=True)
