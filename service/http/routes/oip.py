"""The Open Inference Protocol v2 over HTTP (KServe V2, Triton's HTTP API) and its model repository extension.

`probe_router` holds the readiness probes (no API key, like /health); `router` the rest. /v2/health/live and
/v2/health/ready are in routes/health.py. Errors keep the OIP shape `{"error": "..."}` (atento adds
`error_type`, and `loaded_models` to a 404). The models are service/engine/repository.py's.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, Response

from service.engine import ModelNotReady
from service.engine.errors import ModelNotFound, RepositoryRefused
from service.engine.repository import NAME_PATTERN, READY, ModelRepository, ModelVersion
from service.http import oip_infer
from service.http.oip_schemas import (
    CROSS_ATTENTION,
    TEXT_INPUT,
    TEXT_OUTPUT,
    TOKEN_IDS,
    InferRequest,
    InferResponse,
    ModelMetadata,
    ModelReady,
    OipError,
    RepositoryEntry,
    ServerMetadata,
)
from service.http.oip_tensors import split_body
from service.http.routes.info import _atento_version
from service.http.routes.models import publish_models
from service.http.state import models_of

EXTENSIONS = ["model_repository", "binary_tensor_data"]
PLATFORM = "atento_onnxruntime_seq2seq"
_NAME = Path(max_length=128, description="A model's name (POST /v2/repository/index lists them).")
_VERSION = Path(max_length=20, description="One of its served versions.")
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": OipError, "description": text}
    for status, text in (
        (400, "A repository request that cannot be carried out (e.g. a version that fails verification)"),
        (404, "No such model or version is served; the body lists the loaded ones"),
        (422, "Invalid tensors or parameters"),
        (503, "Loading, or shutting down"),
    )
}

probe_router = APIRouter(tags=["open inference protocol"])
router = APIRouter(tags=["open inference protocol"])


def _resolve(request: Request, name: str, version: str | None) -> tuple[ModelRepository, ModelVersion]:
    repository = models_of(request)
    if not NAME_PATTERN.fullmatch(name):
        raise ModelNotFound(f"{name[:128]!r} is not a model name", loaded=repository.loaded())
    return repository, repository.resolve(name, version)


def _ready_entry(request: Request, name: str, version: str | None) -> tuple[ModelRepository, ModelVersion]:
    repository, entry = _resolve(request, name, version)
    if request.app.state.draining:
        raise ModelNotReady("shutting down")
    if entry.engine is None or not entry.engine.ready:
        raise ModelNotReady(f"model {name!r} is loading")
    return repository, entry


@router.get("/v2", response_model=ServerMetadata, summary="Server metadata")
async def server_metadata() -> Response:
    return JSONResponse({"name": "atento", "version": _atento_version(), "extensions": EXTENSIONS})


def _metadata(request: Request, name: str, version: str | None) -> Response:
    repository, entry = _ready_entry(request, name, version)
    assert entry.engine is not None  # _ready_entry checked it
    config = entry.engine.info.config
    layers, heads = int(config.get("n_decoder_layers", -1)), int(config.get("n_heads", -1))
    versions = [v.version for v in repository.serving() if v.name == entry.name]
    return JSONResponse(
        {
            "name": entry.name,
            "versions": [entry.version] if version is not None else versions,
            "platform": PLATFORM,
            "inputs": [{"name": TEXT_INPUT, "datatype": "BYTES", "shape": [-1]}],
            "outputs": [
                {"name": TEXT_OUTPUT, "datatype": "BYTES", "shape": [-1]},
                {"name": TOKEN_IDS, "datatype": "INT64", "shape": [-1, -1]},
                {"name": CROSS_ATTENTION, "datatype": "FP32", "shape": [-1, layers, heads, -1, -1]},
            ],
        }
    )


@router.get("/v2/models/{name}", response_model=ModelMetadata, responses=_ERRORS, summary="Model metadata")
async def model_metadata(request: Request, name: str = _NAME) -> Response:
    return _metadata(request, name, None)


@router.get(
    "/v2/models/{name}/versions/{version}",
    response_model=ModelMetadata,
    responses=_ERRORS,
    summary="Model version metadata",
)
async def version_metadata(request: Request, name: str = _NAME, version: str = _VERSION) -> Response:
    return _metadata(request, name, version)


@probe_router.get(
    "/v2/models/{name}/ready", response_model=ModelReady, responses=_ERRORS, summary="Model readiness (OIP)"
)
async def model_ready(request: Request, name: str = _NAME) -> Response:
    _ready_entry(request, name, None)
    return JSONResponse({"name": name, "ready": True})


@probe_router.get(
    "/v2/models/{name}/versions/{version}/ready",
    response_model=ModelReady,
    responses=_ERRORS,
    summary="Model version readiness (OIP)",
)
async def version_ready(request: Request, name: str = _NAME, version: str = _VERSION) -> Response:
    _ready_entry(request, name, version)
    return JSONResponse({"name": name, "version": version, "ready": True})


_INFER_DOC: dict[str, Any] = {
    "requestBody": {
        "content": {
            "application/json": {"schema": InferRequest.model_json_schema()},
            "application/octet-stream": {
                "schema": {"type": "string", "format": "binary"},
                "description": "JSON (Inference-Header-Content-Length bytes), then the binary tensors.",
            },
        },
        "required": True,
    }
}
_INFER_DESCRIPTION = (
    f"`{TEXT_INPUT}` (BYTES, [N] or [N, 1]) in; `{TEXT_OUTPUT}` (BYTES, the input's shape) and "
    f"`{TOKEN_IDS}` (INT64 [N, T], padded with -1) out, plus `{CROSS_ATTENTION}` (FP32 [N, layers, heads, T, S], "
    "zero-padded) when asked. `parameters` are TGI's generation parameters. Binary tensor data (Triton's "
    "extension) in both directions."
)


@router.post(
    "/v2/models/{name}/infer",
    response_model=InferResponse,
    responses=_ERRORS,
    openapi_extra=_INFER_DOC,
    summary="Infer (OIP)",
    description=_INFER_DESCRIPTION,
)
async def model_infer(request: Request, name: str = _NAME) -> Response:
    repository, entry = _resolve(request, name, None)
    return await oip_infer.infer(request, repository, entry)


@router.post(
    "/v2/models/{name}/versions/{version}/infer",
    response_model=InferResponse,
    responses=_ERRORS,
    openapi_extra=_INFER_DOC,
    summary="Infer on one version (OIP)",
    description=_INFER_DESCRIPTION,
)
async def version_infer(request: Request, name: str = _NAME, version: str = _VERSION) -> Response:
    repository, entry = _resolve(request, name, version)
    return await oip_infer.infer(request, repository, entry)


async def _body_object(request: Request) -> dict[str, Any]:
    parsed, _ = split_body(await request.body(), None)
    return parsed


@router.post(
    "/v2/repository/index",
    response_model=list[RepositoryEntry],
    responses=_ERRORS,
    summary="The repository's models and versions, with their state",
    openapi_extra={"requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}},
)
async def repository_index(request: Request) -> Response:
    body = await _body_object(request)
    ready_only = body.get("ready", False)
    if not isinstance(ready_only, bool):
        raise RepositoryRefused("'ready' must be true or false")
    rows = models_of(request).index()
    return JSONResponse([row for row in rows if row["state"] == READY] if ready_only else rows)


@router.post(
    "/v2/repository/models/{name}/load",
    responses=_ERRORS,
    summary="Load or reload a model: new versions verified and warmed up beside the served ones, then switched to",
)
async def load_model(request: Request, name: str = _NAME) -> Response:
    parameters = (await _body_object(request)).get("parameters") or {}
    if not isinstance(parameters, dict) or any(key == "config" or key.startswith("file:") for key in parameters):
        raise RepositoryRefused("load takes no config or files: put the model directory in the repository")
    await models_of(request).load(name)
    publish_models(request.app)
    return JSONResponse({})


@router.post("/v2/repository/models/{name}/unload", responses=_ERRORS, summary="Unload a model (it drains first)")
async def unload_model(request: Request, name: str = _NAME) -> Response:
    await _body_object(request)  # tritonclient sends {"parameters": {"unload_dependents": false}}: nothing to do
    await models_of(request).unload(name)
    publish_models(request.app)
    return JSONResponse({})
