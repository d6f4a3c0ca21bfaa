"""Engine processes (BatchingSettings.processes): whole engines, each in a process of its own, behind one client.

Two lanes in one process share one GIL: on two cores each lane's thread waited for it a third of the time (its own
Python, the other lane's and the event loop's) and the process kept 1.65 cores busy. Splitting one engine at its
executor (a lane's graphs in a child) relayed every step and gained nothing; two independent engines in two
processes served 784-825 requests/s where two lanes in one served 599-670 (BENCHMARKS.md, issue 23). So here a
request crosses once each way: its text and parameters go to one engine process, which does all of its work
(tokenizing, segmentation, scheduling, the graphs, the edit guard, case restoring), and its tokens and result
come back. The serving process keeps the HTTP side and this router: each request goes to the process with
the fewest requests in flight.

The wire: a Unix socket pair per engine process; each frame is a 4-byte length and a pickle of
(the process's EngineStats as a tuple, [messages]). Both sides gather what one event loop turn has to say into
one frame. The engine's metrics hooks and log records ride along, so /metrics and the logs are the same as with
one process. An engine process that dies fails its requests (InferenceFailed) and is started again; the others
keep serving meanwhile.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import functools
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import socket
import struct
import traceback
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.engine.client import LONG_INPUT_CHARS, EngineClient, GenerationHandle
from service.engine.engine import Engine, model_tokenizers
from service.engine.errors import (
    DeadlineExceeded,
    InferenceFailed,
    InputTooLong,
    InvalidInput,
    ModelLoadError,
    ModelNotReady,
    Overloaded,
    ServingError,
)
from service.engine.handle import RequestHandle
from service.engine.model_dir import load_model_directory
from service.engine.observer import EngineObserver, NoObserver
from service.engine.runner import runs_on_cpu
from service.engine.settings import BatchingSettings, RuntimeSettings
from service.engine.text_cache import TextMemo
from service.engine.types import AttentionSpec, EngineStats, GenerationParams, GenerationResult, ModelInfo, TokenEvent

logger = logging.getLogger(__name__)

_FRAME_HEADER = struct.Struct("!I")
_FLUSH_INTERVAL_S = 0.05  # how often an engine process sends metrics hooks and log records that nothing else carried
_STOP_MARGIN_S = 35.0  # beyond stop's timeout: Engine.stop waits up to 30 s for a step in progress
_RESTART_DELAY_S = 1.0  # before starting again an engine process that died (and between failed starts)
_OBSERVER_HOOKS = frozenset(
    {"on_step", "on_queue_wait", "on_first_token", "on_token", "on_finish", "on_cancel", "on_edit_guard_reverted"}
)
# What a refusal or failure is called on the wire; any other error crosses as InferenceFailed.
_RELAYED_ERRORS: dict[str, type[ServingError]] = {
    error.__name__: error
    for error in (InvalidInput, InputTooLong, Overloaded, ModelNotReady, DeadlineExceeded, InferenceFailed)
}


def build_engine(
    model_dir: Path,
    *,
    variant: str | None = None,
    device: str = "cpu",
    runtime: RuntimeSettings | None = None,
    batching: BatchingSettings | None = None,
    observer: EngineObserver | None = None,
    edit_guard: bool = True,
) -> EngineClient:
    """The engine the settings ask for: one in this process, or `batching.processes` engine processes."""
    batching = batching or BatchingSettings()
    kind: Callable[..., EngineClient] = ReplicatedEngine if batching.processes > 1 else Engine
    return kind(
        model_dir,
        variant=variant,
        device=device,
        runtime=runtime,
        batching=batching,
        observer=observer,
        edit_guard=edit_guard,
    )


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


def replica_recipe(
    model_dir: Path,
    *,
    variant: str | None,
    device: str,
    runtime: RuntimeSettings,
    batching: BatchingSettings,
    edit_guard: bool,
) -> ReplicaRecipe:
    """Each process's recipe: its share of the limits, and of the cores unless intra_op_threads says."""
    if runtime.intra_op_threads == 0 and runs_on_cpu(device):
        cores = len(os.sched_getaffinity(0))
        runtime = runtime.model_copy(update={"intra_op_threads": max(1, cores // batching.processes)})
    return ReplicaRecipe(
        model_dir=Path(model_dir),
        variant=variant,
        device=device,
        runtime=runtime,
        batching=batching.process_share(),
        edit_guard=edit_guard,
        log_level=logging.getLogger().getEffectiveLevel(),
    )


# ---- the wire ----


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


def _frame(stats: tuple[int, int, int], messages: list[tuple[Any, ...]]) -> bytes:
    payload = pickle.dumps((stats, messages), protocol=pickle.HIGHEST_PROTOCOL)
    return _FRAME_HEADER.pack(len(payload)) + payload


async def _read_frame(reader: asyncio.StreamReader) -> tuple[tuple[int, int, int], list[tuple[Any, ...]]]:
    """The next frame; raises asyncio.IncompleteReadError once the other side has gone."""
    (size,) = _FRAME_HEADER.unpack(await reader.readexactly(_FRAME_HEADER.size))
    frame: tuple[tuple[int, int, int], list[tuple[Any, ...]]] = pickle.loads(await reader.readexactly(size))
    return frame


class _Outbox:
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
            self._writer.write(_frame(self.sent_stats, messages))

    async def drain(self) -> None:
        self.flush()
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()


# ---- the engine process ----


class _RelayedObserver:
    """The engine process's metrics hooks: each call crosses to the serving process's observer, while the serving
    process has one that is not NoObserver (told by a "watch" message; relaying unwatched hooks cost about 5% of
    the CPU a short request takes)."""

    def __init__(self, outbox: collections.deque[tuple[Any, ...]]) -> None:
        self._outbox = outbox
        self.watched = False

    def on_step(self, batch_size: int, duration_s: float) -> None:
        if self.watched:
            self._outbox.append(("observe", "on_step", (batch_size, duration_s)))

    def on_queue_wait(self, seconds: float) -> None:
        if self.watched:
            self._outbox.append(("observe", "on_queue_wait", (seconds,)))

    def on_first_token(self, seconds: float) -> None:
        if self.watched:
            self._outbox.append(("observe", "on_first_token", (seconds,)))

    def on_token(self, seconds_since_previous: float) -> None:
        if self.watched:
            self._outbox.append(("observe", "on_token", (seconds_since_previous,)))

    def on_finish(self, input_tokens: int, generated_tokens: int) -> None:
        if self.watched:
            self._outbox.append(("observe", "on_finish", (input_tokens, generated_tokens)))

    def on_cancel(self, reason: str) -> None:
        if self.watched:
            self._outbox.append(("observe", "on_cancel", (reason,)))

    def on_edit_guard_reverted(self, spans: int) -> None:
        if self.watched:
            self._outbox.append(("observe", "on_edit_guard_reverted", (spans,)))


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
    asyncio.run(_ReplicaServer(recipe, number).serve(connection))


class _ReplicaServer:
    def __init__(self, recipe: ReplicaRecipe, number: int) -> None:
        self._recipe = recipe
        self._number = number
        self._handles: dict[str, GenerationHandle] = {}
        self._preparing: set[str] = set()  # long inputs tokenized in a thread before their submit
        self._cancelled_early: dict[str, str] = {}  # of those, the ones cancelled meanwhile, and why
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = asyncio.Event()

    async def serve(self, connection: socket.socket) -> None:
        reader, writer = await asyncio.open_unix_connection(sock=connection)
        outbox = self._outbox = _Outbox(writer, self._stats)
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
            await asyncio.wait_for(writer.wait_closed(), _STOP_MARGIN_S)

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
                _, messages = await _read_frame(reader)
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
                self._cancelled_early[request_id] = reason
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
            self._cancelled_early.pop(request_id)
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


# ---- the serving process ----


def _kill_if_running(process: Any) -> None:
    """SIGKILL a started engine process that has not exited (its SIGTERM is ignored)."""
    if process is not None and process.pid is not None and process.exitcode is None:
        with contextlib.suppress(ProcessLookupError, OSError):
            process.kill()


class _RelayedHandle(RequestHandle):
    """A request in an engine process, as its caller sees it: admitted, refused, tokens, result."""

    def __init__(
        self, request_id: str, loop: asyncio.AbstractEventLoop, cancel: Callable[[str, str], None], *, stream: bool
    ) -> None:
        super().__init__(request_id, loop, cancel, stream=stream)
        self._admission: asyncio.Future[None] = loop.create_future()

    def admitted(self) -> asyncio.Future[None]:
        return asyncio.shield(self._admission)

    def admit(self) -> None:
        if not self._admission.done():
            self._admission.set_result(None)

    def finish(self, result: GenerationResult | BaseException | None) -> None:
        if not self._admission.done():  # refused, or settled before its admission arrived (a process that died)
            if isinstance(result, BaseException):
                self._admission.set_exception(result)
                self._admission.exception()  # retrieved: a refused stream's caller awaits the result instead
            elif result is None:
                self._admission.cancel()
            else:
                self._admission.set_result(None)
        super().finish(result)


class _ReplicaLink:
    """The serving process's side of one engine process: its process, its socket, its requests in flight."""

    def __init__(self, number: int, recipe: ReplicaRecipe, engine: ReplicatedEngine) -> None:
        self.number = number
        self._recipe = recipe
        self._engine = engine
        self.handles: dict[str, _RelayedHandle] = {}
        self.stats: tuple[int, int, int] = (0, 0, 0)
        self.alive = False
        self.stopping = False
        self.closed = asyncio.Event()
        self.info: ModelInfo | None = None
        self._process: Any = None  # multiprocessing's SpawnProcess
        self._socket: socket.socket | None = None  # ours of the pair, until a stream writer owns it
        self._writer: asyncio.StreamWriter | None = None
        self._outbox: _Outbox | None = None
        self._reading: asyncio.Task[None] | None = None

    async def start(self) -> ModelInfo:
        """Spawn the engine process and wait for its engine to load. Raises ModelLoadError; cancelled or failed,
        the process is killed."""
        ours, theirs = socket.socketpair()
        self._socket = ours
        context = multiprocessing.get_context("spawn")  # fork would copy this process's threads' locks
        self._process = context.Process(
            target=serve_replica,
            args=(self._recipe, theirs, self.number),
            name=f"atento-engine-process-{self.number}",
            daemon=True,
        )
        try:
            # On this thread: a fork and an exec, milliseconds. In a worker thread a cancel could close `theirs`
            # while spawn still pickles it.
            self._process.start()
        finally:
            theirs.close()
        # It ignores SIGTERM (the serving process stops it), and multiprocessing's exit handler would wait forever
        # after one: killed instead at exit, or once this link is garbage, if still running then.
        weakref.finalize(self, _kill_if_running, self._process)
        try:
            return await self._handshake(ours)
        except BaseException:
            self.abandon()
            raise

    async def _handshake(self, ours: socket.socket) -> ModelInfo:
        reader, writer = await asyncio.open_unix_connection(sock=ours)
        self._writer, self._socket = writer, None
        self._outbox = _Outbox(writer, lambda: (0, 0, 0))
        try:
            _, messages = await _read_frame(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            await asyncio.to_thread(self._process.join, 5.0)
            raise ModelLoadError(
                f"engine process {self.number} exited with code {self._process.exitcode} while loading the model"
            ) from None
        first = messages[0]
        for message in messages[1:]:  # its load's log records
            self._on_message(message)
        if first[0] != "ready":
            _, kind, text = first
            await asyncio.to_thread(self._process.join, 5.0)
            raise ModelLoadError(text if kind == "ModelLoadError" else f"{kind}: {text}")
        info: ModelInfo = first[1]
        self.info = info
        self.alive = True
        self.send(("watch", self._engine.watched))
        self._reading = asyncio.get_running_loop().create_task(self._read(reader))
        return info

    def abandon(self) -> None:
        """Give up on the engine process at once (a failed or cancelled start, a stop during one): kill it and
        close the socket; it is reaped by `reap`, by multiprocessing's next start or at exit."""
        self.stopping = True
        for closable in (self._writer, self._socket):
            if closable is not None:
                closable.close()
        _kill_if_running(self._process)
        self._gone()

    def send(self, message: tuple[Any, ...]) -> None:
        assert self._outbox is not None
        self._outbox.send(message)

    def cancel(self, request_id: str, reason: str) -> None:
        if self.alive:
            self.send(("cancel", request_id, reason))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        """Dispatch the engine process's frames until its end of the socket closes (it exited). Cancelled (this
        process's event loop is closing), it leaves the process to the exit's finalizer."""
        try:
            while True:
                self.stats, messages = await _read_frame(reader)
                for message in messages:
                    self._on_message(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:  # a frame this side cannot take: the process is of no use any more
            logger.exception("engine process %s sent what could not be read: killing it", self.number)
            _kill_if_running(self._process)
        self._gone()

    def _on_message(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "done":
            handle = self.handles.pop(message[1], None)
            if handle is not None:
                handle.finish(unpacked_result(message[2]))
        elif kind == "token":
            handle = self.handles.get(message[1])
            if handle is not None:
                handle.push(TokenEvent(*message[2]))
        elif kind == "admitted":
            handle = self.handles.get(message[1])
            if handle is not None:
                handle.admit()
        elif kind == "observe":
            _, hook, arguments = message
            if hook in _OBSERVER_HOOKS:
                getattr(self._engine.observer, hook)(*arguments)
        elif kind in ("refused", "failed"):
            handle = self.handles.pop(message[1], None)
            if handle is not None:
                handle.finish(unpacked_error(message[2]))
        elif kind == "cancelled":
            handle = self.handles.pop(message[1], None)
            if handle is not None:
                handle.finish(None)
        elif kind == "log":
            record = logging.makeLogRecord(message[1])
            logging.getLogger(record.name).handle(record)

    def _gone(self) -> None:
        """The engine process has exited (stopped, or died): settle what it still held. Once."""
        if self.closed.is_set():
            return
        self.alive = False
        if self._writer is not None:
            self._writer.close()
        handles, self.handles = self.handles, {}
        if self.stopping:
            error: ServingError = ModelNotReady("the engine stopped before this request finished")
        else:
            error_id = uuid.uuid4().hex[:12]
            logger.error(
                "engine process %s exited with %s requests in flight error_id=%s", self.number, len(handles), error_id
            )
            error = InferenceFailed(
                f"inference failed: the engine process exited (error_id={error_id})", error_id=error_id
            )
        for handle in handles.values():
            handle.finish(error)
        self.closed.set()
        if not self.stopping:
            self._engine.restart_later(self)

    async def stop(self, *, drain: bool, timeout_s: float) -> None:
        if not self.alive and not self.closed.is_set():  # still starting: nothing of it to drain
            self.abandon()
        self.stopping = True
        if self.alive:
            self.send(("stop", drain, timeout_s))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.closed.wait(), max(0.0, timeout_s) + _STOP_MARGIN_S)
        await self.reap()

    async def reap(self) -> None:
        """Wait briefly for the process to exit, kill it if it does not, and settle what it held."""
        if self._process is not None and self._process.pid is not None:
            await asyncio.to_thread(self._process.join, 5.0)
            if self._process.is_alive():
                logger.warning("engine process %s did not exit: killing it", self.number)
                self._process.kill()
                await asyncio.to_thread(self._process.join, 5.0)
        with contextlib.suppress(TimeoutError):  # its reader sees the socket's end and settles the requests
            await asyncio.wait_for(self.closed.wait(), 1.0)
        self._gone()

    @property
    def exit_code(self) -> int | None:
        return None if self._process is None else self._process.exitcode


class ReplicatedEngine:
    """`processes` whole engines in processes of their own behind the EngineClient API (module docstring)."""

    def __init__(
        self,
        model_dir: Path,
        *,
        variant: str | None = None,
        device: str = "cpu",
        runtime: RuntimeSettings | None = None,
        batching: BatchingSettings | None = None,
        observer: EngineObserver | None = None,
        edit_guard: bool = True,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.batching = batching or BatchingSettings()
        self._observer: EngineObserver = observer or NoObserver()
        # A recipe at each start, not now: it carries the log level, which the app configures after building us.
        self._recipe = functools.partial(
            replica_recipe,
            self.model_dir,
            variant=variant,
            device=device,
            runtime=runtime or RuntimeSettings(),
            batching=self.batching,
            edit_guard=edit_guard,
        )
        self._links: list[_ReplicaLink] = []
        self._info: ModelInfo | None = None
        self._encode: TextMemo[tuple[list[int], list[tuple[int, int]]]] | None = None
        self._request_numbers = itertools.count(1)  # ids unique within this engine (Engine's reason: no urandom)
        self._accepting = False
        self._stopped = False  # stop() was called: no more starts or restarts
        self._restarts: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Start every engine process and wait for their models to load. Raises ModelLoadError (ModelNotReady when
        stopped meanwhile); a failed or cancelled start leaves no process running."""
        self._stopped = False
        recipe = self._recipe()
        # Known before they start, so that a stop() during the start ends them too.
        self._links = [_ReplicaLink(number, recipe, self) for number in range(self.batching.processes)]
        try:
            started = await asyncio.gather(*(link.start() for link in self._links), return_exceptions=True)
            failures = [outcome for outcome in started if isinstance(outcome, BaseException)]
            if failures:
                raise failures[0]
            if self._stopped:
                raise ModelNotReady("the engine was stopped while its processes loaded the model")
            info = self._links[0].info
            assert info is not None
            # /info's limits are the whole engine's, not one process's share.
            self._info = dataclasses.replace(info, limits=self.batching.model_dump())
            self._encode = await asyncio.to_thread(self._source_encoder, info.variant)
        except BaseException:
            self._stopped = True  # no restart of a process that died meanwhile
            for task in list(self._restarts):
                task.cancel()
            for link in self._links:
                link.abandon()
            raise
        self._accepting = True

    @property
    def observer(self) -> EngineObserver:
        return self._observer

    @observer.setter
    def observer(self, observer: EngineObserver) -> None:
        """The app points the engine at its metrics after the start: the engine processes hear of it."""
        self._observer = observer
        for link in self._links:
            if link.alive:
                link.send(("watch", self.watched))

    @property
    def watched(self) -> bool:
        """Whether the engine processes relay their metrics hooks: only for an observer that records them."""
        return type(self._observer) is not NoObserver  # a subclass overrides hooks to record them

    def _source_encoder(self, variant: str) -> TextMemo[tuple[list[int], list[tuple[int, int]]]]:
        """tokenize() in this process: the source tokenizer of the variant the engine processes chose."""
        _, tokenizers = model_tokenizers(load_model_directory(self.model_dir, variant=variant))
        return TextMemo(tokenizers.source.encode)

    def restart_later(self, dead: _ReplicaLink) -> None:
        """Start engine process `dead.number` again after it died, until it loads or the engine stops."""
        number = dead.number

        async def restart() -> None:
            await dead.reap()
            logger.error("engine process %s exited with code %s: starting it again", number, dead.exit_code)
            while not self._stopped:
                await asyncio.sleep(_RESTART_DELAY_S)
                link = self._links[number] = _ReplicaLink(number, self._recipe(), self)  # stop() ends it too
                try:
                    await link.start()
                except Exception as error:  # it killed its process
                    logger.error("engine process %s failed to start again: %s", number, error)
                    continue
                logger.info("engine process %s started again", number)
                return

        task = asyncio.get_running_loop().create_task(restart())
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    async def stop(self, *, drain: bool = True, timeout_s: float = 30.0) -> None:
        """Stop accepting; each engine process drains (up to timeout_s) or fails what it holds, then exits."""
        self._stopped = True
        self._accepting = False
        for task in list(self._restarts):
            task.cancel()  # its starting link kills its process
        await asyncio.gather(*(link.stop(drain=drain, timeout_s=timeout_s) for link in self._links))

    @property
    def ready(self) -> bool:
        return self._accepting and any(link.alive for link in self._links)

    @property
    def info(self) -> ModelInfo:
        if self._info is None:
            raise ModelNotReady("the model is not loaded yet")
        return self._info

    def stats(self) -> EngineStats:
        totals = [sum(column) for column in zip(*(link.stats for link in self._links if link.alive), strict=False)]
        return EngineStats(*totals) if totals else EngineStats(0, 0, 0)

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        if self._encode is None:
            raise ModelNotReady("the model is not loaded yet")
        return self._encode(text)

    def prepare(self, text: str) -> None:
        """Nothing to do here: the engine process tokenizes a long input in a thread of its own before its submit."""

    def submit(
        self,
        text: str,
        params: GenerationParams,
        *,
        attention: AttentionSpec | None = None,
        forced_target: str | None = None,
        stream: bool = True,
    ) -> _RelayedHandle:
        """Send the request to the engine process with the fewest requests in flight. Raises ModelNotReady at
        once; its other refusals (InvalidInput, InputTooLong, Overloaded) come from `admitted()` and `result()`."""
        if not self._accepting:
            raise ModelNotReady("the model is not loaded yet" if self._info is None else "the engine is stopping")
        alive = [link for link in self._links if link.alive]
        if not alive:
            raise ModelNotReady("no engine process is running: one is starting again")
        link = min(alive, key=lambda candidate: len(candidate.handles)) if len(alive) > 1 else alive[0]
        request_id = f"r{next(self._request_numbers)}"
        handle = _RelayedHandle(request_id, asyncio.get_running_loop(), link.cancel, stream=stream)
        link.handles[request_id] = handle
        link.send(("submit", request_id, text, params, attention, forced_target, stream))
        return handle
