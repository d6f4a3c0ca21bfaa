"""What the app keeps in `app.state`, read with types: the engine (as an EngineClient), the settings and
the metrics. Routes call these instead of reaching into `request.app.state` themselves.
"""

from __future__ import annotations

from starlette.requests import Request

from service.engine import EngineClient, ModelNotReady
from service.http.metrics import Metrics
from service.http.settings import ServiceSettings


def engine_of(request: Request) -> EngineClient:
    engine: EngineClient = request.app.state.engine
    return engine


def settings_of(request: Request) -> ServiceSettings:
    settings: ServiceSettings = request.app.state.settings
    return settings


def metrics_of(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


def ready_engine(request: Request) -> EngineClient:
    """Return the app's engine, or raise ModelNotReady while it loads or the server drains."""
    if request.app.state.draining:
        raise ModelNotReady("shutting down: not accepting new requests")
    engine = engine_of(request)
    if not engine.ready:
        raise ModelNotReady("model is loading")
    return engine
