"""Pure ASGI middleware around every HTTP request: request id, API key and content type of POST bodies,
body-size limit, metrics and access log.

Pure ASGI (not BaseHTTPMiddleware) so that streaming responses and disconnect messages pass through untouched.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.engine.errors import (
    BodyTimeout,
    HeadersTooLarge,
    InputTooLong,
    ModelNotReady,
    ServingError,
    Unauthorized,
    UnsupportedMediaType,
    status_for,
)
from service.http.auth import key_matches
from service.http.error_handlers import error_body, error_headers
from service.http.logs import request_id_var
from service.http.metrics import Metrics

logger = logging.getLogger("atento.access")

# A client's X-Request-ID is kept (logged, echoed) only when it is short and plain; anything else,
# and anything that is or holds an API key, is replaced by a fresh id.
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_JSON_TYPE = re.compile(r"^application/([a-z0-9.+-]+\+)?json\s*(;|$)")
_QUIET_ROUTES = frozenset(
    {
        "/metrics",
        "/health",
        "/health/live",
        "/health/ready",
        "/v2/health/live",
        "/v2/health/ready",
        "/v2/models/{name}/ready",
        "/v2/models/{name}/versions/{version}/ready",
    }
)  # probes: access log at debug


def _route_label(scope: Scope) -> str:
    """The matched route's template (low cardinality), or "unmatched"."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"


