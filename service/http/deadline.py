"""The whole-request deadline (`request_timeout_s`) and response building off the event loop.

A request's deadline counts from the moment the middleware saw it (service/http/middleware.py), and
covers the engine's work and the response's serialization alike: a 1 s timeout never answers 200 after
10 s. Bodies proportional to a request's size (attention, long lists) are built and serialized in a
worker thread, so that no response holds up the probes or the other clients on the event loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.requests import Request

from service.engine.errors import DeadlineExceeded
from service.http.settings import ServiceSettings

T = TypeVar("T")
# The engine's deadline (the same instant: routes pass `remaining_s` as the engine's timeout_s) fails the
# request at its next step, counted as a "deadline" cancellation; this bound, a moment later, catches what
# the engine cannot see (serialization, a step that overruns).
_AFTER_ENGINE_S = 0.25


def remaining_s(request: Request, settings: ServiceSettings) -> float | None:
    """Seconds left of this request's `request_timeout_s` (never below 0), or None without a timeout."""
    if settings.request_timeout_s is None:
        return None
    started: float = request.scope.get("state", {}).get("started_at", time.monotonic())
    return max(0.0, started + settings.request_timeout_s - time.monotonic())


def engine_timeout_s(request: Request, settings: ServiceSettings) -> float | None:
    """The engine's timeout_s for this request: what is left of its deadline.

    Raises:
        DeadlineExceeded: nothing is left (the body took the whole timeout to arrive).
    """
    left = remaining_s(request, settings)
    if left is not None and left <= 0:
        raise DeadlineExceeded(f"the request passed its deadline (request_timeout_s={settings.request_timeout_s})")
    return left


async def within_deadline(request: Request, settings: ServiceSettings, work: Awaitable[T]) -> T:
    """Await `work`, raising DeadlineExceeded (504) once the request's deadline has passed.

    Cancelling `work` on the deadline cancels its engine requests (results_or_disconnect does) and
    abandons any serialization still running in its thread: the client gets the 504 on time.
    """
    left = remaining_s(request, settings)
    if left is None:
        return await work
    try:
        return await asyncio.wait_for(work, timeout=left + _AFTER_ENGINE_S)
    except asyncio.TimeoutError:  # TimeoutError's alias before Python 3.11
        timeout = settings.request_timeout_s
        raise DeadlineExceeded(f"the request passed its deadline (request_timeout_s={timeout})") from None


def dump_json(content: Any) -> bytes:
    """Serialize as Starlette's JSONResponse does (compact, UTF-8, no NaN)."""
    return _dumps(content).encode()


def _dumps(content: Any) -> str:
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))


class _ChunkedJson:
    """JSON text written piece by piece, letting the event loop's thread have the GIL every few ms.

    One json.dumps of a 30 MB body is a single C call that holds the GIL for a second: from a worker
    thread it still stalls the event loop (probes, other clients) that long. Nested lists are written
    element by element instead, each a short json.dumps, with a pause (which releases the GIL) whenever
    the last one was more than _SLICE_S ago.
    """

    _SLICE_S = 0.002

    def __init__(self) -> None:
        self.parts: list[str] = []
        self._since = time.perf_counter()

    def write(self, value: Any) -> None:
        if isinstance(value, dict):
            self.parts.append("{")
            for index, (key, item) in enumerate(value.items()):
                self.parts.append(("," if index else "") + _dumps(str(key)) + ":")
                self.write(item)
            self.parts.append("}")
        elif isinstance(value, list) and value and isinstance(value[0], (list, dict)):
            self.parts.append("[")
            for index, item in enumerate(value):
                if index:
                    self.parts.append(",")
                self.write(item)
            self.parts.append("]")
        else:
            self.parts.append(_dumps(value))
            if time.perf_counter() - self._since > self._SLICE_S:
                time.sleep(0)  # releases the GIL: the event loop's thread runs now if it is waiting
                self._since = time.perf_counter()


def dump_json_yielding(content: Any) -> bytes:
    """dump_json's bytes, written so that the thread that runs it never holds the GIL for long."""
    writer = _ChunkedJson()
    writer.write(content)
    return "".join(writer.parts).encode()


async def render_json(build: Callable[[], Any], *, offload: bool) -> bytes:
    """Build a body and serialize it, in a worker thread when `offload` (a large body), else inline
    (a small one: the thread hop would cost more than the work)."""
    if not offload:
        return dump_json(build())
    return await asyncio.to_thread(lambda: dump_json_yielding(build()))
