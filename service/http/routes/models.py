"""Per-model routes: the TGI routes again under `/models/{name}` and `/models/{name}/versions/{version}`.

No route code of its own: the generate, attention and info routers are included a second and third time
under these prefixes, with a dependency that resolves the model and *leases* its version for the request
(service/engine/repository.py: a version being unloaded waits for its leases before it drains). The handlers
find the leased engine through service/http/state.py's engine_of / ready_engine. In a repository the TGI
routes themselves take the same lease on the default model, so a roll-out never drops one of theirs either.
`GET /models` lists what is served (the viewer's model selector).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Path, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from service.engine.errors import ModelNotFound
from service.engine.repository import NAME_PATTERN, ModelRepository, ModelVersion
from service.http.state import LEASED_ENGINE, models_of

_NAME = Path(description="A served model's name (GET /v2/repository/index lists them).", max_length=128)
_VERSION = Path(description="One of its served versions; without it, its newest.", max_length=20)


def _resolve(request: Request, name: str | None, version: str | None) -> tuple[ModelRepository, ModelVersion]:
    repository = models_of(request)
    if name is not None and not NAME_PATTERN.fullmatch(name):
        raise ModelNotFound(f"{name[:128]!r} is not a model name", loaded=repository.loaded())
    return repository, repository.resolve(name, version)


async def lease_default(request: Request) -> AsyncIterator[None]:
    """The repository's default model, for the TGI routes."""
    repository, entry = _resolve(request, None, None)
    with repository.lease(entry) as engine:
        request.scope[LEASED_ENGINE] = engine
        yield


async def lease_model(request: Request, name: str = _NAME) -> AsyncIterator[None]:
    repository, entry = _resolve(request, name, None)
    with repository.lease(entry) as engine:
        request.scope[LEASED_ENGINE] = engine
        yield


async def lease_version(request: Request, name: str = _NAME, version: str = _VERSION) -> AsyncIterator[None]:
    repository, entry = _resolve(request, name, version)
    with repository.lease(entry) as engine:
        request.scope[LEASED_ENGINE] = engine
        yield


class ServedVersion(BaseModel):
    name: str
    version: str


class ServedModels(BaseModel):
    default_model: str = Field(description="The model behind the TGI routes (/generate, /attention, /info).")
    models: list[ServedVersion] = Field(description="Every served (name, version), the default model's first.")


list_router = APIRouter(tags=["models"])


@list_router.get("/models", response_model=ServedModels, summary="The served models and versions")
async def list_models(request: Request) -> Response:
    repository = models_of(request)
    return JSONResponse({"default_model": repository.default_name, "models": repository.loaded()})


def publish_models(app: FastAPI) -> None:
    """`atento_model_info` for every served version (after a start, a load or an unload)."""
    repository: ModelRepository = app.state.models
    served = []
    for entry in repository.serving():
        if entry.engine is not None and entry.engine.ready:
            info = entry.engine.info  # named as the repository names it (the manifest may say otherwise)
            served.append((entry.name, entry.version, info.variant, info.provider))
    app.state.metrics.set_models(served)


UNKNOWN_MODEL_RESPONSE: dict[int | str, dict[str, Any]] = {
    404: {"description": "No such model or version is served; the body lists the loaded ones"}
}


def include_model_routes(app: FastAPI, routers: Sequence[APIRouter], *, dependencies: list[Any]) -> None:
    """Serve every router's routes under /models/{name} and /models/{name}/versions/{version}."""
    for prefix, lease in (("/models/{name}", lease_model), ("/models/{name}/versions/{version}", lease_version)):
        for router in routers:
            app.include_router(
                router,
                prefix=prefix,
                dependencies=[*dependencies, Depends(lease)],
                tags=["models"],
                responses=UNKNOWN_MODEL_RESPONSE,
            )
