"""Endpoints in the wire formats trainers already speak, so that their code needs no
glue: OpenRLHF's remote reward model (`POST /get_reward`) and slime's `--rm-url`
(`POST /v1/reward`). Both grade through the same path as `/v1/grade`.

Neither payload names a verifier: it comes from the URL the user configures
(`/get_reward?verifier=math`), else from the `default_verifier` setting. A label is the
ground truth; a string label holding a JSON object (code tests, as datasets store them)
is that object.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from rlvr.service.asgi import StrictJSONResponse
from rlvr.service.bodies import BodyParser, check_lists
from rlvr.service.errors import BadRequest
from rlvr.service.models import ErrorResponse, GradeItem, GradeRequest, GradeResponse

# Runs a grade request built from the request's body (see `service.app`).
GradeFn = Callable[[Request, Callable[[bytes], GradeRequest]], Awaitable[GradeResponse]]

# OpenRLHF decodes prompt and response with the tokenizer's special tokens: these end or
# pad a turn and are never part of an answer.
SPECIAL_TOKENS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|end|>",
    "<end_of_turn>",
    "<eos>",
    "</s>",
    "<pad>",
    "<|pad|>",
)
MASKED_LOG = "rlvr_masked"
SIGNAL_LOG = "rlvr_signal_"
TRAINER_ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"model": ErrorResponse, "description": "Invalid request; the message names the field"},
    429: {"model": ErrorResponse, "description": "Too much work in flight; retry after Retry-After seconds"},
    503: {"model": ErrorResponse, "description": "A backend is unavailable or the server is draining; retry"},
}
_ITEM_FIELD = re.compile(r"items\[(\d+)\]\.(ground_truth|response|prompt|verifier|params)")


class OpenRLHFRequest(BaseModel):
    """What OpenRLHF's `SingleTurnAgentExecutor` posts (fields it may add are ignored)."""

    model_config = ConfigDict(extra="ignore")

    query: list[str] = Field(min_length=1, description="Prompt plus response, decoded with special tokens.")
    prompts: list[str] | None = Field(None, description="The prompts, stripped from the front of each query.")
    labels: list[Any] | None = Field(None, description="Ground truths; a JSON object (or its text) for code tests.")


class OpenRLHFResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]] = Field(
        description=f"`{MASKED_LOG}`: 1.0 where the grader failed; `{SIGNAL_LOG}<name>` for each signal the "
        "verifier may report: 1.0 where the item raised it (OpenRLHF logs each key's mean: the signal's rate)."
    )


class SlimeRequest(BaseModel):
    """What slime's remote reward model posts for one sample."""

    model_config = ConfigDict(extra="ignore")

    prompt: str = ""
    response: str
    label: Any = None


class SlimeResponse(BaseModel):
    score: float = Field(description="The reward (slime: --reward-key score); 0.0 when masked.")
    verdict: str
    mask: bool = Field(description="The grader failed: the score is not the sample's.")
    reason: str


TRAINER_REQUEST_MODELS: tuple[type[BaseModel], ...] = (OpenRLHFRequest, SlimeRequest)


def response_text(query: str, prompt: str | None) -> str:
    """The response inside an OpenRLHF query: what follows the prompt (the whole query
    when the prompt is not found in it), without special tokens. Those that end it are
    cut with the prompt, in one copy of a query that may be tens of megabytes."""
    start, end = 0, len(query)
    if prompt:
        at = query.find(prompt)
        if at >= 0:
            start = at + len(prompt)
    while trailing := next((t for t in SPECIAL_TOKENS if query.endswith(t, start, end)), None):
        end -= len(trailing)
    return strip_special_tokens(query[start:end] if (start, end) != (0, len(query)) else query)


def strip_special_tokens(text: str) -> str:
    for token in SPECIAL_TOKENS:
        if token in text:
            text = text.replace(token, "")
    return text


def ground_truth(label: Any, decode: Callable[[str], Any]) -> Any:
    """A label as ground truth: a string holding a JSON object is that object (read by
    `decode`, which may refuse it as too costly: see `BodyParser.embedded_json`)."""
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            decoded = decode(label)
        except BadRequest:
            return label
        if isinstance(decoded, dict):
            return decoded
    return label


