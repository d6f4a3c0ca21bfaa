"""service.engine.collector: the processes that serve a model collect young objects less often; an application that
embeds the engine keeps its own schedule."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

import service.__main__ as service_main
from service.engine import collector, replica_process


@pytest.fixture(autouse=True)
def cpython_schedule() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_the_young_generation_is_collected_less_often_and_the_older_ones_keep_their_ratios() -> None:
    gc.set_threshold(700, 10, 10)
    collector.collect_less_often()
    assert gc.get_threshold() == (collector.YOUNG_GENERATION_THRESHOLD, 10, 10)


def test_the_engine_process_sets_it_before_it_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    schedules: list[tuple[int, int, int]] = []

    def serve(coroutine: Any) -> None:
        schedules.append(gc.get_threshold())
        coroutine.close()

    gc.set_threshold(700, 10, 10)
    monkeypatch.setattr(replica_process.signal, "signal", lambda *args: None)  # the test runner's handlers stay
    monkeypatch.setattr(replica_process.asyncio, "run", serve)
    replica_process.serve_replica(None, None, 0)  # type: ignore[arg-type]
    assert schedules == [(collector.YOUNG_GENERATION_THRESHOLD, 10, 10)]


def test_python_m_service_sets_it_before_it_builds_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    schedules: list[tuple[int, int, int]] = []

    def create_app(settings: Any) -> Any:
        schedules.append(gc.get_threshold())
        raise RuntimeError("stop here")

    gc.set_threshold(700, 10, 10)
    monkeypatch.setattr(service_main, "configure_logging", lambda **kwargs: None)  # the test runner's logging stays
    monkeypatch.setattr(service_main, "create_app", create_app)
    with pytest.raises(RuntimeError, match="stop here"):
        service_main.main([])
    assert schedules == [(collector.YOUNG_GENERATION_THRESHOLD, 10, 10)]
