"""bench.profile_engine's clock on onnxruntime's calls: each graph's calls, CPU and wall time apart."""

from __future__ import annotations

import gc
import time
from typing import Any

import onnxruntime
import pytest

from bench.profile_engine import _OnnxruntimeClock


def test_each_graph_is_timed_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_run(self: Any, output_names: Any, feeds: Any, *args: Any, **kwargs: Any) -> list[str]:
        time.sleep(0.002)  # wall time, no CPU: what a lane waiting for the GIL looks like
        return ["ran"]

    monkeypatch.setattr(onnxruntime.InferenceSession, "run", fake_run)  # restored after the test
    clock = _OnnxruntimeClock()
    clock.install()
    session: Any = object.__new__(onnxruntime.InferenceSession)
    assert session.run(None, {"src": 1, "src_mask": 2}) == ["ran"]
    for _ in range(2):
        session.run(["logits"], {"tgt": 1, "src_mask": 2})
    assert clock.calls == {"encoder": 1, "decoder": 2}
    assert clock.wall["decoder"] >= 0.004 > clock.cpu["decoder"]
    clock.reset()
    assert clock.calls == {"encoder": 0, "decoder": 0} and clock.wall["encoder"] == 0.0


def test_the_collector_clock_counts_collections_and_their_cpu() -> None:
    from bench.profile_engine import _CollectorClock

    clock = _CollectorClock()
    gc.callbacks.append(clock)
    try:
        gc.collect(0)
        gc.collect()
    finally:
        gc.callbacks.remove(clock)
    assert clock.collections == 2 and clock.cpu >= 0.0
