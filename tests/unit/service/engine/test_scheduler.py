from __future__ import annotations

import pytest

from service.engine.errors import Overloaded
from service.engine.scheduler import BatchPolicy, PendingRequest, Scheduler, StepResults


def policy(**overrides: float) -> BatchPolicy:
    values = {
        "max_batch_size": 4,
        "max_tokens_in_flight": 1000,
        "max_queue": 3,
        "max_wait_s": 0.0,
    } | overrides
    return BatchPolicy(**values)  # type: ignore[arg-type]  # test helper over a fixed dict


def req(name: str, rows: int = 1, tokens: int = 10, deadline: float | None = None) -> PendingRequest:
    return PendingRequest(name, rows=rows, tokens=tokens, deadline=deadline)


def test_joins_fifo_up_to_batch_size_then_fills_freed_rows() -> None:
    s = Scheduler(policy(max_queue=10))
    for i in range(6):
        s.add(req(f"r{i}"), now=0.0)
    plan = s.plan_step(now=0.0)
    assert [p.id for p in plan.join] == ["r0", "r1", "r2", "r3"]
    assert plan.running == ["r0", "r1", "r2", "r3"]
    assert s.plan_step(now=1.0).join == []
    s.finish_step(StepResults(finished=["r1"]))
    plan = s.plan_step(now=2.0)
    assert [p.id for p in plan.join] == ["r4"]
    assert plan.running == ["r0", "r2", "r3", "r4"]


def test_head_of_queue_is_never_skipped() -> None:
    s = Scheduler(policy(max_queue=10))
    s.add(req("small", rows=1), now=0)
    s.add(req("beam", rows=4), now=0)
    s.add(req("later", rows=1), now=0)
    plan = s.plan_step(now=0)
    assert [p.id for p in plan.join] == ["small"]  # "later" would fit, but waits behind "beam"
    s.finish_step(StepResults(finished=["small"]))
    assert [p.id for p in s.plan_step(now=1).join] == ["beam"]


def test_token_budget_and_oversized_request_runs_alone() -> None:
    s = Scheduler(policy(max_tokens_in_flight=25, max_queue=10))
    s.add(req("a", tokens=10), now=0)
    s.add(req("b", tokens=10), now=0)
    s.add(req("c", tokens=10), now=0)
    assert [p.id for p in s.plan_step(now=0).join] == ["a", "b"]
    s.finish_step(StepResults(finished=["a", "b"]))
    s.add(req("huge", tokens=100), now=0)
    assert [p.id for p in s.plan_step(now=0).join] == ["c"]
    s.finish_step(StepResults(finished=["c"]))
    assert [p.id for p in s.plan_step(now=0).join] == ["huge"]


def test_overload_rejects_at_once() -> None:
    s = Scheduler(policy(max_queue=2))
    s.add(req("a"), now=0)
    s.add(req("b"), now=0)
    with pytest.raises(Overloaded) as caught:
        s.add(req("c"), now=0)
    assert caught.value.retry_after_s > 0
    s.plan_step(now=0)  # both admitted: the queue has room again
    s.add(req("c"), now=0)


def test_cancel_and_deadline_drop_at_next_step() -> None:
    s = Scheduler(policy(max_batch_size=1, max_queue=10))
    s.add(req("running", deadline=5.0), now=0)
    s.add(req("waiting"), now=0)
    s.add(req("cancelled"), now=0)
    s.plan_step(now=0)
    assert s.cancel("cancelled", "disconnect")
    assert not s.cancel("unknown")
    plan = s.plan_step(now=1.0)
    assert [(d.id, d.reason, d.was_running) for d in plan.drop] == [("cancelled", "cancelled:disconnect", False)]
    plan = s.plan_step(now=5.0)
    assert [(d.id, d.reason, d.was_running) for d in plan.drop] == [("running", "deadline", True)]
    assert [p.id for p in plan.join] == ["waiting"]  # the freed slot is reused in the same step
    assert plan.running == ["waiting"]


def test_max_wait_holds_an_idle_engine_briefly() -> None:
    s = Scheduler(policy(max_wait_s=0.01, max_queue=10))
    s.add(req("a"), now=0.0)
    plan = s.plan_step(now=0.004)
    assert plan.join == [] and plan.wait_s == pytest.approx(0.006)
    s.add(req("b"), now=0.005)
    assert [p.id for p in s.plan_step(now=0.011).join] == ["a", "b"]


