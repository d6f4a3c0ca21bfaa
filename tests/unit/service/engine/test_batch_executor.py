"""The executor and scheduler together, driven by a FakeRunner and a fake clock."""

from __future__ import annotations

import pytest
from fake_runner import EOS, FakeRunner, FakeTokenizer

from service.engine.executor import (
    _SPARSE_STEPS_BEFORE_COMPACTING,
    BatchExecutor,
    ModelShape,
    Request,
    SpecialIds,
    StepFailed,
)
from service.engine.runner import KvCache
from service.engine.scheduler import BatchPolicy, PendingRequest, Scheduler, StepResults
from service.engine.types import GenerationParams


def make(runner: FakeRunner) -> BatchExecutor:
    return BatchExecutor(runner, FakeTokenizer(), special=SpecialIds(pad=0, bos=1, eos=EOS), shape=ModelShape(1, 1, 1))


def request(name: str, source: list[int], **params: int) -> Request:
    return Request(name, [*source, EOS], GenerationParams(**params))  # type: ignore[arg-type]


def run(sources: dict[str, list[int]], arrivals: dict[int, list[str]], *, max_batch: int = 8) -> dict[str, list[int]]:
    runner = FakeRunner()
    executor = make(runner)
    scheduler = Scheduler(BatchPolicy(max_batch, 10_000, 100, 0.0))
    requests = {name: request(name, src, max_new_tokens=20) for name, src in sources.items()}
    results: dict[str, list[int]] = {}
    for clock in range(200):
        for name in arrivals.get(clock, []):
            scheduler.add(PendingRequest(name, rows=1, tokens=10), now=float(clock))
        plan = scheduler.plan_step(now=float(clock))
        assert executor.rows <= max_batch
        outcome = executor.step([requests[p.id] for p in plan.join])
        results.update({k: v.token_ids for k, v in outcome.results.items()})
        scheduler.finish_step(StepResults(finished=list(outcome.results)))
        if len(results) == len(sources):
            break
    return results


def test_requests_join_and_leave_mid_flight_without_changing_outputs() -> None:
    sources = {"a": [10, 11, 12, 13, 14, 15], "b": [20, 21], "c": [30, 31, 32, 33], "d": [40]}
    alone = {name: run({name: src}, {0: [name]})[name] for name, src in sources.items()}
    assert alone == {name: src for name, src in sources.items()}
    mixed = run(sources, {0: ["a"], 2: ["b", "c"], 5: ["d"]}, max_batch=2)
    assert mixed == alone


def test_a_departed_row_stays_masked_then_a_joiner_reuses_it_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = FakeRunner()
    executor = make(runner)
    long = [10, 11, 12, 13, 14, 15, 16, 17]
    sources = {"a": long, "b": [20], "c": long, "d": long, "e": long}
    results: dict[str, list[int]] = {}
    outcome = executor.step([request(name, src, max_new_tokens=20) for name, src in sources.items()])
    while "b" not in results:
        outcome = executor.step([])
        results.update({k: v.token_ids for k, v in outcome.results.items()})
    assert executor.rows == 4 and runner.decode_calls[-1] == 5  # one dead row out of 5: not worth a copy
    monkeypatch.setattr(KvCache, "concatenate", None)  # f must take b's row, not copy the batch
    outcome = executor.step([request("f", [40, 41], max_new_tokens=20)])
    assert runner.decode_calls[-1] == 5
    while executor.rows:
        results.update({k: v.token_ids for k, v in outcome.results.items()})
        outcome = executor.step([])
    results.update({k: v.token_ids for k, v in outcome.results.items()})
    assert results == {**sources, "f": [40, 41]}


