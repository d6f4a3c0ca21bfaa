"""Benchmark 7: the machine's fp32 matrix-multiply rate (large sgemm in numpy and torch), and the
FLOPs a model spends per generated token, so each configuration's tokens/s becomes a fraction of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from bench.report import Figure


def sgemm_gflops(*, size: int = 2048, seconds: float = 3.0, threads: int = 2) -> dict[str, float]:
    """Best-of GFLOP/s of size x size fp32 matmuls, numpy (its BLAS) and torch (threads fixed)."""
    torch.set_num_threads(threads)
    a = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((size, size), dtype=np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    calls: dict[str, Callable[[], Any]] = {"numpy": lambda: a @ b, "torch": lambda: ta @ tb}
    rates = {}
    for name, call in calls.items():
        call()
        best = float("inf")
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - started)
        rates[name] = 2 * size**3 / best / 1e9
    return rates


def flops_per_token(config: Mapping[str, Any], *, source_len: float, new_tokens: float) -> float:
    """Multiply-adds x 2 of one request (encoder, cross keys/values, every decoder step with its
    attention over the cache and the source, the output projection), divided by its generated tokens."""
    d, f, v = config["d_model"], config["d_ff"], config["vocab_size"]
    n_enc, n_dec = config["n_encoder_layers"], config["n_decoder_layers"]
    s, t = source_len, new_tokens
    encoder = s * n_enc * (4 * d * d + 2 * d * f + 2 * s * d) + s * n_dec * 2 * d * d  # + cross K, V
    # Decoder step k (1-based) attends over k cached positions; sum over k = t (t + 1) / 2.
    decoder = t * n_dec * (6 * d * d + 2 * d * f + 2 * s * d) + n_dec * 2 * d * t * (t + 1) / 2 + t * d * v
    return 2 * (encoder + decoder) / t


def figures(peak: dict[str, float], achieved: list[tuple[str, float, float]]) -> list[Figure]:
    """`achieved`: (configuration, tokens/s, FLOPs per token)."""
    best = max(peak.values())
    out = [Figure("hardware", f"fp32 sgemm 2048^3, 2 threads, {name}", rate, "GFLOP/s") for name, rate in peak.items()]
    for label, tokens_per_s, per_token in achieved:
        rate = tokens_per_s * per_token / 1e9
        detail = f"{tokens_per_s:,.0f} tok/s x {per_token / 1e6:,.1f} MFLOP/token = {rate:,.1f} GFLOP/s"
        out.append(Figure("hardware", f"{label}: share of the sgemm rate", 100 * rate / best, "%", detail=detail))
    return out
