"""What the app keeps in `app.state`, read with types: the engine (as an EngineClient), the model repository,
the settings and the metrics. Routes call these instead of reaching into `request.app.state` themselves.
"""

from __future__ import annotations

from starlette.requests import Request

from service.engine import EngineClient, ModelNotReady
from service.engine.repository import ModelRepository
from service.http.metrics import Metrics
from service.http.settings import ServiceSettings

# request.scope key of the engine a per-model route (or a repository's TGI route) leased for this request
# (service/http/routes/models.py); without it the request is the single model's.
LEASED_ENGINE = "atento.engine"


def engine_of(request: Request) -> EngineClient:
    """The engine this request is for: the one its route leased, else the single model's (ATENTO_MODEL_DIR),
    else the repository's default model (health probes).

    Raises:
        ModelNotFound: the repository's default model is not served. ModelNotReady: it is still loading.
    """
    leased: EngineClient | None = request.scope.get(LEASED_ENGINE)
    if leased is not None:
        return leased
    engine: EngineClient | None = request.app.state.engine
    if engine is not None:
        return engine
    resolved = models_of(request).resolve().engine
    if resolved is None:  # resolve() returns only versions with an engine; a guard for the type checker
        raise ModelNotReady("model is loading")
    return resolved


def models_of(request: Request) -> ModelRepository:
    models: ModelRepository = request.app.state.models
    return models


def settings_of(request: Request) -> ServiceSettings:
    settings: ServiceSettings = request.app.state.settings
    return settings


def metrics_of(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


def ready_engine(request: Request) -> EngineClient:
    """Return the request's engine, or raise ModelNotReady while it loads or the server drains."""
    if request.app.state.draining:
        raise ModelNotReady("shutting down: not accepting new requests")
    engine = engine_of(request)
    if not engine.ready:
        raise ModelNotReady("model is loading")
    return engine