def test_no_starvation_under_constant_arrivals() -> None:
    s = Scheduler(policy(max_batch_size=2, max_queue=100))
    admitted: list[str] = []
    running: list[str] = []
    for step in range(200):
        s.add(req(f"r{step}"), now=step)
        plan = s.plan_step(now=step)
        admitted += [p.id for p in plan.join]
        running = plan.running
        s.finish_step(StepResults(finished=running[:1]))  # one finishes per step
    assert admitted == [f"r{i}" for i in range(len(admitted))]  # strict FIFO
    assert len(admitted) >= 199


def test_reserved_budgets_follow_every_way_in_and_out() -> None:
    """The budgets are kept as requests start and leave (not summed each step): they must equal the sums
    over the running requests after joins, finishes, cancellations, deadlines and drop_all."""
    s = Scheduler(policy(max_batch_size=6, max_queue=20))
    sizes = {"a": (1, 10), "b": (4, 50), "c": (1, 7), "d": (2, 30), "e": (1, 11)}
    for name, (rows, tokens) in sizes.items():
        s.add(req(name, rows=rows, tokens=tokens, deadline=3.0 if name in "ce" else None), now=0)

    def step_and_check(now: float, running: set[str]) -> None:
        assert set(s.plan_step(now=now).running) == running
        assert s.reserved_rows == sum(sizes[n][0] for n in running)
        assert s.reserved_tokens == sum(sizes[n][1] for n in running)

    step_and_check(0.0, {"a", "b", "c"})  # d waits: 1 + 4 + 1 rows of 6
    s.finish_step(StepResults(finished=["b", "unknown"]))
    step_and_check(1.0, {"a", "c", "d", "e"})
    assert s.cancel("a", "disconnect")
    step_and_check(2.0, {"c", "d", "e"})
    step_and_check(3.0, {"d"})  # c's and e's deadline
    s.add(req("late", deadline=1.0), now=3.0)
    plan = s.plan_step(now=4.0)
    assert [d.id for d in plan.drop] == ["late"] and plan.running == ["d"]
    assert s.drop_all() == ["d"]
    assert (s.reserved_rows, s.reserved_tokens) == (0, 0)


def test_lanes_share_out_the_batching_limits() -> None:
    from pydantic import ValidationError

    from service.engine.settings import BatchingSettings

    one = BatchingSettings(max_batch_size=32, max_tokens_in_flight=16384, max_queue=255)
    assert one.lane_share() is one
    share = BatchingSettings(max_batch_size=32, max_tokens_in_flight=16384, max_queue=255, lanes=2).lane_share()
    assert (share.max_batch_size, share.max_tokens_in_flight, share.max_queue, share.lanes) == (16, 8192, 128, 1)
    with pytest.raises(ValidationError, match="at most max_batch_size"):
        BatchingSettings(max_batch_size=2, lanes=3)
    # Engine processes share the limits out first, then each process's lanes share its part.
    settings = BatchingSettings(max_batch_size=32, max_tokens_in_flight=16384, max_queue=255, processes=2, lanes=2)
    process = settings.process_share()
    assert (process.max_batch_size, process.max_queue, process.processes, process.lanes) == (16, 128, 1, 2)
    assert process.lane_share().max_batch_size == 8
    with pytest.raises(ValidationError, match="lanes x processes"):
        BatchingSettings(max_batch_size=4, lanes=2, processes=3)


def test_pieces_of_a_document_take_turns_with_other_requests() -> None:
    """A document's 6 pieces queued at once, then two requests of their own and a second document: each of them
    waits for one piece of each group before it, not for the whole first document (FIFO between requests)."""
    s = Scheduler(policy(max_batch_size=1, max_queue=20))
    for i in range(6):
        s.add(PendingRequest(f"a{i}", rows=1, tokens=10, group="doc-a"), now=0)
    admitted = [p.id for p in s.plan_step(now=0).join]
    s.add(req("x"), now=1)
    s.add(req("y"), now=1)
    for i in range(2):
        s.add(PendingRequest(f"b{i}", rows=1, tokens=10, group="doc-b"), now=1)
    while not s.empty:
        plan = s.plan_step(now=2)
        admitted += [p.id for p in plan.join]
        s.finish_step(StepResults(finished=plan.running))
    assert admitted == ["a0", "a1", "x", "y", "b0", "a2", "b1", "a3", "a4", "a5"]
    # A group none of which waits starts again from the current round: it is not owed the turns it missed.
    s.add(PendingRequest("a6", rows=1, tokens=10, group="doc-a"), now=3)
    s.add(req("z"), now=3)
    assert [p.id for p in s.plan_step(now=3).join] == ["a6"]
    assert s.queue_depth == 1