def test_rows_left_by_requests_finishing_together_wait_for_joiners_then_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """Half the batch finishing at once is no reason to copy it: the next arrivals take those rows.
    Rows that nobody takes are dropped a few steps later."""
    runner = FakeRunner()
    executor = make(runner)
    longs = [request(f"long{i}", [10] * 12, max_new_tokens=20) for i in range(4)]
    executor.step([request(f"short{i}", [20]) for i in range(4)] + longs)
    outcome = executor.step([])
    assert sorted(outcome.results) == [f"short{i}" for i in range(4)]  # 4 dead rows of 8
    with monkeypatch.context() as patched:
        patched.setattr(KvCache, "filter", None)  # not compacted meanwhile...
        patched.setattr(KvCache, "concatenate", None)  # ...and the joiners take the dead rows in place
        executor.step([])
        outcome = executor.step([request(f"late{i}", [30, 31]) for i in range(4)])
    assert runner.decode_calls[-3:] == [8, 8, 8]
    results = {k: v.token_ids for k, v in outcome.results.items()}
    finished_at = None
    while runner.decode_calls[-1] == 8 and len(runner.decode_calls) < 40:
        outcome = executor.step([])
        results.update({k: v.token_ids for k, v in outcome.results.items()})
        if finished_at is None and "late0" in outcome.results:
            finished_at = len(runner.decode_calls)
    assert finished_at is not None and runner.decode_calls[-1] == 4
    assert len(runner.decode_calls) - finished_at == _SPARSE_STEPS_BEFORE_COMPACTING
    assert {k: results[k] for k in results if k.startswith("late")} == {f"late{i}": [30, 31] for i in range(4)}


def test_a_batch_that_never_empties_keeps_a_bounded_cache() -> None:
    """Rows reused by a steady stream of short requests must not drag an ever longer masked history."""
    executor = make(FakeRunner())
    expected: dict[str, list[int]] = {}
    results: dict[str, list[int]] = {}
    widths = []
    for step in range(300):
        joiners = []
        while executor.rows + len(joiners) < 32:  # a closed loop: a free row is taken at once
            name = f"r{step}-{len(joiners)}"
            source = [10 + (step + len(joiners)) % 30] * (4 + (step + len(joiners)) % 5)
            expected[name] = source
            joiners.append(request(name, source, max_new_tokens=20))
        outcome = executor.step(joiners)
        results.update({k: v.token_ids for k, v in outcome.results.items()})
        assert executor._cache is not None
        widths.append(executor._cache.past_length)
    # The longest request lives 9 steps; without trimming the reused rows' history reaches ~300 columns.
    assert max(widths) <= 24
    assert results == {name: expected[name] for name in results} and len(results) > 200


def test_a_failing_step_fails_only_that_step_and_the_executor_recovers() -> None:
    runner = FakeRunner()
    executor = make(runner)
    executor.step([request("a", [5, 6, 7])])
    runner.fail_on_decode = 2
    with pytest.raises(StepFailed) as caught:
        executor.step([request("b", [8])])
    assert sorted(caught.value.request_ids) == ["a", "b"]
    assert executor.rows == 0
    outcome = executor.step([request("c", [9, 9])])
    while "c" not in outcome.results:
        outcome = executor.step([])
    assert outcome.results["c"].token_ids == [9, 9]


def test_drop_frees_rows_before_the_next_step() -> None:
    runner = FakeRunner()
    executor = make(runner)
    executor.step([request("a", [5] * 10), request("b", [6] * 10)])
    executor.drop(["a"])
    assert executor.rows == 1
    executor.step([])
    assert runner.decode_calls[-1] == 1


def test_length_and_stop_finish_reasons() -> None:
    executor = make(FakeRunner())
    outcome = executor.step(
        [
            request("len", [5, 6, 7, 8], max_new_tokens=2),
            Request("stop", [5, 6, 7, EOS], GenerationParams(stop=("<6>",))),
        ]
    )
    while len(outcome.results) < 2:
        more = executor.step([])
        outcome.results.update(more.results)
    assert outcome.results["len"].finish_reason == "length" and outcome.results["len"].token_ids == [5, 6]
    assert outcome.results["stop"].finish_reason == "stop_sequence"
    assert outcome.results["stop"].text == "<5><6>"
