"""What crosses between the serving process and an engine process (replicas.py, replica_process.py).

Each frame is a 4-byte length and a pickle of (the engine process's EngineStats as a tuple, [messages]); each side
gathers what one event loop turn has to say into one frame (Outbox). Results cross as tuples, errors by name with
their keyword-only fields.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import pickle
import struct
import uuid
from collections.abc import Callable
from typing import Any

from service.engine.errors import (
    DeadlineExceeded,
    InferenceFailed,
    InputTooLong,
    InvalidInput,
    ModelNotReady,
    Overloaded,
    ServingError,
)
from service.engine.types import GenerationResult, TokenEvent

logger = logging.getLogger(__name__)

_FRAME_HEADER = struct.Struct("!I")
# What a refusal or failure is called on the wire; any other error crosses as InferenceFailed.
_RELAYED_ERRORS: dict[str, type[ServingError]] = {
    error.__name__: error
    for error in (InvalidInput, InputTooLong, Overloaded, ModelNotReady, DeadlineExceeded, InferenceFailed)
}


def packed_error(error: BaseException) -> tuple[str, str, dict[str, Any]]:
    """An error as (class name, message, keyword arguments): exceptions with keyword-only fields do not pickle."""
    if isinstance(error, Overloaded):
        return "Overloaded", error.message, {"retry_after_s": error.retry_after_s}
    if isinstance(error, InferenceFailed):
        return "InferenceFailed", error.message, {"error_id": error.error_id}
    if isinstance(error, ServingError) and type(error).__name__ in _RELAYED_ERRORS:
        return type(error).__name__, error.message, {}
    error_id = uuid.uuid4().hex[:12]
    logger.error("engine process error error_id=%s", error_id, exc_info=error)
    return "InferenceFailed", f"inference failed (error_id={error_id})", {"error_id": error_id}


def unpacked_error(packed: tuple[str, str, dict[str, Any]]) -> ServingError:
    name, message, keywords = packed
    return _RELAYED_ERRORS[name](message, **keywords)


# A result crosses as tuples: pickling its TokenEvent and GenerationResult dataclasses cost about 20 times more.
def packed_result(result: GenerationResult) -> tuple[Any, ...]:
    return (
        result.text,
        result.token_ids,
        [(e.id, e.text, e.logprob, e.special) for e in result.tokens],
        result.finish_reason,
        result.input_token_ids,
        result.seed,
        result.attention,
        result.edit_guard,
    )


def unpacked_result(packed: tuple[Any, ...]) -> GenerationResult:
    text, token_ids, events, reason, input_ids, seed, attention, guard = packed
    return GenerationResult(
        text, token_ids, [TokenEvent(*event) for event in events], reason, input_ids, seed, attention, guard
    )


def frame(stats: tuple[int, int, int], messages: list[tuple[Any, ...]]) -> bytes:
    payload = pickle.dumps((stats, messages), protocol=pickle.HIGHEST_PROTOCOL)
    return _FRAME_HEADER.pack(len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader) -> tuple[tuple[int, int, int], list[tuple[Any, ...]]]:
    """The next frame; raises asyncio.IncompleteReadError once the other side has gone."""
    (size,) = _FRAME_HEADER.unpack(await reader.readexactly(_FRAME_HEADER.size))
    frame: tuple[tuple[int, int, int], list[tuple[Any, ...]]] = pickle.loads(await reader.readexactly(size))
    return frame


class Outbox:
    """Messages for the other side, sent as one frame at the end of the event loop turn that queued the first.
    Metrics hooks and log records, queued from any thread, wait for the next frame or the periodic flush."""

    def __init__(self, writer: asyncio.StreamWriter, stats: Callable[[], tuple[int, int, int]]) -> None:
        self._writer = writer
        self._stats = stats
        self._messages: list[tuple[Any, ...]] = []
        self._flush_scheduled = False
        self.sent_stats = (0, 0, 0)  # the stats of the latest frame
        self.from_threads: collections.deque[tuple[Any, ...]] = collections.deque()  # appended from any thread

    def send(self, message: tuple[Any, ...]) -> None:
        self._messages.append(message)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self, *, even_empty: bool = False) -> None:
        self._flush_scheduled = False
        messages, self._messages = self._messages, []
        while self.from_threads:
            messages.append(self.from_threads.popleft())
        if (messages or even_empty) and not self._writer.is_closing():
            self.sent_stats = self._stats()
            self._writer.write(frame(self.sent_stats, messages))

    async def drain(self) -> None:
        self.flush()
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()
