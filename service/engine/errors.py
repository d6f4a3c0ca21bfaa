"""Domain errors raised by the engine and the HTTP layer, and the one table mapping them to HTTP status.

Imports nothing from this repository; the FastAPI handler that uses STATUS_BY_ERROR lives with the app.
"""

from __future__ import annotations

from typing import Any


class ServingError(Exception):
    """Base class; `error_type` is the stable machine-readable name sent to clients."""

    error_type = "serving_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def payload(self) -> dict[str, Any]:
        """The JSON body the HTTP handler returns: {"error": ..., "error_type": ...}."""
        return {"error": self.message, "error_type": self.error_type}


class InvalidInput(ServingError):
    error_type = "invalid_input"


class InputTooLong(ServingError):
    error_type = "input_too_long"


class Overloaded(ServingError):
    error_type = "overloaded"

    def __init__(self, message: str, *, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ModelNotReady(ServingError):
    error_type = "model_not_ready"


class DeadlineExceeded(ServingError):
    error_type = "deadline_exceeded"


class Unauthorized(ServingError):
    error_type = "unauthorized"


class UnsupportedMediaType(ServingError):
    """A request body that is not JSON (the HTTP layer's check; the engine never raises it)."""

    error_type = "unsupported_media_type"


class HeadersTooLarge(ServingError):
    """More header fields than the server takes (the HTTP layer's check; the engine never raises it)."""

    error_type = "headers_too_large"


class BodyTimeout(ServingError):
    """A request body that did not arrive in time (the HTTP layer's check; the engine never raises it)."""

    error_type = "body_timeout"


class InferenceFailed(ServingError):
    """An exception inside a batch step; `error_id` is logged with the traceback and sent to the client."""

    error_type = "inference_failed"

    def __init__(self, message: str, *, error_id: str) -> None:
        super().__init__(message)
        self.error_id = error_id

    def payload(self) -> dict[str, Any]:
        return {**super().payload(), "error_id": self.error_id}


class ModelLoadError(ServingError):
    """The model directory is missing, corrupt or inconsistent; the message names the file."""

    error_type = "model_load_error"


class ModelNotFound(ServingError):
    """No loaded model or version of that name; the body lists the models that are (`loaded`)."""

    error_type = "model_not_found"

    def __init__(self, message: str, *, loaded: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.loaded = loaded or []

    def payload(self) -> dict[str, Any]:
        return {**super().payload(), "loaded_models": self.loaded}


class RepositoryRefused(ServingError):
    """A model repository request that cannot be carried out as asked (unloading the default model, a
    repository call on a server of one model directory)."""

    error_type = "repository_refused"


STATUS_BY_ERROR: dict[type[ServingError], int] = {
    InvalidInput: 422,
    InputTooLong: 413,
    Overloaded: 429,
    ModelNotReady: 503,
    DeadlineExceeded: 504,
    Unauthorized: 401,
    UnsupportedMediaType: 415,
    HeadersTooLarge: 431,
    BodyTimeout: 408,
    InferenceFailed: 500,
    ModelLoadError: 503,
    ServingError: 500,
}
# The model repository's errors (service/engine/repository.py): a table of their own, so that STATUS_BY_ERROR
# stays the single-model server's contract; status_for reads both.
REPOSITORY_STATUS: dict[type[ServingError], int] = {ModelNotFound: 404, RepositoryRefused: 400}


def status_for(error: ServingError) -> int:
    """The HTTP status of `error`: its own class's entry, else the nearest base class's."""
    for cls in type(error).__mro__:
        if cls in REPOSITORY_STATUS:
            return REPOSITORY_STATUS[cls]
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500
