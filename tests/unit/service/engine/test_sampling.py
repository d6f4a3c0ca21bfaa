from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.sampling import TokenChooser, apply_repetition_penalty, top_k_filter, top_p_filter
from service.engine.types import GenerationParams


def test_greedy_ties_go_to_the_lowest_id() -> None:
    logits = np.array([0.0, 3.0, 1.0, 3.0], dtype=np.float32)
    assert TokenChooser(GenerationParams(), seed=None).choose(logits, [])[0] == 1


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**63 - 1),
    temperature=st.floats(0.1, 3.0),
    top_k=st.none() | st.integers(1, 40),
    top_p=st.none() | st.floats(0.05, 1.0),
)
def test_same_seed_same_tokens(seed: int, temperature: float, top_k: int | None, top_p: float | None) -> None:
    params = GenerationParams(do_sample=True, seed=seed, temperature=temperature, top_k=top_k, top_p=top_p)
    rows = np.random.default_rng(0).normal(size=(12, 40)).astype(np.float32)
    first = TokenChooser(params, seed=seed)
    second = TokenChooser(params, seed=seed)
    assert [first.choose(r, [])[0] for r in rows] == [second.choose(r, [])[0] for r in rows]


def test_top_k_and_top_p_only_sample_the_kept_tokens() -> None:
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05], dtype=np.float32))
    assert np.isfinite(top_k_filter(logits, 2)).tolist() == [True, True, False, False]
    assert np.isfinite(top_p_filter(logits, 0.7)).tolist() == [True, True, False, False]
    assert np.isfinite(top_p_filter(logits, 0.1)).tolist() == [True, False, False, False]
    chooser = TokenChooser(GenerationParams(do_sample=True, top_k=2), seed=1)
    assert {chooser.choose(logits, [])[0] for _ in range(200)} == {0, 1}


def test_repetition_penalty_is_ctrl_style() -> None:
    logits = np.array([2.0, -2.0, 1.0], dtype=np.float32)
    assert apply_repetition_penalty(logits, [0, 1, 1], 2.0).tolist() == [1.0, -4.0, 1.0]


def test_reported_logprob_is_the_models() -> None:
    logits = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    token, logprob = TokenChooser(GenerationParams(temperature=0.5, do_sample=True), seed=3).choose(logits, [])
    expected = logits[token] - np.log(np.exp(logits).sum())
    assert abs(logprob - expected) < 1e-5


def test_extreme_but_valid_temperature_and_penalty_stay_finite() -> None:
    logits = np.array([1.0, 3.0, 2.0], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or division by zero on the way
        for penalty in (5e-324, 1e308):
            penalized = apply_repetition_penalty(logits, [0, 1], penalty)
            assert np.isfinite(penalized).all() and penalized[2] == 2.0  # an id not generated is untouched
        for temperature, filters in ((1e-50, {}), (5e-324, {}), (5e-324, {"top_k": 2, "top_p": 0.9})):
            cold = TokenChooser(GenerationParams(do_sample=True, temperature=temperature, **filters), seed=0)
            assert {cold.choose(logits, [])[0] for _ in range(20)} == {1}  # as good as greedy
