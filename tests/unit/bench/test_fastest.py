"""bench/fastest.py's choice of the contenders its bars compare."""

from __future__ import annotations

import pytest

fastest = pytest.importorskip("bench.fastest")


def test_the_fastest_way_must_match_fp32_on_99_percent() -> None:
    rates = {"fp32": 100.0, "int8": 180.0, "bf16": 300.0, "ct2 float32": 90.0, "ct2 int8": 200.0}
    same = {"fp32": 1.0, "int8": 0.99, "bf16": 0.97}
    chosen = fastest.pick_fastest(
        rates.__getitem__, same, atento=["fp32", "int8", "bf16"], peers=["ct2 float32", "ct2 int8"]
    )
    assert chosen == ("int8", "ct2 int8")  # bf16 is faster but changes 3% of the outputs


def test_fp32_always_qualifies() -> None:
    rates = {"fp32": 100.0, "int8": 180.0, "ct2 int8": 50.0}
    chosen = fastest.pick_fastest(
        rates.__getitem__, {"fp32": 1.0, "int8": 0.5}, atento=["fp32", "int8"], peers=["ct2 int8"]
    )
    assert chosen == ("fp32", "ct2 int8")
