"""The FastAPI app: its routes, the handler that turns errors into HTTP answers (with
`service.errors.http_status`), the OpenAPI document, and the lifespan that starts and
stops the backends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from rlvr.errors import RLVRError
from rlvr.sandboxes.local.sessions import LocalSessions
from rlvr.service.asgi import BodyLimit, StrictJSONResponse, error_response
from rlvr.service.backends import Backends, build_backends
from rlvr.service.bodies import INLINE_PARSE_BYTES, BodyLimits, BodyParser
from rlvr.service.contract import ground_truth_conditions
from rlvr.service.drain import Drain
from rlvr.service.errors import BackendUnavailable, ClientGone, Overloaded, ShuttingDown, http_status
from rlvr.service.grading import Grader
from rlvr.service.mcp import McpEndpoint, add_mcp_routes
from rlvr.service.metrics import Metrics
from rlvr.service.models import ErrorResponse, GradeRequest, GradeResponse, ValidateResponse, VerifierList
from rlvr.service.planning import MAX_ERRORS_LISTED, format_loc
from rlvr.service.run_code import RunCodePool, RunCodeRequest, add_run_code_routes
from rlvr.service.session_table import SessionTable
from rlvr.service.sessions import add_session_routes
from rlvr.service.settings import Settings, builtin_config
from rlvr.service.trainer_api import TRAINER_REQUEST_MODELS, add_trainer_routes
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.registry import Registry
from rlvr.version import __version__

log = logging.getLogger(__name__)

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    408: {"model": ErrorResponse, "description": "The request's headers or body came too slowly"},
    413: {"model": ErrorResponse, "description": "Request body too large"},
    422: {"model": ErrorResponse, "description": "Invalid request; the message names the item and field"},
    429: {"model": ErrorResponse, "description": "Too much work in flight; retry after Retry-After seconds"},
    503: {
        "model": ErrorResponse,
        "description": "A backend is unavailable, or the server is shutting down; safe to retry (after Retry-After)",
    },
}


@dataclass
class _Service:
    """What the routes work with. Backends and grader exist from startup to shutdown."""

    settings: Settings
    registry: Registry
    metrics: Metrics
    drain: Drain
    run_code: RunCodePool
    bodies: BodyParser
    sessions: SessionTable
    mcp: McpEndpoint
    backends: Backends | None = None
    running_grader: Grader | None = None

    def grader(self) -> Grader:
        if self.running_grader is None:
            raise BackendUnavailable("service is starting up")
        return self.running_grader


def create_app(settings: Settings | None = None, registry: Registry | None = None) -> FastAPI:
    """The app for `settings` (read from the environment when not given). The verifier
    registry is built from the settings unless one is given."""
    settings = settings or Settings()
    registry = registry or Registry(builtin_config(settings))
    run_code = RunCodePool(registry.config.sandbox, settings.workers, settings.run_code_batch)
    bodies = BodyParser(
        BodyLimits(
            max_items=settings.max_items,
            max_verifier_refs=settings.max_verifier_refs,
            max_parse_expansion=settings.max_parse_expansion,
            parse_floor_bytes=settings.parse_floor_mb * 1024 * 1024,
            max_object_keys=settings.max_object_keys,
        ),
        settings.planning_concurrency,
    )
    sessions = SessionTable(
        LocalSessions(registry.config.sandbox),
        max_sessions=settings.max_sessions,
        max_memory_mb=settings.session_max_memory_mb,
        max_idle_ttl_s=settings.session_max_idle_ttl_s,
    )
    service = _Service(
        settings, registry, Metrics(), Drain(settings.drain_grace_s), run_code, bodies, sessions, McpEndpoint(sessions)
    )
    app = FastAPI(
        title="rlvr",
        version=__version__,
        description="Rewards from programs for RL with verifiable rewards.",
        lifespan=_lifespan(service),
    )
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_request_bytes,
        timeout_s=settings.body_timeout_s,
        max_bytes_held=settings.max_bodies_held_mb * 1024 * 1024,
    )
    _add_error_handlers(app)
    _add_grade_route(app, service)
    add_trainer_routes(
        app,
        lambda request, build: _serve(service, request, build),
        settings.default_verifier,
        bodies,
        lambda name: sorted(service.registry.get(name).signals),
    )
    add_run_code_routes(app, service.run_code, service.drain, bodies)
    add_session_routes(app, service.sessions, lambda graded: service.grader().grade(graded))
    # MCP's `python` tool at /mcp, on the same sessions (not in the OpenAPI document).
    add_mcp_routes(app, service.mcp)
    _add_info_routes(app, service)
    _document_grade_request(app, service.registry.config)
    # The server runner (service.serve) starts the drain on SIGTERM.
    app.state.drain = service.drain
    # The live sessions (of /v1/sessions and /mcp), for diagnostics and tests.
    app.state.sessions = service.sessions
    return app


def _lifespan(service: _Service) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Worker processes get the registry's config and build their own registries from it.
        backends = await build_backends(service.settings, service.metrics, service.registry.config)
        service.backends = backends
        service.running_grader = Grader(
            service.settings, service.registry, backends.dispatcher, backends.cache, service.metrics
        )
        try:
            # The MCP sessions end (and their rlvr sessions with them) before the table closes.
            async with _sessions_routed(service), service.mcp.run():
                yield
        finally:
            service.run_code.close()
            await service.sessions.aclose()
            await backends.close()

    return lifespan


@contextlib.asynccontextmanager
async def _sessions_routed(service: _Service) -> AsyncIterator[None]:
    """In Redis mode, this replica's sessions answer the other replicas' calls, and its
    calls for theirs go to them (`session_routing`)."""
    if service.settings.redis_url is None:
        yield
        return
    from rlvr.service.redis_conn import redis_client
    from rlvr.service.session_routing import SessionRouter

    client, reader = redis_client(service.settings), redis_client(service.settings, blocking=True)
    router = SessionRouter(client, reader, service.sessions)
    await router.start()
    try:
        yield
    finally:
        await router.close()
        await client.aclose()
        await reader.aclose()


def _add_error_handlers(app: FastAPI) -> None:
    """Every error answers with the same body: {"error": {"code", "message", "details"}}."""

    @app.exception_handler(RLVRError)
    async def _rlvr_error(request: Request, exc: RLVRError) -> Response:
        status, code = http_status(exc)
        headers = None
        if isinstance(exc, Overloaded | ShuttingDown):
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


def _add_grade_route(app: FastAPI, service: _Service) -> None:
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
        answer = await _serve(service, request, service.bodies.parse_grade)
        return Response(answer.to_json_bytes(), media_type="application/json")

    @app.post(
        "/v1/validate",
        response_model=ValidateResponse,
        responses=ERROR_RESPONSES,
        summary="Check a batch of items without grading it",
        description="The body of `/v1/grade`. Lists each item whose params or ground truth its verifier refuses, "
        "as `/v1/grade` would mask it; a request at fault is a 422, as there. Lints a dataset before training.",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GradeRequest"}}},
            }
        },
    )
    async def validate(request: Request) -> Response:
        body = await request.body()
        parsed = await service.bodies.off_loop(service.bodies.parse_grade, body)
        answer = await service.grader().validate(parsed, small=len(body) <= INLINE_PARSE_BYTES)
        return Response(answer.model_dump_json().encode(), media_type="application/json")


async def _serve(service: _Service, request: Request, build: Callable[[bytes], GradeRequest]) -> GradeResponse:
    """The graded answer to the grade request that `build` makes of the request's body:
    counted in the metrics, under the drain. What every grading route runs."""
    try:
        result = await service.drain.run(_grade(service, request, build))
    except RLVRError as exc:
        service.metrics.requests.labels(str(http_status(exc)[0])).inc()
        raise
    service.metrics.requests.labels("200").inc()
    return result


async def _grade(service: _Service, request: Request, build: Callable[[bytes], GradeRequest]) -> GradeResponse:
    """The answer to a grade request; ClientGone (and its grading cancelled, so that its
    queued work is dropped) if the client disconnects first."""
    body = await _body(request)
    parsed = await service.bodies.off_loop(build, body)
    small = len(body) <= INLINE_PARSE_BYTES
    del body  # not held while the request is graded: its values are objects now
    # Graded in this task, which a disconnect cancels: one task fewer per request than
    # racing a grading task against the watcher.
    grading = asyncio.current_task()
    gone = asyncio.ensure_future(_disconnected(request))
    gone.add_done_callback(lambda watcher: _cancel_if_gone(watcher, grading))
    try:
        return await service.grader().grade(parsed, small=small)
    except asyncio.CancelledError:
        if gone.done() and not gone.cancelled():
            raise ClientGone("the client disconnected before its answer") from None
        raise
    finally:
        gone.cancel()


def _cancel_if_gone(watcher: asyncio.Future[None], grading: asyncio.Task[Any] | None) -> None:
    if not watcher.cancelled() and grading is not None:
        grading.cancel()


async def _body(request: Request) -> bytes:
    """The request's body, not kept by the request as `Request.body()` keeps it."""
    return b"".join([chunk async for chunk in request.stream()])


