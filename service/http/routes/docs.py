"""GET /docs: Swagger UI from files installed with the service (the swagger-ui-py package), never a CDN.

A server without internet access (or a browser behind a strict proxy) still shows the API page. ReDoc is off.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_ASSETS = "/docs/assets"


def swagger_ui_dir() -> Path:
    """Swagger UI's distribution (swagger-ui-bundle.js, swagger-ui.css, LICENSE) as swagger-ui-py ships it.

    Found without importing the package: its __init__ loads adapters for a dozen web frameworks.

    Raises:
        RuntimeError: swagger-ui-py is not installed (it is in the `service` extra).
    """
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py package is missing: pip install -e '.[service]'")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


def install_docs(app: FastAPI) -> None:
    """Serve Swagger UI at /docs and its assets under /docs/assets (no API key: they hold no data)."""
    router = APIRouter(include_in_schema=False)
    title = f"{app.title} - Swagger UI"

    @router.get("/docs")
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=title,
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png",
        )

    app.include_router(router)
    app.mount(DOCS_ASSETS, StaticFiles(directory=swagger_ui_dir()), name="docs-assets")
