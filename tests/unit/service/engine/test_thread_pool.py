"""The server's sessions share onnxruntime's process-wide thread pool, sized once per process; an embedded
Engine keeps pools of its own unless the process pool already exists."""

from __future__ import annotations

import logging

import onnxruntime as ort
import pytest

from service.__main__ import own_process_defaults, parse_settings
from service.engine import runner
from service.engine.runner import ProcessThreadPool, session_options
from service.engine.settings import RuntimeSettings


@pytest.fixture
def created(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Record onnxruntime's pool creation instead of doing it (it can happen once per process)."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(ort, "set_global_thread_pool_sizes", lambda intra, inter: calls.append((intra, inter)))
    return calls


def test_the_first_engine_sizes_the_pool_and_later_ones_share_it(
    created: list[tuple[int, int]], caplog: pytest.LogCaptureFixture
) -> None:
    pool = ProcessThreadPool()
    pool.join(2, 1)
    pool.join(2, 1)
    assert created == [(2, 1)] and pool.sizes == (2, 1)
    with caplog.at_level(logging.WARNING, logger="service.engine.runner"):
        pool.join(4, 0)
    assert created == [(2, 1)] and pool.sizes == (2, 1)
    assert "asked for 4 / 0" in caplog.text


def test_a_pool_created_by_someone_else_is_shared_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def already_created(intra: int, inter: int) -> None:
        raise RuntimeError("Global thread pools have already been created, cannot replace them")

    monkeypatch.setattr(ort, "set_global_thread_pool_sizes", already_created)
    pool = ProcessThreadPool()
    with caplog.at_level(logging.WARNING, logger="service.engine.runner"):
        pool.join(2, 1)
    assert pool.sizes == (2, 1) and "already exist" in caplog.text


def test_sessions_share_the_pool_when_told_or_once_it_exists(
    monkeypatch: pytest.MonkeyPatch, created: list[tuple[int, int]], caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(runner, "PROCESS_THREAD_POOL", ProcessThreadPool())  # the real one must stay real
    embedded = session_options(RuntimeSettings(intra_op_threads=3), allow_spinning=True)  # default: None
    assert embedded.use_per_session_threads is True and embedded.intra_op_num_threads == 3
    assert embedded.get_session_config_entry("session.intra_op.allow_spinning") == "1"
    assert created == []

    shared = session_options(RuntimeSettings(intra_op_threads=2, shared_thread_pool=True), allow_spinning=False)
    assert shared.use_per_session_threads is False and created == [(2, 0)]

    # onnxruntime refuses a pool of its own to any session made after the process pool exists
    for setting in (None, False):
        with caplog.at_level(logging.WARNING, logger="service.engine.runner"):
            late = session_options(RuntimeSettings(shared_thread_pool=setting), allow_spinning=False)
        assert late.use_per_session_threads is False
    assert "already runs onnxruntime's shared thread pool" in caplog.text


def test_the_server_process_shares_the_pool_unless_told_otherwise() -> None:
    assert RuntimeSettings().shared_thread_pool is None  # an embedded Engine: its own pools
    assert own_process_defaults(parse_settings([])).runtime.shared_thread_pool is True
    told = own_process_defaults(parse_settings(["--runtime.shared-thread-pool", "false"]))
    assert told.runtime.shared_thread_pool is False