async def _disconnected(request: Request) -> None:
    # The body has been read, so the next message can only be the disconnect.
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _add_info_routes(app: FastAPI, service: _Service) -> None:
    @app.get("/v1/verifiers", response_model=VerifierList, summary="List verifiers and their schemas")
    async def verifiers() -> Response:
        described = await asyncio.get_running_loop().run_in_executor(None, service.registry.describe)
        return StrictJSONResponse({"verifiers": described})

    @app.get("/healthz", summary="Liveness")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", summary="Readiness, with the state of every backend", responses={503: {}})
    async def readyz() -> Response:
        if service.drain.draining:  # not ready from the first moment of a drain
            return StrictJSONResponse({"ready": False, "draining": True, "backends": {}}, status_code=503)
        if service.backends is None:
            return StrictJSONResponse({"ready": False, "backends": {}}, status_code=503)
        report = await service.backends.health()
        registry = service.registry
        report["backends"]["verifiers"] = {"ready": True, "broken": registry.broken(), "known": registry.names()}
        report["backends"]["sessions"] = service.sessions.stats()
        return StrictJSONResponse(report, status_code=200 if report["ready"] else 503)

    @app.get("/metrics", summary="Prometheus metrics", response_class=Response)
    async def prometheus() -> Response:
        if service.backends is not None:
            await service.backends.refresh_metrics(service.metrics)
        service.metrics.sessions(service.sessions.stats(), service.sessions.calls)
        return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)