def add_trainer_routes(
    app: FastAPI,
    grade: GradeFn,
    default_verifier: str | None,
    bodies: BodyParser,
    signal_names: Callable[[str], list[str]],
) -> None:
    """`signal_names(verifier)`: the signals the verifier may report, one `extra_logs`
    key each in OpenRLHF's answer."""

    def verifier_for(given: str | None) -> str:
        name = given or default_verifier
        if not name:
            raise BadRequest(
                "verifier: none given; add ?verifier=NAME to the URL, or set the server's default_verifier"
            )
        return name

    @app.post(
        "/get_reward",
        response_model=OpenRLHFResponse,
        responses=TRAINER_ERRORS,
        summary="OpenRLHF remote reward (--reward.remote_url)",
        description="Lists as long as `query`; a masked item scores 0.0 with `extra_logs.rlvr_masked` 1.0.",
        openapi_extra=_body_schema("OpenRLHFRequest"),
    )
    async def get_reward(request: Request, verifier: str | None = Query(None, max_length=200)) -> Response:
        name = verifier_for(verifier)
        renames = {"ground_truth": "labels[{}]", "response": "query[{}]", "prompt": "prompts[{}]"}
        build = lambda body: _openrlhf_request(body, name, bodies)  # noqa: E731
        result = await _renamed(grade(request, build), renames)
        rewards = [0.0 if r.mask else r.reward for r in result.results]
        logs = {MASKED_LOG: [1.0 if r.mask else 0.0 for r in result.results]}
        for signal in signal_names(name):
            logs[f"{SIGNAL_LOG}{signal}"] = [float(signal in r.signals) for r in result.results]
        return StrictJSONResponse({"rewards": rewards, "scores": rewards, "extra_logs": logs})

    @app.post(
        "/v1/reward",
        response_model=SlimeResponse,
        responses=TRAINER_ERRORS,
        summary="slime remote reward (--rm-url), one sample",
        openapi_extra=_body_schema("SlimeRequest"),
    )
    async def reward(request: Request, verifier: str | None = Query(None, max_length=200)) -> Response:
        name = verifier_for(verifier)
        renames = {"ground_truth": "label", "response": "response", "prompt": "prompt"}
        build = lambda body: _slime_request(body, name, bodies)  # noqa: E731
        result = await _renamed(grade(request, build), renames)
        item = result.results[0]
        score = 0.0 if item.mask else item.reward
        return StrictJSONResponse(
            {"score": score, "verdict": item.verdict.value, "mask": item.mask, "reason": item.reason}
        )


def _openrlhf_request(body: bytes, verifier: str, bodies: BodyParser) -> GradeRequest:
    limit = bodies.limits.max_items
    request, budget = bodies.parse_with_budget(OpenRLHFRequest, body, lambda value: _check_openrlhf_lists(value, limit))
    n = len(request.query)
    # Each response is a copy of its query (what follows the prompt): charged as one.
    copies = sum(sys.getsizeof(query) for query in request.query)
    bodies.spend(budget, copies, "query", sum(len(query) for query in request.query))
    for name, values in (("prompts", request.prompts), ("labels", request.labels)):
        if values is not None and len(values) != n:
            raise BadRequest(f"{name}: {len(values)} entries, but query has {n}")
    prompts = request.prompts or [""] * n
    labels = request.labels or [None] * n
    items = [
        GradeItem(
            prompt=prompt,
            response=response_text(query, prompt),
            verifier=verifier,
            ground_truth=ground_truth(label, partial(bodies.embedded_json, where=f"labels[{i}]", budget=budget)),
        )
        for i, (query, prompt, label) in enumerate(zip(request.query, prompts, labels, strict=True))
    ]
    return GradeRequest(items=items)


def _check_openrlhf_lists(value: Any, max_items: int) -> None:
    check_lists(value, {"labels": max_items})
    check_lists(value, {"query": max_items, "prompts": max_items}, str)


def _slime_request(body: bytes, verifier: str, bodies: BodyParser) -> GradeRequest:
    sample, budget = bodies.parse_with_budget(SlimeRequest, body)
    label = ground_truth(sample.label, partial(bodies.embedded_json, where="label", budget=budget))
    item = GradeItem(prompt=sample.prompt, response=sample.response, verifier=verifier, ground_truth=label)
    return GradeRequest(items=[item])


async def _renamed(grading: Awaitable[GradeResponse], renames: dict[str, str]) -> GradeResponse:
    """The grading's result; its BadRequest speaks of this endpoint's fields, not of /v1/grade items."""
    try:
        return await grading
    except BadRequest as exc:

        def rename(match: re.Match[str]) -> str:
            field = match.group(2)
            if field in ("verifier", "params"):
                return field
            return renames[field].format(match.group(1))

        message = _ITEM_FIELD.sub(rename, exc.message)
        raise BadRequest(message, details={"errors": message.split("; ")}) from None


def _body_schema(model: str) -> dict[str, Any]:
    """These routes parse their own bodies (to name bad fields): the schema is documented here."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model}"}}},
        }
    }
