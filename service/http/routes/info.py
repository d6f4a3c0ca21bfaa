"""GET /info (model, files, limits) and the hook for the static web viewer at GET / and GET /viewer.

The viewer is `index.html` in the static directory (service/static by default); POST / stays generate.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response

from service.engine import ModelInfo, ModelNotReady
from service.http.info_schemas import InfoResponse
from service.http.routes.generate import ERROR_RESPONSES
from service.http.settings import ServiceSettings
from service.http.state import engine_of, settings_of

DEFAULT_STATIC_DIR = Path(__file__).resolve().parents[2] / "static"  # service/static
# The viewer holds an API-key field: it runs only its own scripts, talks only to this origin and is
# never framed (clickjacking). Its scripts and styles are files under /static (no inline code).
VIEWER_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def _atento_version() -> str:
    try:
        return version("atento")
    except PackageNotFoundError:
        return "0.1.0+source"


def info_body(info: ModelInfo, settings: ServiceSettings) -> dict[str, Any]:
    """Build GET /info from the engine's ModelInfo and the server's limits."""
    config = dict(info.config)
    max_source, max_target = info.max_source_tokens, info.max_target_tokens
    return {
        "model_id": f"{info.name}/{info.version}",
        "model_name": info.name,
        "model_version": str(info.version),
        "architecture": config,
        "files": dict(info.files),
        "variant": info.variant,
        "execution_provider": info.provider,
        "decoder_graphs": dict(info.decoder_graphs),
        "limits": {
            "max_source_tokens": max_source,
            "max_target_tokens": max_target,
            "max_new_tokens": min(settings.max_new_tokens_limit, max(max_target - 1, 1)),
            "max_batch_inputs": settings.max_batch_inputs,
            "max_num_beams": settings.max_num_beams,
            "max_body_bytes": settings.max_body_bytes,
            "request_timeout_s": settings.request_timeout_s,
            "max_batch_size": settings.batching.max_batch_size,
            "max_queue": settings.batching.max_queue,
            "lanes": settings.batching.lanes,
            "engine_processes": settings.batching.processes,
        },
        "languages": None if info.languages is None else dict(info.languages),
        "version": _atento_version(),
        "router": "atento",
    }


def build_info_router() -> APIRouter:
    router = APIRouter(tags=["info"])  # service/http/app.py adds the API-key check when keys are set

    @router.get(
        "/info",
        response_model=InfoResponse,
        responses=ERROR_RESPONSES,
        summary="Model name and version, architecture, files' sha256, variant, provider, limits",
    )
    async def info(request: Request) -> Response:
        engine = engine_of(request)
        if not engine.ready:
            raise ModelNotReady("model is loading")
        return JSONResponse(info_body(engine.info, settings_of(request)))

    return router


def build_viewer_router(static_dir: Path) -> APIRouter:
    """GET / and GET /viewer serve `static_dir/index.html` when it exists (no API key: it holds no data;
    its own API calls carry the key). Without a viewer, GET / redirects to /docs."""
    router = APIRouter(include_in_schema=False)
    index = static_dir / "index.html"

    @router.get("/")
    async def root() -> Response:
        if index.is_file():
            return FileResponse(index, media_type="text/html", headers=VIEWER_HEADERS)
        return RedirectResponse("/docs")

    @router.get("/viewer")
    async def viewer() -> Response:
        if index.is_file():
            return FileResponse(index, media_type="text/html", headers=VIEWER_HEADERS)
        return JSONResponse(
            {"error": "no viewer installed (service/static/index.html)", "error_type": "not_found"},
            status_code=404,
        )

    return router
