"""Cancel engine work when the HTTP client goes away: for awaited results and for event streams.

Watches the ASGI `receive` channel for `http.disconnect` next to the work; no engine internals here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from service.engine import GenerationHandle, GenerationResult
from service.http.error_handlers import ClientDisconnected

logger = logging.getLogger("atento.http")


async def wait_for_disconnect(receive: Receive) -> None:
    """Return once the client has disconnected (the request body must already be consumed)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def results_or_disconnect(handles: Sequence[GenerationHandle], receive: Receive) -> list[GenerationResult]:
    """Await every handle's result; cancel them all when the client disconnects or one of them fails.

    Raises:
        ClientDisconnected: the client went away first (each handle was cancelled with "disconnect").
        ServingError: from the first handle that failed (DeadlineExceeded, InferenceFailed).
    """
    # One input per HTTP call is the common case: its result is awaited as it is, without a gather.
    single = len(handles) == 1
    gathered: asyncio.Future[GenerationResult] | asyncio.Future[list[GenerationResult]] = (
        asyncio.ensure_future(handles[0].result())
        if single
        else asyncio.gather(*(handle.result() for handle in handles))
    )
    watcher = asyncio.ensure_future(wait_for_disconnect(receive))
    try:
        done, _ = await asyncio.wait({gathered, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if gathered in done:
            outcome = gathered.result()
            return list(outcome) if isinstance(outcome, list) else [outcome]
        for handle in handles:
            handle.cancel("disconnect")
        raise ClientDisconnected()
    except BaseException:
        for handle in handles:  # a sibling failed, or we were cancelled: nobody will read the others
            handle.cancel("disconnect")
        gathered.cancel()
        with contextlib.suppress(BaseException):
            await gathered
        raise
    finally:
        watcher.cancel()


class EventStreamResponse(Response):
    """Server-Sent Events from an async iterator; calls `on_disconnect` when the client goes away.

    Unlike StreamingResponse it tells its owner about the disconnect (to cancel the engine request at
    the next decoding step) while waiting for the next token, not only when a write fails.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        events: AsyncIterator[bytes],
        *,
        on_disconnect: Callable[[], None],
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(content=None, status_code=200, headers=headers, media_type=self.media_type)
        # Response sets "content-length: 0" for an empty body; a stream has no length.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.events = events
        self.on_disconnect = on_disconnect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        pump = asyncio.ensure_future(self._pump(send))
        watcher = asyncio.ensure_future(wait_for_disconnect(receive))
        try:
            done, _ = await asyncio.wait({pump, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if pump in done:
                if isinstance(pump.exception(), OSError):  # the write failed: the client is gone
                    self.on_disconnect()
                    return
                pump.result()
                return
            self.on_disconnect()
        finally:
            watcher.cancel()
            if not pump.done():
                pump.cancel()
                with contextlib.suppress(BaseException):
                    await pump
            aclose: Any = getattr(self.events, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()

    async def _pump(self, send: Send) -> None:
        async for chunk in self.events:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
