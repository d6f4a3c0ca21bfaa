"""The serving process's side of one engine process (replicas.py): spawning it, its handshake, its requests in
flight (each a RelayedHandle), reading its frames, and settling what it held once it exits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import socket
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from service.engine.errors import (
    InferenceFailed,
    ModelLoadError,
    ModelNotReady,
    ServingError,
)
from service.engine.handle import RequestHandle
from service.engine.replica_process import STOP_MARGIN_S, ReplicaRecipe, serve_replica
from service.engine.replica_wire import Outbox, read_frame, unpacked_error, unpacked_result
from service.engine.types import GenerationResult, ModelInfo, TokenEvent

if TYPE_CHECKING:
    from service.engine.replicas import ReplicatedEngine

logger = logging.getLogger(__name__)

_OBSERVER_HOOKS = frozenset(
    {"on_step", "on_queue_wait", "on_first_token", "on_token", "on_finish", "on_cancel", "on_edit_guard_reverted"}
)


def kill_if_running(process: Any) -> None:
    """SIGKILL a started engine process that has not exited (its SIGTERM is ignored)."""
    if process is not None and process.pid is not None and process.exitcode is None:
        with contextlib.suppress(ProcessLookupError, OSError):
            process.kill()


class RelayedHandle(RequestHandle):
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


class ReplicaLink:
    """The serving process's side of one engine process: its process, its socket, its requests in flight."""

    def __init__(self, number: int, recipe: ReplicaRecipe, engine: ReplicatedEngine) -> None:
        self.number = number
        self._recipe = recipe
        self._engine = engine
        self.handles: dict[str, RelayedHandle] = {}
        self.stats: tuple[int, int, int] = (0, 0, 0)
        self.alive = False
        self.stopping = False
        self.closed = asyncio.Event()
        self.info: ModelInfo | None = None
        self._process: Any = None  # multiprocessing's SpawnProcess
        self._socket: socket.socket | None = None  # ours of the pair, until a stream writer owns it
        self._writer: asyncio.StreamWriter | None = None
        self._outbox: Outbox | None = None
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
        weakref.finalize(self, kill_if_running, self._process)
        try:
            return await self._handshake(ours)
        except BaseException:
            self.abandon()
            raise

    async def _handshake(self, ours: socket.socket) -> ModelInfo:
        reader, writer = await asyncio.open_unix_connection(sock=ours)
        self._writer, self._socket = writer, None
        self._outbox = Outbox(writer, lambda: (0, 0, 0))
        try:
            _, messages = await read_frame(reader)
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
        kill_if_running(self._process)
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
                self.stats, messages = await read_frame(reader)
                for message in messages:
                    self._on_message(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:  # a frame this side cannot take: the process is of no use any more
            logger.exception("engine process %s sent what could not be read: killing it", self.number)
            kill_if_running(self._process)
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
            await asyncio.wait_for(self.closed.wait(), max(0.0, timeout_s) + STOP_MARGIN_S)
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
