"""The handle of one submitted request: its tokens as an async iterator, its result as an awaitable.

The engine's worker thread fills it through its event loop (`loop.call_soon_threadsafe` with `push`
and `finish`); the HTTP layer and any other caller only read it. Part of the engine API
(docs/engine-api.md), exported by service.engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from service.engine.types import GenerationResult, TokenEvent

_DONE = object()  # end-of-stream marker in a handle's token queue


def admitted_at_submit() -> asyncio.Future[None]:
    """`admitted()` of a handle whose engine took the request within submit (and raised there if it did not)."""
    admitted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    admitted.set_result(None)
    return admitted


class RequestHandle:
    """One submitted request: iterate it for tokens, await result() for the whole generation."""

    def __init__(
        self,
        request_id: str,
        loop: asyncio.AbstractEventLoop,
        cancel: Callable[[str, str], None],
        *,
        stream: bool = True,
    ) -> None:
        self.id = request_id
        self.stream = stream  # False: only result() is awaited, so tokens are not handed over one by one
        self.loop = loop  # the event loop it was submitted on: push and finish run there
        self._cancel = cancel
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._result: asyncio.Future[GenerationResult] = loop.create_future()

    async def _stream(self) -> AsyncIterator[TokenEvent]:
        while True:
            item = await self._queue.get()
            if item is _DONE:
                break
            yield item
        if not self._result.cancelled():
            error = self._result.exception()
            if error is not None:
                raise error

    def __aiter__(self) -> AsyncIterator[TokenEvent]:
        if not self.stream:
            raise RuntimeError("this request was submitted with stream=False: await result() instead")
        return self._stream()

    def result(self) -> asyncio.Future[GenerationResult]:
        """Await it for the final result. Raises InferenceFailed / DeadlineExceeded; CancelledError once
        cancelled. A future rather than a coroutine, so that gathering many handles creates no tasks;
        cancelling the awaiting caller leaves the request running (cancel() stops it)."""
        return asyncio.shield(self._result)

    def admitted(self) -> asyncio.Future[None]:
        """Done once the engine has taken the request; raises its refusal (Overloaded, InputTooLong, ...). This
        engine decides within submit, so it is done at once; engine processes (replicas.py) decide later."""
        return admitted_at_submit()

    def cancel(self, reason: str = "disconnect") -> None:
        """Free this request's batch slot at the next step (no-op once finished)."""
        if not self._result.done():
            self._cancel(self.id, reason)

    # The engine's side, called on `loop` (the worker thread schedules them with call_soon_threadsafe).

    def push(self, event: TokenEvent) -> None:
        """Hand one generated token to the iterator."""
        self._queue.put_nowait(event)

    def finish(self, result: GenerationResult | BaseException | None) -> None:
        """Settle the request: a result, a failure, or None for cancelled. Later calls do nothing."""
        if self._result.done():
            return
        if result is None:
            self._result.cancel()
        elif isinstance(result, BaseException):
            self._result.set_exception(result)
            self._result.exception()  # mark retrieved: an unawaited failure is not a loop warning
        else:
            self._result.set_result(result)
        self._queue.put_nowait(_DONE)

    def finish_threadsafe(self, result: GenerationResult | BaseException | None) -> None:
        """`finish` from another thread; does nothing once the event loop is closed (nobody waits)."""
        try:
            self.loop.call_soon_threadsafe(self.finish, result)
        except RuntimeError:
            pass
