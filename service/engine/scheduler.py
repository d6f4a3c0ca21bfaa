"""The pure continuous-batching scheduler: who waits, who joins, who steps, who leaves.

No asyncio, no onnxruntime, no clock of its own (callers pass `now`), so unit tests drive it with a
fake clock. Admission is strictly FIFO against reserved budgets: the head of the queue is never
skipped, so no request starves.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from service.engine.errors import Overloaded
from service.engine.settings import BatchingSettings


@dataclass(frozen=True)
class BatchPolicy:
    max_batch_size: int  # rows (a beam-search request reserves num_beams)
    max_tokens_in_flight: int  # reserved rows * (source tokens + max_new_tokens)
    max_queue: int
    max_wait_s: float  # when idle, how long to hold the first arrival for others to batch with

    @classmethod
    def from_settings(cls, settings: BatchingSettings) -> BatchPolicy:
        return cls(
            max_batch_size=settings.max_batch_size,
            max_tokens_in_flight=settings.max_tokens_in_flight,
            max_queue=settings.max_queue,
            max_wait_s=settings.max_wait_ms / 1000.0,
        )


@dataclass
class PendingRequest:
    id: str
    rows: int  # batch rows reserved: num_beams
    tokens: int  # tokens reserved for its whole life
    deadline: float | None = None  # absolute, on the caller's clock
    enqueued_at: float = 0.0  # set by add()


@dataclass(frozen=True)
class Dropped:
    id: str
    reason: str  # "cancelled:<why>" or "deadline"
    was_running: bool


@dataclass(frozen=True)
class StepPlan:
    join: list[PendingRequest]  # admitted now, FIFO: run their encoder, then step with the others
    running: list[str]  # every request in the decoder step, in admission order (joiners last)
    drop: list[Dropped]  # cancelled or past deadline: free their rows before the step
    wait_s: float | None = None  # nothing to do: sleep at most this long (None = until woken)

    @property
    def idle(self) -> bool:
        return not self.running and not self.drop


@dataclass(frozen=True)
class StepResults:
    finished: list[str] = field(default_factory=list)  # completed or failed in this step


@dataclass
class Scheduler:
    policy: BatchPolicy
    _waiting: deque[PendingRequest] = field(default_factory=deque)
    _running: dict[str, PendingRequest] = field(default_factory=dict)  # insertion order = admission order
    _cancelled: dict[str, str] = field(default_factory=dict)
    # Kept as requests start and leave, not summed over the running ones at every step (plan_step asks).
    _reserved_rows: int = 0
    _reserved_tokens: int = 0
    _with_deadline: int = 0  # waiting or running requests that carry a deadline: none, no scan for drops

    @property
    def queue_depth(self) -> int:
        return len(self._waiting)

    @property
    def running_requests(self) -> int:
        return len(self._running)

    @property
    def reserved_rows(self) -> int:
        return self._reserved_rows

    @property
    def reserved_tokens(self) -> int:
        return self._reserved_tokens

    @property
    def empty(self) -> bool:
        return not self._waiting and not self._running

    def add(self, request: PendingRequest, *, now: float) -> None:
        """Queue a request. Raises Overloaded at once when the queue is full."""
        if len(self._waiting) >= self.policy.max_queue:
            raise Overloaded(f"the queue is full ({self.policy.max_queue} waiting)", retry_after_s=1.0)
        request.enqueued_at = now
        self._waiting.append(request)
        if request.deadline is not None:
            self._with_deadline += 1

    def cancel(self, request_id: str, reason: str = "disconnect") -> bool:
        """Mark a waiting or running request; it leaves at the next plan_step. False if unknown."""
        known = request_id in self._running or any(r.id == request_id for r in self._waiting)
        if known:
            self._cancelled.setdefault(request_id, reason)
        return known

    def plan_step(self, *, now: float) -> StepPlan:
        drop = self._collect_drops(now)
        join: list[PendingRequest] = []
        wait_s: float | None = None
        if self._waiting and self._should_hold(now):
            wait_s = self.policy.max_wait_s - (now - self._waiting[0].enqueued_at)
        else:
            rows, tokens = self.reserved_rows, self.reserved_tokens
            while self._waiting:
                head = self._waiting[0]
                alone = not self._running and not join  # an oversized request still runs, alone
                fits = (
                    rows + head.rows <= self.policy.max_batch_size
                    and tokens + head.tokens <= self.policy.max_tokens_in_flight
                )
                if not (fits or alone):
                    break  # FIFO: never skip the head
                self._waiting.popleft()
                rows += head.rows
                tokens += head.tokens
                join.append(head)
                self._running[head.id] = head
            self._reserved_rows, self._reserved_tokens = rows, tokens
        return StepPlan(join=join, running=list(self._running), drop=drop, wait_s=wait_s)

    def finish_step(self, results: StepResults) -> None:
        """Release the finished requests' budgets."""
        for request_id in results.finished:
            request = self._running.pop(request_id, None)
            if request is not None:
                self._cancelled.pop(request_id, None)
                self._release(request)

    def _release(self, request: PendingRequest) -> None:
        """Take a request that leaves the running set out of the reserved budgets."""
        self._reserved_rows -= request.rows
        self._reserved_tokens -= request.tokens
        if request.deadline is not None:
            self._with_deadline -= 1

    def drop_all(self) -> list[str]:
        """Forget every request (engine shutdown); returns their ids, running first."""
        ids = list(self._running) + [r.id for r in self._waiting]
        self._running.clear()
        self._waiting.clear()
        self._cancelled.clear()
        self._reserved_rows = self._reserved_tokens = self._with_deadline = 0
        return ids

    def _should_hold(self, now: float) -> bool:
        """Hold an idle engine's first arrivals up to max_wait_s unless the queue can already fill a batch."""
        if self._running or self.policy.max_wait_s <= 0:
            return False
        if sum(r.rows for r in self._waiting) >= self.policy.max_batch_size:
            return False
        return now - self._waiting[0].enqueued_at < self.policy.max_wait_s

    def _collect_drops(self, now: float) -> list[Dropped]:
        if not self._cancelled and not self._with_deadline:
            return []  # the usual step: nothing to scan for

        def reason_for(request: PendingRequest) -> str | None:
            if request.id in self._cancelled:
                return f"cancelled:{self._cancelled[request.id]}"
            if request.deadline is not None and now >= request.deadline:
                return "deadline"
            return None

        drops = []
        for request in list(self._running.values()):
            reason = reason_for(request)
            if reason is not None:
                drops.append(Dropped(request.id, reason, True))
                del self._running[request.id]
                self._release(request)
        kept: deque[PendingRequest] = deque()
        for request in self._waiting:
            reason = reason_for(request)
            if reason is None:
                kept.append(request)
            else:
                drops.append(Dropped(request.id, reason, False))
                if request.deadline is not None:
                    self._with_deadline -= 1
        self._waiting = kept
        for dropped in drops:
            self._cancelled.pop(dropped.id, None)
        return drops
