"""Engine processes (BatchingSettings.processes): whole engines, each in a process of its own, behind one client.

Two lanes in one process share one GIL: on two cores each lane's thread waited for it a third of the time (its own
Python, the other lane's and the event loop's) and the process kept 1.65 cores busy. Splitting one engine at its
executor (a lane's graphs in a child) relayed every step and gained nothing; two independent engines in two
processes served 784-825 requests/s where two lanes in one served 599-670 (BENCHMARKS.md, issue 23). So here a
request crosses once each way: its text and parameters go to one engine process, which does all of its work
(tokenizing, segmentation, scheduling, the graphs, the edit guard, case restoring), and its tokens and result
come back. The serving process keeps the HTTP side and this router: each request goes to the process with
the fewest requests in flight.

This module is the serving process's side; replica_process.py is the engine process's, replica_wire.py what
crosses between them: a Unix socket pair per engine process, one frame per event loop turn. The engine's metrics
hooks and log records ride along, so /metrics and the logs are the same as with one process. An engine process
that dies fails its requests (InferenceFailed) and is started again; the others keep serving meanwhile.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import logging
import os
from collections.abc import Callable
from pathlib import Path

from service.engine.client import EngineClient
from service.engine.engine import Engine
from service.engine.errors import (
    ModelNotReady,
)
from service.engine.model_dir import load_model_directory
from service.engine.observer import EngineObserver, NoObserver
from service.engine.replica_link import RelayedHandle, ReplicaLink
from service.engine.replica_process import ReplicaRecipe
from service.engine.request_rules import model_tokenizers
from service.engine.runner import runs_on_cpu
from service.engine.settings import BatchingSettings, RuntimeSettings
from service.engine.text_cache import TextMemo
from service.engine.types import AttentionSpec, EngineStats, GenerationParams, ModelInfo

logger = logging.getLogger(__name__)

_RESTART_DELAY_S = 1.0  # before starting again an engine process that died (and between failed starts)


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
        self._links: list[ReplicaLink] = []
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
        self._links = [ReplicaLink(number, recipe, self) for number in range(self.batching.processes)]
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

    def restart_later(self, dead: ReplicaLink) -> None:
        """Start engine process `dead.number` again after it died, until it loads or the engine stops."""
        number = dead.number

        async def restart() -> None:
            await dead.reap()
            logger.error("engine process %s exited with code %s: starting it again", number, dead.exit_code)
            while not self._stopped:
                await asyncio.sleep(_RESTART_DELAY_S)
                link = self._links[number] = ReplicaLink(number, self._recipe(), self)  # stop() ends it too
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
    ) -> RelayedHandle:
        """Send the request to the engine process with the fewest requests in flight. Raises ModelNotReady at
        once; its other refusals (InvalidInput, InputTooLong, Overloaded) come from `admitted()` and `result()`."""
        if not self._accepting:
            raise ModelNotReady("the model is not loaded yet" if self._info is None else "the engine is stopping")
        alive = [link for link in self._links if link.alive]
        if not alive:
            raise ModelNotReady("no engine process is running: one is starting again")
        link = min(alive, key=lambda candidate: len(candidate.handles)) if len(alive) > 1 else alive[0]
        request_id = f"r{next(self._request_numbers)}"
        handle = RelayedHandle(request_id, asyncio.get_running_loop(), link.cancel, stream=stream)
        link.handles[request_id] = handle
        link.send(("submit", request_id, text, params, attention, forced_target, stream))
        return handle
