"""uvicorn's h11 protocol with a deadline on the request head: `bounded_h11(settings.server)`.

uvicorn closes idle keep-alive connections (timeout_keep_alive) and bounds the head's size
(h11_max_incomplete_event_size), but waits forever for a connection that never sends a request or sends
its head a byte at a time (slowloris); this protocol closes those after `header_timeout_s`. No app code.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.http.settings import ServerSettings

# Probes and scrapes answer whatever limit_concurrency says: a replica held at its connection limit is
# busy, not dead, and a liveness probe refused 503 would get it restarted (issue 20).
_EXEMPT_REQUEST_LINES = (b"GET /health", b"GET /v2/health/", b"GET /metrics ", b"GET /metrics?")


class HeadTimeoutH11Protocol(H11Protocol):
    """H11Protocol that closes a connection whose request head is not complete within `header_timeout_s`,
    and lets health probes and metrics scrapes past limit_concurrency."""

    header_timeout_s = 10.0  # set per server by bounded_h11

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._limit = self.limit_concurrency
        self._watch_head()

    def data_received(self, data: bytes) -> None:
        # uvicorn checks limit_concurrency when this data completes a request head; the request line is
        # at the start of the data that begins a request.
        self.limit_concurrency = None if data.startswith(_EXEMPT_REQUEST_LINES) else self._limit
        super().data_received(data)
        self._watch_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        # uvicorn arms its keep-alive timer for the idle time that follows; the head deadline starts again
        # with the next request's first byte (data_received).
        self._stop_head_timer()
        super().on_response_complete()

    def _watch_head(self) -> None:
        """Arm the deadline while the client owes us a request head; disarm it once the head is in."""
        waiting = self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE
        if waiting and self._head_timer is None and not self.transport.is_closing():
            # On the first request only uvicorn has no timer of its own (its keep-alive timer starts after
            # a response); on later ones the keep-alive timer was cancelled by this data's arrival.
            self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_timed_out)
        elif not waiting:
            self._stop_head_timer()

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.logger.debug("closing a connection whose request head took over %ss", self.header_timeout_s)
            self.transport.close()


def bounded_h11(settings: ServerSettings) -> type[H11Protocol]:
    """The protocol class for uvicorn.Config(http=...) with this server's head deadline."""
    return type("BoundedH11Protocol", (HeadTimeoutH11Protocol,), {"header_timeout_s": settings.header_timeout_s})
