"""Probes and metrics, never behind API keys: TGI's /health, /health/{live,ready}, the Open Inference
Protocol's server probes (KServe, Triton's Helm chart; its model probes are in routes/oip.py) and Prometheus'
/metrics.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from service.engine.errors import ModelNotReady, ServingError, status_for
from service.http.error_handlers import error_body, error_headers
from service.http.metrics import CONTENT_TYPE_LATEST
from service.http.schemas import ErrorResponse, HealthStatus
from service.http.state import engine_of, metrics_of, settings_of

router = APIRouter(tags=["health"])

_NOT_READY: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorResponse, "description": "Model loading, or shutting down"}
}


def _readiness(request: Request) -> ServingError | None:
    if request.app.state.draining:
        return ModelNotReady("shutting down")
    if not request.app.state.started:
        # A repository serves its default model as soon as it is loaded, before the others: ready only
        # once all of them are, so that no replica enters rotation answering 503 for one of its models.
        return ModelNotReady("models are loading")
    try:
        engine = engine_of(request)  # a repository's default model (service/http/state.py)
    except ServingError as problem:  # not served (404) or still loading (503)
        return problem
    if not engine.ready:
        return ModelNotReady("model is loading")
    return None


def _busy(request: Request) -> bool:
    """The queue is full: new requests get 429 until it drains. A lock-guarded read of two counters,
    never a wait behind the engine's step."""
    stats = engine_of(request).stats()
    return stats.queue_depth >= settings_of(request).batching.max_queue


def _ready_response(request: Request) -> Response:
    problem = _readiness(request)
    if problem is None:
        # Busy is still ready (200): taking a saturated replica out of rotation would only move its load
        # to the others; the body says so for people and for balancers that read it.
        return JSONResponse({"status": "busy" if _busy(request) else "ready"})
    # A probe answering "not ready" is not a rejected request: no atento_requests_rejected_total here.
    return JSONResponse(error_body(problem), status_code=status_for(problem), headers=error_headers(problem))


@router.get("/health", responses=_NOT_READY, response_model=HealthStatus, summary="TGI's health: 200 once ready")
async def health(request: Request) -> Response:
    return _ready_response(request)


@router.get("/health/live", response_model=HealthStatus, summary="Liveness: the process answers")
async def live() -> Response:
    return JSONResponse({"status": "live"})


@router.get(
    "/health/ready",
    responses=_NOT_READY,
    response_model=HealthStatus,
    summary="Readiness: model loaded and warmed up, not shutting down",
    description='200 `{"status": "ready"}`, or `{"status": "busy"}` while the queue is full (new requests get '
    "429 until it drains: still ready, so that a saturated replica stays in rotation); 503 with the error body "
    "and Retry-After while the model loads or the server drains.",
)
async def ready(request: Request) -> Response:
    return _ready_response(request)


@router.get("/v2/health/live", summary="Open Inference Protocol liveness")
async def v2_live() -> Response:
    return JSONResponse({"live": True})


@router.get("/v2/health/ready", responses=_NOT_READY, summary="Open Inference Protocol readiness")
async def v2_ready(request: Request) -> Response:
    problem = _readiness(request)
    if problem is None:
        return JSONResponse({"ready": True})
    return JSONResponse(error_body(problem), status_code=status_for(problem), headers=error_headers(problem))


@router.get(
    "/metrics",
    response_class=Response,
    summary="Prometheus metrics (text format)",
    responses={200: {"content": {"text/plain": {}}}},
)
async def metrics(request: Request) -> Response:
    return Response(metrics_of(request).render(), media_type=CONTENT_TYPE_LATEST)
