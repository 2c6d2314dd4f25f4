"""The FastAPI app: routes, the error mapping (the one place errors become HTTP), lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rlvr import __version__
from rlvr.errors import RLVRError
from rlvr.service.backends import Backends, build_backends
from rlvr.service.errors import HTTP_STATUS, BackendUnavailable, BadRequest, Overloaded, PayloadTooLarge, http_status
from rlvr.service.grading import MAX_ERRORS_LISTED, Grader, format_loc
from rlvr.service.metrics import Metrics
from rlvr.service.models import ErrorResponse, GradeRequest, GradeResponse, VerifierList
from rlvr.service.settings import Settings, builtin_config
from rlvr.verifiers.registry import Registry

log = logging.getLogger(__name__)

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorResponse, "description": "Request body too large"},
    422: {"model": ErrorResponse, "description": "Invalid request; the message names the item and field"},
    429: {"model": ErrorResponse, "description": "Too much work in flight; retry after Retry-After seconds"},
    503: {"model": ErrorResponse, "description": "A backend is unavailable"},
}


class StrictJSONResponse(JSONResponse):
    """JSON that can never carry NaN or Infinity."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def error_response(status: int, code: str, message: str, details: Any = None, headers: Any = None) -> Response:
    body = {"error": {"code": code, "message": message, "details": details}}
    return StrictJSONResponse(body, status_code=status, headers=headers)


class BodyLimit:
    """Refuses bodies over the byte limit, whether or not Content-Length is honest."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await self._reject(scope, receive, send)
                    return
        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise PayloadTooLarge(f"body: request exceeds the limit of {self.max_bytes} bytes")
            return message

        await self.app(scope, counting_receive, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413, HTTP_STATUS[PayloadTooLarge][1], f"body: request exceeds the limit of {self.max_bytes} bytes"
        )
        await response(scope, receive, send)


def _body_errors(exc: ValidationError) -> tuple[str, dict[str, Any]]:
    messages = []
    for err in exc.errors(include_url=False):
        if err["type"] == "json_invalid":
            messages.append(f"body: not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})")
            continue
        where = format_loc("", err["loc"]).lstrip(".") or "body"
        messages.append(f"{where}: {err['msg']}")
    shown = messages[:MAX_ERRORS_LISTED]
    return "; ".join(shown), {"errors": shown}


def _validation_message(exc: RequestValidationError) -> tuple[str, list[str]]:
    messages = [f"{format_loc('', e.get('loc', ())).lstrip('.')}: {e.get('msg')}" for e in exc.errors()]
    return "; ".join(messages[:MAX_ERRORS_LISTED]), messages[:MAX_ERRORS_LISTED]


def create_app(settings: Settings | None = None, registry: Registry | None = None) -> FastAPI:
    settings = settings or Settings()
    registry = registry or Registry(builtin_config(settings))
    metrics = Metrics()
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        backends = await build_backends(settings, metrics, registry.config)
        state["backends"] = backends
        state["grader"] = Grader(settings, registry, backends.dispatcher, backends.cache, metrics)
        try:
            yield
        finally:
            await backends.close()

    app = FastAPI(
        title="rlvr",
        version=__version__,
        description="Rewards from programs for RL with verifiable rewards.",
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)

    @app.exception_handler(RLVRError)
    async def _rlvr_error(request: Request, exc: RLVRError) -> Response:
        status, code = http_status(exc)
        headers = None
        if isinstance(exc, Overloaded):
            headers = {"Retry-After": str(max(1, round(exc.retry_after_s)))}
        if status >= 500:
            log.error("%s: %s", code, exc.message)
        return error_response(status, code, exc.message, exc.details, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        message, messages = _validation_message(exc)
        return error_response(422, "invalid_request", message, {"errors": messages})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        return error_response(exc.status_code, "http_error", str(exc.detail), headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error")
        return error_response(500, "internal_error", f"internal error: {type(exc).__name__}")

    def grader() -> Grader:
        g = state.get("grader")
        if g is None:
            raise BackendUnavailable("service is starting up")
        return g  # type: ignore[no-any-return]

    @app.post(
        "/v1/grade",
        response_model=GradeResponse,
        responses=ERROR_RESPONSES,
        summary="Grade a batch of items",
        description="One result per item, in request order. `mask: true` marks items the grader failed on.",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GradeRequest"}}},
            }
        },
    )
    async def grade(request: Request) -> Response:
        # Parsed here rather than by FastAPI so that every failure names the item and field.
        try:
            try:
                body = GradeRequest.model_validate_json(await request.body())
            except ValidationError as exc:
                message, details = _body_errors(exc)
                raise BadRequest(message, details=details) from None
            result = await grader().grade(body)
        except RLVRError as exc:
            metrics.requests.labels(str(http_status(exc)[0])).inc()
            raise
        metrics.requests.labels("200").inc()
        return StrictJSONResponse(result)

    @app.get("/v1/verifiers", response_model=VerifierList, summary="List verifiers and their schemas")
    async def verifiers() -> Response:
        described = await asyncio.get_running_loop().run_in_executor(None, registry.describe)
        return StrictJSONResponse({"verifiers": described})

    @app.get("/healthz", summary="Liveness")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", summary="Readiness, with the state of every backend", responses={503: {}})
    async def readyz() -> Response:
        backends: Backends | None = state.get("backends")
        if backends is None:
            return StrictJSONResponse({"ready": False, "backends": {}}, status_code=503)
        report = await backends.health()
        report["backends"]["verifiers"] = {"ready": True, "broken": registry.broken(), "known": registry.names()}
        return StrictJSONResponse(report, status_code=200 if report["ready"] else 503)

    @app.get("/metrics", summary="Prometheus metrics", response_class=Response)
    async def prometheus() -> Response:
        backends: Backends | None = state.get("backends")
        if backends is not None:
            await backends.refresh_metrics(metrics)
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi

            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            request_schema = GradeRequest.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(request_schema.pop("$defs", {}))
            components["GradeRequest"] = request_schema
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