class RequestContextMiddleware:
    """Give each request an id (`X-Request-ID`, echoed back), enforce `max_body_bytes`, time and log it."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: Metrics,
        max_body_bytes: int,
        body_timeout_s: float = 10.0,
        request_timeout_s: float | None = None,
        api_keys: tuple[bytes, ...] = (),
        max_headers: int | None = None,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self.request_timeout_s = request_timeout_s
        self.api_keys = api_keys
        self.max_headers = max_headers
        # uuid4-sized ids from a generator seeded once from os.urandom: uuid4 makes a system call per
        # request, and the event loop thread is the one that pays for it.
        self._request_ids = random.Random()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("x-request-id", "")
        if not _REQUEST_ID.match(given) or self._holds_key(given):
            given = f"{self._request_ids.getrandbits(128):032x}"
        request_id = given
        token = request_id_var.set(request_id)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["started_at"] = time.monotonic()  # request_timeout_s counts from here (service/http/deadline.py)
        started = time.perf_counter()
        status = 500  # if the app raises before answering, the server error middleware answers 500
        started_response = False
        streaming = False
        app_state = getattr(scope.get("app"), "state", None)

        async def send_with_id(message: Message) -> None:
            nonlocal status, started_response, streaming
            if message["type"] == "http.response.start":
                status = message["status"]
                started_response = True
                message.setdefault("headers", [])
                streaming = any(
                    k == b"content-type" and v.startswith(b"text/event-stream") for k, v in message["headers"]
                )
                extra = [(b"x-request-id", request_id.encode()), (b"x-content-type-options", b"nosniff")]
                if getattr(app_state, "draining", False):
                    # No keep-alive while draining: an idle connection closed at shutdown could race the
                    # client's next request on it (which would then get no answer at all).
                    extra.append((b"connection", b"close"))
                message["headers"] = [*message["headers"], *extra]
            await send(message)

        try:
            if self.max_headers is not None and len(scope.get("headers", [])) > self.max_headers:
                await self._refuse(send_with_id, HeadersTooLarge(f"more than {self.max_headers} header fields"))
                return
            if scope.get("method") == "POST":
                # Before the body is read: a client without a key learns nothing from the body's checks,
                # and nobody makes the server read (or parse) a body it will refuse anyway.
                refusal = self._refuse_post(headers, oip=scope.get("path", "").startswith("/v2/"))
                if refusal is not None:
                    await self._refuse(send_with_id, refusal)
                    return
            inner_receive = await self._read_body(headers, receive, send_with_id, state["started_at"])
            if inner_receive is None:
                return  # answered 413 or 408; send_with_id recorded the status
            try:
                await self.app(scope, inner_receive, send_with_id)
            except asyncio.CancelledError:
                # uvicorn cancels what is still running when its shutdown timeout ends; it would answer a
                # plain-text 500. Answer as the drain does (503 JSON, Retry-After), or end an event stream
                # with an error event, and return: the task ends either way, and the client has its answer.
                if not started_response:
                    await self._refuse(send_with_id, ModelNotReady("shutting down: the request did not finish in time"))
                elif streaming:
                    event = b"data:" + json.dumps(error_body(ModelNotReady("shutting down"))).encode() + b"\n\n"
                    await send_with_id({"type": "http.response.body", "body": event, "more_body": False})
                else:
                    raise
        finally:
            duration = time.perf_counter() - started
            route = _route_label(scope)
            self.metrics.observe_request(route=route, status=status, duration_s=duration)
            quiet = (route in _QUIET_ROUTES and status < 400) or status == 429  # a 429 burst must not flood the log
            level = logging.DEBUG if quiet else logging.INFO
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

    def _holds_key(self, value: str) -> bool:
        encoded = value.encode()
        return key_matches(encoded, self.api_keys) or any(key in encoded for key in self.api_keys if key)

    def _refuse_post(self, headers: dict[str, str], *, oip: bool = False) -> ServingError | None:
        """The error a POST gets before its body is read: no or a wrong API key (401), not JSON (415).

        Open Inference Protocol bodies (oip: /v2/...) are exempt from the content type: its clients send
        none (tritonclient), or binary tensors after the JSON (service/http/oip_tensors.py checks them).
        """
        if self.api_keys:
            scheme, _, credential = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not credential.strip():
                return Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
            if not key_matches(credential.strip().encode("utf-8"), self.api_keys):
                return Unauthorized("invalid API key")
        content_type = headers.get("content-type", "")
        if not oip and not _JSON_TYPE.match(content_type.strip().lower()):
            return UnsupportedMediaType(
                f"request bodies are JSON: send 'Content-Type: application/json', not {content_type[:80]!r}"
            )
        return None

    async def _read_body(
        self, headers: dict[str, str], receive: Receive, send: Send, started_at: float
    ) -> Receive | None:
        """Read the request body here and return a receive callable that replays it, or None after answering
        (413 for a body over max_body_bytes, 408 for one that stops arriving).

        A declared Content-Length is checked before anything is read; a chunked body is read up to
        max_body_bytes + 1 bytes. Each part must arrive within body_timeout_s of the one before, and the
        whole body within the request's own timeout: a client that declares a body and never sends it would
        otherwise hold its connection and its request open for as long as it liked.
        """
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(send)
            return None
        if declared is None and "chunked" not in headers.get("transfer-encoding", ""):
            return receive  # no body
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                async with asyncio.timeout(self._body_wait_s(started_at)):
                    message = await receive()
            except TimeoutError:
                await self._refuse(send, BodyTimeout(self._body_timeout_message()))
                return None
            if message["type"] != "http.request":  # the client went away: the app sees it and counts a 499
                return _replaying([message], receive)
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body_bytes:
                await self._too_large(send)
                return None
            if not message.get("more_body", False):
                break
        return _replaying([{"type": "http.request", "body": b"".join(chunks), "more_body": False}], receive)

    def _body_wait_s(self, started_at: float) -> float:
        """How long the next part of a body may take: body_timeout_s, and no longer than the request's deadline."""
        if self.request_timeout_s is None:
            return self.body_timeout_s
        return max(0.0, min(self.body_timeout_s, started_at + self.request_timeout_s - time.monotonic()))

    def _body_timeout_message(self) -> str:
        limit = f"{self.body_timeout_s:g} s between its parts"
        if self.request_timeout_s is not None:
            limit += f", {self.request_timeout_s:g} s in all"
        return f"the request body did not arrive in time ({limit})"

    async def _too_large(self, send: Send) -> int:
        """Answer as the error handler would for InputTooLong (which runs inside, too late for this)."""
        return await self._refuse(send, InputTooLong(f"request body over the limit of {self.max_body_bytes} bytes"))

    async def _refuse(self, send: Send, exc: ServingError) -> int:
        """Answer as the error handler would (it runs inside, too late for these), closing the connection:
        the body was not read, so the connection cannot carry another request."""
        if not isinstance(exc, ModelNotReady):  # a cut-off request is not a rejection
            reason = {InputTooLong: "too_long", Unauthorized: "unauthorized", BodyTimeout: "body_timeout"}.get(
                type(exc), "invalid"
            )
            self.metrics.reject(reason)
        payload = json.dumps(error_body(exc)).encode()
        status = status_for(exc)
        extra = [(k.lower().encode(), v.encode()) for k, v in error_headers(exc).items()]
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
        return status


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """A receive callable that hands out `messages` first, then whatever `receive` gets (a later disconnect)."""
    replay = list(reversed(messages))

    async def replaying_receive() -> Message:
        return replay.pop() if replay else await receive()

    return replaying_receive
