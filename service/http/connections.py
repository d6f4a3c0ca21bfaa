"""uvicorn's h11 protocol with deadlines on the request head and on a stalled response:
`bounded_h11(settings.server)`.

uvicorn closes idle keep-alive connections (timeout_keep_alive) and bounds the head's size
(h11_max_incomplete_event_size), but waits forever for a connection that never sends a request or sends
its head a byte at a time (slowloris), and for a client that stops reading its response (what the kernel's
buffers cannot take stays in memory, the connection open and, for an event stream, its request in flight,
for as long as the client likes). This
protocol closes the first after `header_timeout_s` and aborts the second after `send_timeout_s`. No app code.
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
    aborts one whose client has read nothing of its response for `send_timeout_s`, and lets health probes
    and metrics scrapes past limit_concurrency."""

    header_timeout_s = 10.0  # set per server by bounded_h11
    send_timeout_s = 30.0

    _head_timer: asyncio.TimerHandle | None = None
    _send_timer: asyncio.TimerHandle | None = None

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
        self._stop_send_timer()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        # The transport's buffer is full: the client has stopped reading (the kernel's buffers are full
        # too). The response's sender waits in uvicorn's flow control; this bounds how long.
        super().pause_writing()
        if self._send_timer is None and not self.transport.is_closing():
            self._send_timer = self.loop.call_later(self.send_timeout_s, self._send_timed_out)

    def resume_writing(self) -> None:
        self._stop_send_timer()
        super().resume_writing()

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

    def _stop_send_timer(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_timed_out(self) -> None:
        """Abort (reset, not a polite close that would wait for the unread bytes): connection_lost then
        tells the app the client is gone, and its request ends and lets its response go."""
        self._send_timer = None
        if not self.transport.is_closing():
            self.logger.info("aborting a connection whose client read nothing for %ss", self.send_timeout_s)
            self.transport.abort()

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.logger.debug("closing a connection whose request head took over %ss", self.header_timeout_s)
            self.transport.close()


def bounded_h11(settings: ServerSettings) -> type[H11Protocol]:
    """The protocol class for uvicorn.Config(http=...) with this server's head and send deadlines."""
    deadlines = {"header_timeout_s": settings.header_timeout_s, "send_timeout_s": settings.send_timeout_s}
    return type("BoundedH11Protocol", (HeadTimeoutH11Protocol,), deadlines)
