"""`create_app(settings, engine=None)`: the FastAPI app, its middleware, routes and engine lifespan.

No module-level app, settings or registry: every call builds its own (tests build many). Never imports
torch, model/ or export/.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from service.engine import EngineClient
from service.engine.replicas import build_engine
from service.engine.repository import ModelRepository
from service.engine.repository_poll import RepositoryPoller
from service.http.auth import require_api_key
from service.http.error_handlers import install_error_handlers
from service.http.metrics import Metrics
from service.http.middleware import RequestContextMiddleware
from service.http.routes.attention import router as attention_router
from service.http.routes.docs import install_docs
from service.http.routes.generate import router as generate_router
from service.http.routes.health import router as health_router
from service.http.routes.info import DEFAULT_STATIC_DIR, _atento_version, build_info_router, build_viewer_router
from service.http.routes.models import include_model_routes, lease_default, publish_models
from service.http.routes.models import list_router as models_list_router
from service.http.routes.oip import probe_router as oip_probe_router
from service.http.routes.oip import router as oip_router
from service.http.settings import ServiceSettings

logger = logging.getLogger("atento.app")

_DESCRIPTION = """\
Serve an encoder-decoder transformer over HTTP in Hugging Face text-generation-inference's dialect
(`POST /generate`, `POST /generate_stream`, `POST /`), and see what it attends to (`POST /attention`).

Every error has the body `{"error": "...", "error_type": "..."}`: 401 missing or wrong API key,
413 input or body too large, 422 invalid parameters, 429 queue full (with Retry-After),
503 not ready or shutting down, 504 past the request's deadline.

When API keys are configured, send `Authorization: Bearer <key>` to every endpoint except the health
probes, `/metrics`, these docs and the web viewer.
"""


def begin_drain(app: FastAPI) -> None:
    """Stop accepting new work (503) while in-flight requests finish; called on SIGTERM.

    Starts the shutdown grace period: `app.state.drain_deadline` is when whatever is left gets cut off.
    """
    if not app.state.draining:
        logger.info("draining: refusing new requests, finishing in-flight ones")
        app.state.drain_deadline = time.monotonic() + app.state.settings.shutdown_grace_s
    app.state.draining = True


async def cut_off(app: FastAPI) -> None:
    """The grace period is over: the engine fails every request still in flight with ModelNotReady, so each
    gets the 503 JSON (with Retry-After) from its own route instead of being cancelled into a plain 500."""
    models: ModelRepository = app.state.models
    logger.warning("grace period over: failing the requests still in flight with 503")
    await models.stop(drain=False, timeout_s=0.0)


def _build_engine(settings: ServiceSettings, metrics: Metrics) -> EngineClient:
    return build_engine(
        settings.model_dir,
        variant=settings.variant,
        device=settings.device,
        runtime=settings.runtime,
        batching=settings.batching,
        observer=metrics,
        edit_guard=settings.edit_guard,
    )


def _build_repository(settings: ServiceSettings, metrics: Metrics) -> ModelRepository:
    """The repository of `settings.model_repository`: an Engine per version, each with its own metrics."""

    def build(directory: Path, name: str, version: str) -> EngineClient:
        engine = build_engine(
            directory,
            variant=settings.variant,
            device=settings.device,
            runtime=settings.runtime,
            batching=settings.batching,
            observer=metrics.model_observer(name, version),
            edit_guard=settings.edit_guard,
        )
        return engine

    repository = ModelRepository(
        settings.model_repository,
        engine_factory=build,
        names=settings.models or None,
        default_model=settings.default_model,
        versions=settings.repository_versions,
        drain_timeout_s=settings.shutdown_grace_s,
    )
    repository.on_retired = metrics.remove_model
    return repository


async def _start_engine(app: FastAPI) -> None:
    """Load and warm up the model(s) in the background so that liveness answers while they load."""
    state = app.state
    models: ModelRepository = state.models
    poller: RepositoryPoller | None = state.poller
    try:
        if poller is not None:
            await poller.baseline()  # before the start's loads: a file changed during them is seen as a change
        await models.start()
    except Exception as exc:  # the service must not serve a model it could not load: exit non-zero
        logger.critical("model failed to load: %s", exc, exc_info=exc)
        on_fatal: Callable[[BaseException], None] | None = state.on_fatal
        if on_fatal is not None:
            on_fatal(exc)
        return
    state.started = True  # every model of the start is served: the server is ready (routes/health.py)
    if state.engine is not None:  # one model directory: its per-model series, named now that it is loaded
        info = state.engine.info
        state.engine.observer = state.metrics.model_observer(info.name, str(info.version))
    publish_models(app)
    if poller is not None:
        poller.start()
    for entry in models.serving():
        if entry.engine is not None:
            info = entry.engine.info
            logger.info(
                "model ready",
                extra={"model": f"{info.name}/{info.version}", "variant": info.variant, "provider": info.provider},
            )


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Start the engine in the background; on shutdown, drain it for what is left of the grace period."""
    loader = asyncio.create_task(_start_engine(app))
    try:
        yield
    finally:
        begin_drain(app)
        if not loader.done():
            loader.cancel()
            with contextlib.suppress(BaseException):
                await loader
        poller: RepositoryPoller | None = app.state.poller
        if poller is not None:
            await poller.stop()  # before the engines stop: no version starts loading during the drain
        # Only what is left of the grace period that began with the drain (SIGTERM, usually).
        left = max(0.0, app.state.drain_deadline - time.monotonic())
        models: ModelRepository = app.state.models
        await models.stop(drain=True, timeout_s=left)
        logger.info("engine stopped")


