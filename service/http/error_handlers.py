"""The FastAPI exception handlers: every error becomes `{"error": ..., "error_type": ...}`.

Status codes come only from service/engine/errors.py's STATUS_BY_ERROR (via its `status_for`); this module
also counts rejections.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from service.engine.errors import (
    InputTooLong,
    InvalidInput,
    ModelNotReady,
    Overloaded,
    ServingError,
    Unauthorized,
    UnsupportedMediaType,
    status_for,
)

logger = logging.getLogger("atento.http")

# atento_requests_rejected_total{reason}: refused before any work was done.
REJECT_REASON_BY_ERROR: dict[type[ServingError], str] = {
    Overloaded: "overloaded",
    InputTooLong: "too_long",
    InvalidInput: "invalid",
    Unauthorized: "unauthorized",
    ModelNotReady: "not_ready",
    UnsupportedMediaType: "invalid",
}
CLIENT_CLOSED_REQUEST = 499  # nginx's convention: logged and counted, never seen by the (gone) client
NOT_READY_RETRY_AFTER_S = 1  # a 503 (loading, draining): another replica, or this one in a moment
# A 422 names at most this many problems, each at most this long: a body with 100,000 bad items must
# not come back as a 100,000-part message (pydantic's messages never quote the input itself here).
_MAX_VALIDATION_PARTS = 5
_MAX_VALIDATION_PART_CHARS = 200


class ClientDisconnected(Exception):
    """The client went away before its response was ready; its work has been cancelled."""


def _lookup(table: dict[type[ServingError], str], exc: ServingError) -> str | None:
    for cls in type(exc).__mro__:
        if cls in table:
            return table[cls]
    return None


def error_body(exc: ServingError) -> dict[str, Any]:
    """Return the error body of a domain error, as TGI writes it (also used inside event streams)."""
    return exc.payload()


def count_rejection(request: Request, exc: ServingError) -> None:
    reason = _lookup(REJECT_REASON_BY_ERROR, exc)
    if reason is not None:
        request.app.state.metrics.reject(reason)


def error_headers(exc: ServingError) -> dict[str, str]:
    """Headers that go with an error: Retry-After on 429 and 503, WWW-Authenticate on 401 (RFC 9110)."""
    if isinstance(exc, Overloaded):
        retry_after = getattr(exc, "retry_after_s", None) or 1.0
        return {"Retry-After": str(max(1, math.ceil(float(retry_after))))}
    if isinstance(exc, ModelNotReady):
        return {"Retry-After": str(NOT_READY_RETRY_AFTER_S)}
    if isinstance(exc, Unauthorized):
        return {"WWW-Authenticate": 'Bearer realm="atento"'}
    return {}


def serving_error_response(request: Request, exc: ServingError) -> JSONResponse:
    """Map a domain error to its JSON response, counting it as a rejection when it is one."""
    status = status_for(exc)
    count_rejection(request, exc)
    if status >= 500 and not isinstance(exc, ModelNotReady):  # a drain's 503s are expected, one per request
        logger.warning("request failed: %s", exc, extra={"status": status, "error_type": exc.error_type})
    return JSONResponse(error_body(exc), status_code=status, headers=error_headers(exc))


def validation_message(errors: Sequence[Any]) -> str:
    """One line naming the first few problems of a body (pydantic's errors), never echoing its input."""
    parts = []
    for error in errors[:_MAX_VALIDATION_PARTS]:
        location = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        part = f"{location}: {error.get('msg', 'invalid')}" if location else str(error.get("msg", "invalid"))
        if len(part) > _MAX_VALIDATION_PART_CHARS:
            part = part[:_MAX_VALIDATION_PART_CHARS] + "..."
        parts.append(part)
    if len(errors) > _MAX_VALIDATION_PARTS:
        parts.append(f"and {len(errors) - _MAX_VALIDATION_PARTS} more")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that give every error the same body."""

    async def on_serving_error(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, ServingError):  # registered for ServingError only; keeps mypy honest
            raise exc
        return serving_error_response(request, exc)

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, RequestValidationError):
            raise exc
        # Same body, status and rejection count as the engine's InvalidInput.
        return serving_error_response(request, InvalidInput(validation_message(exc.errors())))

    async def on_http_exception(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, StarletteHTTPException):
            raise exc
        if isinstance(exc.__cause__, ClientDisconnect):  # FastAPI wraps a hang-up during the body read as 400
            return Response(status_code=CLIENT_CLOSED_REQUEST)
        if exc.status_code == 400:  # FastAPI could not parse the body (e.g. not UTF-8): as invalid JSON
            return serving_error_response(request, InvalidInput(f"malformed request body: {exc.detail}"))
        error_type = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(
            {"error": str(exc.detail), "error_type": error_type},
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    async def on_disconnect(request: Request, exc: Exception) -> Response:
        return Response(status_code=CLIENT_CLOSED_REQUEST)

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        error_id = uuid.uuid4().hex[:12]
        logger.error("unexpected error %s", error_id, exc_info=exc, extra={"error_id": error_id})
        return JSONResponse({"error": f"internal error (id {error_id})", "error_type": "internal"}, status_code=500)

    app.add_exception_handler(ServingError, on_serving_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_exception)
    app.add_exception_handler(ClientDisconnected, on_disconnect)
    app.add_exception_handler(Exception, on_unexpected)
