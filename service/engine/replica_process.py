"""An engine process's side (BatchingSettings.processes): one Engine in a spawned process, serving the requests the
serving process (replicas.py) sends over its socket, and sending back tokens, results, metrics hooks and logs.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import signal
import socket
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.engine.client import LONG_INPUT_CHARS, GenerationHandle
from service.engine.collector import collect_less_often
from service.engine.engine import Engine
from service.engine.replica_wire import Outbox, packed_error, packed_result, read_frame
from service.engine.settings import BatchingSettings, RuntimeSettings
from service.engine.types import AttentionSpec, GenerationParams, GenerationResult

_FLUSH_INTERVAL_S = 0.05  # how often an engine process sends metrics hooks and log records that nothing else carried
STOP_MARGIN_S = 35.0  # beyond stop's timeout: Engine.stop waits up to 30 s for a step in progress


@dataclass(frozen=True)
class ReplicaRecipe:
    """What an engine process needs to build its engine: the engine's arguments with this process's share of
    the batching limits and of the cores, and the serving process's log level."""

    model_dir: Path
    variant: str | None
    device: str
    runtime: RuntimeSettings
    batching: BatchingSettings
    edit_guard: bool
    log_level: int


class _RelayedObserver:
    """The engine process's metrics hooks: each call crosses to the serving process's observer, while the serving
    process has one that is not NoObserver (told by a "watch" message; relaying unwatched hooks cost about 5% of
    the CPU a short request takes)."""

    def __init__(self, outbox: collections.deque[tuple[Any, ...]]) -> None:
        self._outbox = outbox
        self.watched = False

    def _relay(self, hook: str, *arguments: Any) -> None:
        if self.watched:
            self._outbox.append(("observe", hook, arguments))

    def on_step(self, batch_size: int, duration_s: float) -> None:
        self._relay("on_step", batch_size, duration_s)

    def on_queue_wait(self, seconds: float) -> None:
        self._relay("on_queue_wait", seconds)

    def on_first_token(self, seconds: float) -> None:
        self._relay("on_first_token", seconds)

    def on_token(self, seconds_since_previous: float) -> None:
        self._relay("on_token", seconds_since_previous)

    def on_finish(self, input_tokens: int, generated_tokens: int) -> None:
        self._relay("on_finish", input_tokens, generated_tokens)

    def on_cancel(self, reason: str) -> None:
        self._relay("on_cancel", reason)

    def on_edit_guard_reverted(self, spans: int) -> None:
        self._relay("on_edit_guard_reverted", spans)


