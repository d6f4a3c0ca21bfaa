"""Benchmark 1: the engine's generated tokens/s with continuous batching against one request at a time
and against static batching (wait for a full batch, run it to the end), at 1, 8, 32 and 64 concurrent
clients in a closed loop. One engine; the three schedules alternate within one run.

Each client sends `texts_per_client` requests: the last ones finish with fewer than `concurrency` in
flight, so with few per client (the first version sent 3) the ramp-down, not the steady state, sets a
good part of the figure.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from bench.report import Figure
from bench.workload import (
    Run,
    alternate,
    bundled_texts,
    closed_loop,
    make_engine,
    serve_one_at_a_time,
    static_batches,
)
from service.engine import Engine, GenerationParams


async def run(
    model_dir: Path,
    *,
    concurrencies: Sequence[int],
    rounds: int,
    max_new_tokens: int = 64,
    texts_per_client: int = 8,
    decoder_spinning: bool | None = None,
) -> list[Figure]:
    engine = make_engine(model_dir, max_batch_size=max(concurrencies), decoder_spinning=decoder_spinning)
    await engine.start()
    params = GenerationParams(max_new_tokens=max_new_tokens)
    figures = []
    try:
        for concurrency in concurrencies:
            texts = bundled_texts(max(24, texts_per_client * concurrency))

            result = await alternate(_schedules(engine, texts, params, concurrency), rounds=rounds)
            rates = ", ".join(f"{n} {result.median(n):,.0f}" for n in result.rates)
            for baseline in ("one at a time", "static"):
                low, high = result.spread("continuous", baseline)
                bar = ">= 4x" if baseline == "one at a time" and concurrency == 32 else ""
                value = result.ratio("continuous", baseline)
                figures.append(
                    Figure(
                        "batching",
                        f"continuous / {baseline}, {concurrency} concurrent",
                        value,
                        "x",
                        detail=f"rounds {low:.2f}-{high:.2f}; {len(texts)} requests; tok/s: {rates}",
                        target=bar,
                        passed=(value >= 4) if bar else None,
                    )
                )
    finally:
        await engine.stop(timeout_s=30)
    return figures


def _schedules(
    engine: Engine, texts: list[str], params: GenerationParams, concurrency: int
) -> dict[str, Callable[[], Awaitable[float]]]:
    async def continuous() -> float:
        return (await closed_loop(engine, texts, params, concurrency=concurrency)).tokens_per_s

    async def one_at_a_time() -> float:
        started = time.perf_counter()
        results = await serve_one_at_a_time(engine, texts, params)  # the engine engineer's baseline
        return Run(sum(len(r.token_ids) for r in results), len(results), time.perf_counter() - started).tokens_per_s

    async def static() -> float:
        return (await static_batches(engine, texts, params, batch_size=concurrency)).tokens_per_s

    return {"continuous": continuous, "one at a time": one_at_a_time, "static": static}