def create_app(settings: ServiceSettings, engine: EngineClient | None = None) -> FastAPI:
    """Build the HTTP app around an engine.

    Args:
        settings: the service's settings.
        engine: an EngineClient (tests pass a fake); None builds the real engine from
            `settings.model_dir`, or a model repository of `settings.model_repository` when no model
            directory was given (ServiceSettings.serves_repository).

    Returns:
        The app. Its lifespan starts the engine in the background (ready once loaded and warmed up)
        and, on shutdown, drains it for up to `settings.shutdown_grace_s` seconds.
    """
    metrics = Metrics()
    if engine is None and settings.serves_repository:
        models = _build_repository(settings, metrics)
    else:
        if engine is None:
            engine = _build_engine(settings, metrics)
        else:
            engine.observer = metrics  # an engine built elsewhere (tests) reports to this app's registry
        models = ModelRepository.single(engine)

    def engine_stats() -> tuple[int, int]:
        stats = models.stats()
        return stats.queue_depth, stats.running_sequences

    metrics.set_stats_source(engine_stats)
    metrics.set_model_stats_source(models.engines)

    app = FastAPI(
        title="atento",
        version=_atento_version(),
        description=_DESCRIPTION,
        lifespan=_lifespan,
        docs_url=None,  # service/http/routes/docs.py: Swagger UI from installed files, not a CDN
        redoc_url=None,
        # Metrics are Prometheus (/metrics). FastAPI's own OpenTelemetry instrumentation, left on, looks
        # up the global OpenTelemetry providers on every request even when none is configured.
        telemetry={"tracing": False, "metrics": False, "logs": False},
        # No "/static" -> "/static/" redirects: Starlette builds them as absolute URLs from the client's
        # Host header, so a forged Host would be echoed back as a redirect target.
        redirect_slashes=False,
    )
    app.state.settings = settings
    app.state.engine = engine  # None for a repository: the engine of each request is leased (routes/models.py)
    app.state.models = models
    app.state.poller = (
        RepositoryPoller(models, interval_s=settings.repository_poll_s, on_change=lambda: publish_models(app))
        if models.root is not None and settings.repository_poll_s > 0
        else None
    )
    app.state.metrics = metrics
    app.state.api_keys = settings.resolved_api_keys()
    app.state.draining = False
    app.state.started = False  # set once every model the server starts with is loaded and warmed up
    app.state.drain_deadline = None  # set by begin_drain
    app.state.on_fatal = None  # set by __main__ to stop the server when the model cannot load

    install_error_handlers(app)
    app.add_middleware(
        RequestContextMiddleware,
        metrics=metrics,
        max_body_bytes=settings.max_body_bytes,
        body_timeout_s=settings.body_timeout_s,
        request_timeout_s=settings.request_timeout_s,
        api_keys=app.state.api_keys,
        max_headers=settings.server.max_headers,
    )
    static_dir = settings.static_dir or DEFAULT_STATIC_DIR
    # Without keys there is no check to run: FastAPI solving even an empty dependency costs each request
    # about a tenth of the app's own time.
    keyed = [Depends(require_api_key)] if app.state.api_keys else []
    # Routing tries routes in order, so the per-request hot paths come first.
    # A repository's TGI routes lease the default model (a roll-out waits for them); one model directory's
    # need no lease, and each dependency costs a request (see above).
    default = [*keyed, Depends(lease_default)] if engine is None else keyed
    app.include_router(generate_router, dependencies=default)
    app.include_router(attention_router, dependencies=default)
    app.include_router(health_router)
    app.include_router(oip_probe_router)  # OIP's readiness probes: open, like /health
    app.include_router(build_info_router(), dependencies=default)
    include_model_routes(app, [generate_router, attention_router, build_info_router()], dependencies=keyed)
    app.include_router(models_list_router, dependencies=keyed)
    app.include_router(oip_router, dependencies=keyed)
    app.include_router(build_viewer_router(static_dir))
    install_docs(app)
    if static_dir.is_dir():
        app.mount("/static", StaticFiles(directory=static_dir), name="static")
    return app
