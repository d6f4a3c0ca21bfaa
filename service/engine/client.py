"""`EngineClient`: everything the HTTP side may ask of an engine, as a Protocol.

`Engine` implements it; so does the HTTP tests' `FakeEngine`, and mypy checks both
(tests/integration/fake_engine.py ends with the assignment that makes it check the fake).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

from service.engine.observer import EngineObserver
from service.engine.types import AttentionSpec, EngineStats, GenerationParams, GenerationResult, ModelInfo, TokenEvent

# Inputs at least this long are tokenized (and segmented) in a worker thread before they are submitted
# (EngineClient.prepare): a 100,000-character input costs the tokenizer and the segmenter most of a second.
LONG_INPUT_CHARS = 2_000


class GenerationHandle(Protocol):
    """One submitted request as its caller sees it (`RequestHandle` is the engine's)."""

    @property
    def id(self) -> str: ...

    def __aiter__(self) -> AsyncIterator[TokenEvent]: ...

    def result(self) -> asyncio.Future[GenerationResult]: ...

    # Done once the engine has taken the request, raising its refusal (a ServingError) otherwise. An engine in
    # this process refuses within submit; engine processes (replicas.py) answer a moment later.
    def admitted(self) -> asyncio.Future[None]: ...

    def cancel(self, reason: str = "disconnect") -> None: ...


class EngineClient(Protocol):
    """What the HTTP side calls (docs/engine-api.md): lifecycle, model facts, tokenizing, submitting."""

    observer: EngineObserver  # assigned by create_app before start(): the app's metrics

    async def start(self) -> None: ...

    async def stop(self, *, drain: bool = True, timeout_s: float) -> None: ...

    @property
    def ready(self) -> bool: ...

    @property
    def info(self) -> ModelInfo: ...

    def stats(self) -> EngineStats: ...

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]: ...

    def prepare(self, text: str) -> None: ...  # submit's text work ahead, from any thread (long inputs)

    def submit(
        self,
        text: str,
        params: GenerationParams,
        *,
        attention: AttentionSpec | None = None,
        forced_target: str | None = None,
        stream: bool = True,
    ) -> GenerationHandle: ...
