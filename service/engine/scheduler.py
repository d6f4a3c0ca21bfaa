"""The pure continuous-batching scheduler: who waits, who joins, who steps, who leaves.

No asyncio, no onnxruntime, no clock of its own (callers pass `now`), so unit tests drive it with a
fake clock. Admission is in queue order against reserved budgets: the head of the queue is never
skipped, so no request starves. The queue is FIFO between requests and round-robin between the pieces
of documents (`group`): a document of 250 lines queued whole made every request behind it wait for all
of them (46 s on a 2-core CPU); now each waits at most one piece of every other request before it.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
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
    group: str | None = None  # the document this is a piece of; None: a request of its own
    enqueued_at: float = 0.0  # set by add()
    # Set by add(): the round of its group's turn it waits for, and its arrival order within a round.
    turn: tuple[int, int] = (0, 0)

    @property
    def group_key(self) -> str:
        return self.id if self.group is None else self.group


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
    _waiting: list[PendingRequest] = field(default_factory=list)  # by turn: the head is admitted first
    _running: dict[str, PendingRequest] = field(default_factory=dict)  # insertion order = admission order
    _cancelled: dict[str, str] = field(default_factory=dict)
    # Kept as requests start and leave, not summed over the running ones at every step (plan_step asks).
    _reserved_rows: int = 0
    _reserved_tokens: int = 0
    _with_deadline: int = 0  # waiting or running requests that carry a deadline: none, no scan for drops
    # Fair order: the round of the last admitted request, and of each waiting group's last queued request.
    _round: int = 0
    _group_rounds: dict[str, int] = field(default_factory=dict)
    _group_waiting: Counter[str] = field(default_factory=Counter)
    _arrivals: itertools.count[int] = field(default_factory=itertools.count)

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
        """Queue a request, behind one request of every group queued before it (a request of its own: behind
        all). Raises Overloaded at once when the queue is full."""
        if len(self._waiting) >= self.policy.max_queue:
            raise Overloaded(f"the queue is full ({self.policy.max_queue} waiting)", retry_after_s=1.0)
        request.enqueued_at = now
        group = request.group_key
        turn_round = max(self._round, self._group_rounds.get(group, 0)) + 1
        self._group_rounds[group] = turn_round
        self._group_waiting[group] += 1
        request.turn = (turn_round, next(self._arrivals))
        bisect.insort(self._waiting, request, key=lambda waiting: waiting.turn)
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
                    break  # never skip the head
                self._leave_queue(self._waiting.pop(0))
                self._round = max(self._round, head.turn[0])
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

    def _leave_queue(self, request: PendingRequest) -> None:
        """Forget a group's round once none of it waits (a later request of it starts from the current round)."""
        group = request.group_key
        self._group_waiting[group] -= 1
        if not self._group_waiting[group]:
            del self._group_waiting[group], self._group_rounds[group]

    def drop_all(self) -> list[str]:
        """Forget every request (engine shutdown); returns their ids, running first."""
        ids = list(self._running) + [r.id for r in self._waiting]
        self._running.clear()
        self._waiting.clear()
        self._group_waiting.clear()
        self._group_rounds.clear()
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
        kept: list[PendingRequest] = []
        for request in self._waiting:
            reason = reason_for(request)
            if reason is None:
                kept.append(request)
            else:
                drops.append(Dropped(request.id, reason, False))
                self._leave_queue(request)
                if request.deadline is not None:
                    self._with_deadline -= 1
        self._waiting = kept
        for dropped in drops:
            self._cancelled.pop(dropped.id, None)
        return drops