def _document_grade_request(app: FastAPI, config: BuiltinConfig) -> None:
    """`/v1/grade` (like the trainer routes) parses its own body, so FastAPI does not see
    the GradeRequest model: its schema (with the models it refers to, and the built-in verifiers' ground-truth
    schemas: see service.contract) is added to the document here."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            bodies: tuple[type[BaseModel], ...] = (GradeRequest, *TRAINER_REQUEST_MODELS, RunCodeRequest)
            for model in bodies:
                request_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(request_schema.pop("$defs", {}))
                components[model.__name__] = request_schema
            gt_components, conditions = ground_truth_conditions(config)
            components.update(gt_components)
            components["GradeItem"]["allOf"] = conditions
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _validation_message(exc: RequestValidationError) -> tuple[str, list[str]]:
    messages = [f"{format_loc('', e.get('loc', ())).lstrip('.')}: {e.get('msg')}" for e in exc.errors()]
    return "; ".join(messages[:MAX_ERRORS_LISTED]), messages[:MAX_ERRORS_LISTED]


def openapi_document() -> str:
    """The OpenAPI document of the built-in service, as YAML (`rlvr openapi`, openapi.yaml)."""
    import yaml

    return yaml.safe_dump(create_app().openapi(), sort_keys=False, allow_unicode=True)
