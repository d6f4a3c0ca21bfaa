"""The engine: everything that runs a model (docs/engine-api.md). Imports onnxruntime, numpy and tokenizers;
never fastapi, starlette, uvicorn, torch, model/ or export/ (tests/integration/test_http_boundaries.py).

A request's path: `engine.py` (Engine.submit, the worker thread) -> `scheduler.py` (who joins, who
steps) -> `executor.py` (one decoding step of the running batch) -> `runner.py` (onnxruntime).
"""

from service.engine.client import EngineClient, GenerationHandle
from service.engine.engine import Engine
from service.engine.errors import (
    DeadlineExceeded,
    InferenceFailed,
    InputTooLong,
    InvalidInput,
    ModelLoadError,
    ModelNotReady,
    Overloaded,
    ServingError,
    Unauthorized,
)
from service.engine.handle import RequestHandle
from service.engine.observer import EngineObserver
from service.engine.settings import BatchingSettings, RuntimeSettings
from service.engine.types import (
    Attention,
    AttentionSpec,
    EngineStats,
    GenerationParams,
    GenerationResult,
    ModelInfo,
    TokenEvent,
)

__all__ = [
    "Attention",
    "AttentionSpec",
    "BatchingSettings",
    "DeadlineExceeded",
    "Engine",
    "EngineClient",
    "EngineObserver",
    "EngineStats",
    "GenerationHandle",
    "GenerationParams",
    "GenerationResult",
    "InferenceFailed",
    "InputTooLong",
    "InvalidInput",
    "ModelInfo",
    "ModelLoadError",
    "ModelNotReady",
    "Overloaded",
    "RequestHandle",
    "RuntimeSettings",
    "ServingError",
    "TokenEvent",
    "Unauthorized",
]
