"""The engine's worker thread (EngineLoop): plan a step with the scheduler, run it on the batch executor
off the event loop, hand tokens and results to each request's handle (one `call_soon_threadsafe` per
event loop per step), retire the finished. No asyncio waits, no HTTP.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from service.engine.errors import DeadlineExceeded, InferenceFailed
from service.engine.executor import BatchExecutor, Request, StepFailed, StepOutcome
from service.engine.handle import RequestHandle
from service.engine.observer import EngineObserver
from service.engine.scheduler import Dropped, Scheduler, StepResults

logger = logging.getLogger("service.engine.engine")  # the engine's one logger, wherever the line runs


def _run_all(calls: list[Callable[[], None]]) -> None:
    for call in calls:
        call()


@dataclass
class Entry:
    """One submitted request as the worker knows it: what runs, whom to tell, when its tokens came."""

    request: Request
    handle: RequestHandle
    submitted_at: float  # time.monotonic(), for time to first token
    last_token_at: float | None = None


class EngineLoop:
    """The worker's side of the engine: the scheduler, the submitted requests and the lock both threads take."""

    def __init__(
        self, scheduler: Scheduler, *, clock: Callable[[], float], observer: Callable[[], EngineObserver]
    ) -> None:
        self.scheduler = scheduler
        self.lock = threading.Lock()  # guards the scheduler and entries (event loop vs worker thread)
        self.wake = threading.Condition(self.lock)
        self.entries: dict[str, Entry] = {}
        self.stopping = False
        self.rows = 0  # decoder rows after the last step (EngineStats.running_sequences)
        self._clock = clock
        self._observer = observer  # read at each call: the engine's observer may be replaced before start

    @property
    def empty(self) -> bool:
        with self.lock:
            return self.scheduler.empty

    def load(self) -> int:
        """Requests waiting or running: a new request goes to the lane with the fewest."""
        with self.lock:
            return self.scheduler.queue_depth + self.scheduler.running_requests

    def notify(self) -> None:
        with self.lock:
            self.wake.notify()

    def cancel(self, request_id: str, reason: str) -> None:
        with self.lock:
            if self.scheduler.cancel(request_id, reason):
                self.wake.notify()

    def drop_all(self) -> list[Entry]:
        """Forget every request (the engine stops); returns their entries, to be told."""
        with self.lock:
            left = self.scheduler.drop_all()
            return [self.entries.pop(i) for i in left if i in self.entries]

    def run(self, executor: Callable[[], BatchExecutor]) -> None:
        """The thread's body: iterate until `stopping` (the executor is looked up each time: start() loads it)."""
        while not self.stopping:
            try:
                self._loop_once(executor())
            except Exception:  # the worker must outlive any bug in one iteration; executor errors are handled inside
                logger.exception("engine loop iteration failed")

    def _loop_once(self, executor: BatchExecutor) -> None:
        """One iteration: plan, drop, step, dispatch (any exception in the step fails only its requests)."""
        with self.lock:
            if self.stopping:
                return
            plan = self.scheduler.plan_step(now=self._clock())
            if plan.idle:
                self.wake.wait(timeout=plan.wait_s if plan.wait_s is not None else 0.5)
                return
            entries = {i: self.entries[i] for i in plan.running if i in self.entries}
            dropped = [(d, self.entries.pop(d.id, None)) for d in plan.drop]
        self._handle_drops(executor, dropped)
        now = self._clock()
        joins = [entries[p.id].request for p in plan.join if p.id in entries]
        for pending in plan.join:
            self._observer().on_queue_wait(now - pending.enqueued_at)
        started = time.perf_counter()
        try:
            outcome = executor.step(joins)
        except StepFailed as failure:
            self._fail_step(executor, failure, entries)
        else:
            self._observer().on_step(outcome.rows, time.perf_counter() - started)
            # Budgets and gauges are released before results are delivered, so a caller that has
            # its result already sees the freed slot in stats().
            self._retire(executor, list(outcome.results))
            self._dispatch(outcome, entries)

    def _fail_step(self, executor: BatchExecutor, failure: StepFailed, entries: dict[str, Entry]) -> None:
        """Log a failed step once under a new error id and fail the requests it took down with that id."""
        error_id = uuid.uuid4().hex[:12]
        logger.error(
            "inference step failed error_id=%s requests=%s", error_id, failure.request_ids, exc_info=failure.cause
        )
        self._retire(executor, failure.request_ids)
        for request_id in failure.request_ids:
            entry = entries.get(request_id)
            if entry is not None:
                entry.handle.finish_threadsafe(
                    InferenceFailed(f"inference failed (error_id={error_id})", error_id=error_id)
                )

    def _retire(self, executor: BatchExecutor, finished: list[str]) -> None:
        with self.lock:
            self.scheduler.finish_step(StepResults(finished=finished))
            for request_id in finished:
                self.entries.pop(request_id, None)
            self.rows = executor.rows

    def _handle_drops(self, executor: BatchExecutor, dropped: list[tuple[Dropped, Entry | None]]) -> None:
        executor.drop([d.id for d, _ in dropped if d.was_running])
        with self.lock:
            self.rows = executor.rows
        for drop, entry in dropped:
            if drop.reason == "deadline":
                self._observer().on_cancel("deadline")
                if entry is not None:
                    entry.handle.finish_threadsafe(DeadlineExceeded("the request passed its deadline"))
            else:
                self._observer().on_cancel(drop.reason.split(":", 1)[1])
                if entry is not None:
                    entry.handle.finish_threadsafe(None)

    def _dispatch(self, outcome: StepOutcome, entries: dict[str, Entry]) -> None:
        now = time.monotonic()
        observer = self._observer()  # once per step, not per token
        # One call_soon_threadsafe per event loop per step (not per token): each call wakes the loop
        # through its self-pipe and makes the two threads trade the GIL.
        batches: dict[asyncio.AbstractEventLoop, list[Callable[[], None]]] = {}
        for request_id, event in outcome.tokens:
            entry = entries.get(request_id)
            if entry is None:
                continue
            if entry.last_token_at is None:
                observer.on_first_token(now - entry.submitted_at)
            else:
                observer.on_token(now - entry.last_token_at)
            entry.last_token_at = now
            handle = entry.handle
            if handle.stream:
                batches.setdefault(handle.loop, []).append(functools.partial(handle.push, event))
        for request_id, result in outcome.results.items():
            entry = entries.get(request_id)
            if entry is None:
                continue
            observer.on_finish(len(entry.request.source_ids), len(result.token_ids))
            batches.setdefault(entry.handle.loop, []).append(functools.partial(entry.handle.finish, result))
        for loop, calls in batches.items():
            try:
                loop.call_soon_threadsafe(_run_all, calls)
            except RuntimeError:  # the event loop is closed: nobody is waiting any more
                pass
