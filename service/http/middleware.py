"""Pure ASGI middleware around every HTTP request: request id, body-size limit, metrics and access log.

Pure ASGI (not BaseHTTPMiddleware) so that streaming responses and disconnect messages pass through untouched.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.engine.errors import InputTooLong, status_for
from service.http.error_handlers import error_body
from service.http.logs import request_id_var
from service.http.metrics import Metrics

logger = logging.getLogger("atento.access")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_QUIET_ROUTES = frozenset(
    {
        "/metrics",
        "/health",
        "/health/live",
        "/health/ready",
        "/v2/health/live",
        "/v2/health/ready",
        "/v2/models/{name}/ready",
    }
)  # probes: access log at debug


def _route_label(scope: Scope) -> str:
    """The matched route's template (low cardinality), or "unmatched"."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"


class RequestContextMiddleware:
    """Give each request an id (`X-Request-ID`, echoed back), enforce `max_body_bytes`, time and log it."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics, max_body_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        # uuid4-sized ids from a generator seeded once from os.urandom: uuid4 makes a system call per
        # request, and the event loop thread is the one that pays for it.
        self._request_ids = random.Random()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("x-request-id", "")
        request_id = given if _REQUEST_ID.match(given) else f"{self._request_ids.getrandbits(128):032x}"
        token = request_id_var.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500  # if the app raises before answering, the server error middleware answers 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            inner_receive = await self._limit_body(headers, receive, send_with_id)
            if inner_receive is None:
                return  # answered 413; send_with_id recorded the status
            await self.app(scope, inner_receive, send_with_id)
        finally:
            duration = time.perf_counter() - started
            route = _route_label(scope)
            self.metrics.observe_request(route=route, status=status, duration_s=duration)
            level = logging.DEBUG if route in _QUIET_ROUTES and status < 400 else logging.INFO
            logger.log(
                level,
                "%s %s %d",
                scope.get("method"),
                scope.get("path"),
                status,
                extra={
                    "method": scope.get("method"),
                    "route": route,
                    "status": status,
                    "duration_ms": round(duration * 1000, 2),
                },
            )
            request_id_var.reset(token)

    async def _limit_body(self, headers: dict[str, str], receive: Receive, send: Send) -> Receive | None:
        """Return the receive callable to use, or None after answering 413 for an oversized body.

        A declared Content-Length is checked up front; a chunked body is read (at most max_body_bytes + 1
        bytes) and replayed, so the app never sees more than the limit.
        """
        declared = headers.get("content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.max_body_bytes:
                await self._too_large(send)
                return None
            return receive
        if "chunked" not in headers.get("transfer-encoding", ""):
            return receive
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body_bytes:
                await self._too_large(send)
                return None
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replaying_receive() -> Message:
            return replay.pop() if replay else await receive()

        return replaying_receive

    async def _too_large(self, send: Send) -> int:
        """Answer as the error handler would for InputTooLong (which runs inside, too late for this)."""
        exc = InputTooLong(f"request body over the limit of {self.max_body_bytes} bytes")
        self.metrics.reject("too_long")
        payload = json.dumps(error_body(exc)).encode()
        status = status_for(exc)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
        return status
