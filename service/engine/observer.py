"""The engine's metrics hooks (docs/engine-api.md): a Protocol the HTTP layer implements with
prometheus-client, and the do-nothing default. No onnxruntime, no HTTP."""

from __future__ import annotations

from typing import Protocol


class EngineObserver(Protocol):
    """Metrics hooks, called from the engine's worker thread (prometheus-client is thread-safe)."""

    def on_step(self, batch_size: int, duration_s: float) -> None: ...
    def on_queue_wait(self, seconds: float) -> None: ...
    def on_first_token(self, seconds: float) -> None: ...
    def on_token(self, seconds_since_previous: float) -> None: ...
    def on_finish(self, input_tokens: int, generated_tokens: int) -> None: ...
    def on_cancel(self, reason: str) -> None: ...
    def on_edit_guard_reverted(self, spans: int) -> None: ...  # on the event loop, not the worker


class NoObserver:
    """The observer of an engine nobody watches: every hook does nothing."""

    def on_step(self, batch_size: int, duration_s: float) -> None:
        pass

    def on_queue_wait(self, seconds: float) -> None:
        pass

    def on_first_token(self, seconds: float) -> None:
        pass

    def on_token(self, seconds_since_previous: float) -> None:
        pass

    def on_finish(self, input_tokens: int, generated_tokens: int) -> None:
        pass

    def on_cancel(self, reason: str) -> None:
        pass

    def on_edit_guard_reverted(self, spans: int) -> None:
        pass