class _RelayedLogs(logging.Handler):
    """The engine process's log records, sent to the serving process's handlers (its format, its stream)."""

    _PLAIN = (str, int, float, bool, type(None))

    def __init__(self, outbox: collections.deque[tuple[Any, ...]], process: int) -> None:
        super().__init__()
        self._outbox = outbox
        self._process = process

    def emit(self, record: logging.LogRecord) -> None:
        fields = {key: value for key, value in vars(record).items() if isinstance(value, self._PLAIN)}
        fields.update(msg=record.getMessage(), args=None, engine_process=self._process)
        if record.exc_info:
            fields["exc_text"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        self._outbox.append(("log", fields))


def serve_replica(recipe: ReplicaRecipe, connection: socket.socket, number: int) -> None:
    """An engine process's body (multiprocessing's target): run one Engine for the serving process until it
    says stop or goes away. Signals are the serving process's to handle: it stops this one when it drains."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    collect_less_often()
    asyncio.run(_ReplicaServer(recipe, number).serve(connection))


class _ReplicaServer:
    def __init__(self, recipe: ReplicaRecipe, number: int) -> None:
        self._recipe = recipe
        self._number = number
        self._handles: dict[str, GenerationHandle] = {}
        self._preparing: set[str] = set()  # long inputs tokenized in a thread before their submit
        self._cancelled_early: set[str] = set()  # of those, the ones cancelled meanwhile
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = asyncio.Event()

    async def serve(self, connection: socket.socket) -> None:
        reader, writer = await asyncio.open_unix_connection(sock=connection)
        outbox = self._outbox = Outbox(writer, self._stats)
        root = logging.getLogger()
        root.handlers[:] = [_RelayedLogs(outbox.from_threads, self._number)]
        root.setLevel(self._recipe.log_level)
        recipe = self._recipe
        self._observer = _RelayedObserver(outbox.from_threads)
        engine = self._engine = Engine(
            recipe.model_dir,
            variant=recipe.variant,
            device=recipe.device,
            runtime=recipe.runtime,
            batching=recipe.batching,
            observer=self._observer,
            edit_guard=recipe.edit_guard,
        )
        try:
            await engine.start()
        except Exception as error:
            outbox.send(("load failed", type(error).__name__, str(error)))
            await outbox.drain()
            return
        outbox.send(("ready", engine.info))
        loop = asyncio.get_running_loop()
        ticker = loop.create_task(self._tick())
        reading = loop.create_task(self._read(reader))
        stopped = loop.create_task(self._stopped.wait())
        await asyncio.wait({reading, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if not self._stopped.is_set():  # the serving process is gone: nobody waits for these requests
            await engine.stop(drain=False, timeout_s=0.0)
        for task in (ticker, reading, stopped):
            task.cancel()
        await outbox.drain()
        writer.close()
        with contextlib.suppress(Exception):  # its last frames sent before the process ends
            await asyncio.wait_for(writer.wait_closed(), STOP_MARGIN_S)

    def _stats(self) -> tuple[int, int, int]:
        stats = self._engine.stats()
        return stats.queue_depth, stats.running_sequences, stats.running_requests

    async def _tick(self) -> None:
        """Send the metrics hooks and log records queued by the engine's threads, and stats that changed."""
        while True:
            await asyncio.sleep(_FLUSH_INTERVAL_S)
            if self._outbox.from_threads or self._stats() != self._outbox.sent_stats:
                self._outbox.flush(even_empty=True)

    async def _read(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                _, messages = await read_frame(reader)
                for message in messages:
                    self._on_message(message)

    def _on_message(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "submit":
            _, request_id, text, params, attention, forced_target, stream = message
            if isinstance(text, str) and len(text) >= LONG_INPUT_CHARS:
                self._preparing.add(request_id)
                self._spawn(self._submit_prepared(request_id, text, params, attention, forced_target, stream))
            else:
                self._submit(request_id, text, params, attention, forced_target, stream)
        elif kind == "cancel":
            _, request_id, reason = message
            handle = self._handles.get(request_id)
            if handle is not None:
                handle.cancel(reason)
            elif request_id in self._preparing:
                self._cancelled_early.add(request_id)
        elif kind == "stop":
            _, drain, timeout_s = message
            self._spawn(self._stop(drain=drain, timeout_s=timeout_s))
        elif kind == "watch":
            self._observer.watched = message[1]

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _submit_prepared(
        self,
        request_id: str,
        text: str,
        params: GenerationParams,
        attention: AttentionSpec | None,
        forced_target: str | None,
        stream: bool,
    ) -> None:
        """A long input: its tokenizing and segmentation off this loop first (Engine.prepare), then its submit."""
        with contextlib.suppress(Exception):  # submit raises whatever prepare would have
            await asyncio.to_thread(self._engine.prepare, text)
        self._preparing.discard(request_id)
        if request_id in self._cancelled_early:
            self._cancelled_early.discard(request_id)
            self._outbox.send(("cancelled", request_id))
            return
        self._submit(request_id, text, params, attention, forced_target, stream)

    def _submit(
        self,
        request_id: str,
        text: str,
        params: GenerationParams,
        attention: AttentionSpec | None,
        forced_target: str | None,
        stream: bool,
    ) -> None:
        try:
            handle = self._engine.submit(text, params, attention=attention, forced_target=forced_target, stream=stream)
        except Exception as error:  # a refusal (ServingError); anything else is logged and sent as InferenceFailed
            self._outbox.send(("refused", request_id, packed_error(error)))
            return
        self._handles[request_id] = handle
        self._outbox.send(("admitted", request_id))
        if stream:
            self._spawn(self._relay_tokens(request_id, handle))
        else:
            handle.result().add_done_callback(functools.partial(self._settled, request_id))

    async def _relay_tokens(self, request_id: str, handle: GenerationHandle) -> None:
        settled = handle.result()
        with contextlib.suppress(Exception):  # a failure ends the stream; the result carries it
            async for event in handle:
                self._outbox.send(("token", request_id, (event.id, event.text, event.logprob, event.special)))
        await asyncio.wait({settled})
        self._settled(request_id, settled)

    def _settled(self, request_id: str, result: asyncio.Future[GenerationResult]) -> None:
        self._handles.pop(request_id, None)
        if result.cancelled():
            self._outbox.send(("cancelled", request_id))
            return
        error = result.exception()
        if error is not None:
            self._outbox.send(("failed", request_id, packed_error(error)))
        else:
            self._outbox.send(("done", request_id, packed_result(result.result())))

    async def _stop(self, *, drain: bool, timeout_s: float) -> None:
        await self._engine.stop(drain=drain, timeout_s=timeout_s)
        # The engine has failed what was left (ModelNotReady) through this loop's callbacks: let them run.
        for _ in range(100):
            if not self._handles and not self._preparing:
                break
            await asyncio.sleep(0.01)
        self._stopped.set()
