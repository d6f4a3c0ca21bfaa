"""Benchmarks 4 and 5 on one engine configuration at saturation (a closed loop of N clients):
generation with `return_attention` against without, and the int8 variant against fp32.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.report import Figure
from bench.workload import alternate, closed_loop, make_engine
from service.engine import AttentionSpec, GenerationParams


async def attention_cost(
    model_dir: Path,
    texts: Sequence[str],
    *,
    concurrency: int,
    rounds: int,
    max_new_tokens: int = 64,
    label: str = "bundled",
    device: str = "cpu",
    decoder_spinning: bool | None = None,
) -> list[Figure]:
    """Same engine, same requests, with every attention kind kept (as POST /attention and
    `return_attention` ask) against none."""
    engine = make_engine(model_dir, max_batch_size=concurrency, device=device, decoder_spinning=decoder_spinning)
    await engine.start()
    params = GenerationParams(max_new_tokens=max_new_tokens)
    try:

        async def plain() -> float:
            return (await closed_loop(engine, texts, params, concurrency=concurrency)).tokens_per_s

        async def with_attention() -> float:
            return (
                await closed_loop(engine, texts, params, concurrency=concurrency, attention=AttentionSpec())
            ).tokens_per_s

        result = await alternate({"attention": with_attention, "plain": plain}, rounds=rounds)
    finally:
        await engine.stop(timeout_s=30)
    value = result.ratio("attention", "plain")
    low, high = result.spread("attention", "plain")
    return [
        Figure(
            "attention",
            f"{label}: with attention / without, {concurrency} concurrent",
            value,
            "x",
            detail=f"rounds {low:.2f}-{high:.2f}; tok/s: with {result.median('attention'):,.0f}, "
            f"without {result.median('plain'):,.0f}",
            target=">= 0.85x",
            passed=value >= 0.85,
        )
    ]


async def int8_speedup(
    model_dir: Path,
    texts: Sequence[str],
    *,
    concurrency: int,
    rounds: int,
    max_new_tokens: int = 64,
    label: str = "bundled",
    decoder_spinning: bool | None = None,
) -> list[Figure]:
    """The int8 variant's engine against the fp32 one, both loaded, alternating."""
    engines = {
        v: make_engine(model_dir, max_batch_size=concurrency, variant=v, decoder_spinning=decoder_spinning)
        for v in ("int8", "fp32")
    }
    for engine in engines.values():
        await engine.start()
    params = GenerationParams(max_new_tokens=max_new_tokens)
    try:

        def contender(variant: str):  # noqa: ANN202 - a closure factory
            async def run() -> float:
                return (await closed_loop(engines[variant], texts, params, concurrency=concurrency)).tokens_per_s

            return run

        result = await alternate({v: contender(v) for v in engines}, rounds=rounds)
    finally:
        for engine in engines.values():
            await engine.stop(timeout_s=30)
    low, high = result.spread("int8", "fp32")
    return [
        Figure(
            "int8",
            f"{label}: int8 / fp32 (CPU), {concurrency} concurrent",
            result.ratio("int8", "fp32"),
            "x",
            detail=f"rounds {low:.2f}-{high:.2f}; tok/s: int8 {result.median('int8'):,.0f}, "
            f"fp32 {result.median('fp32'):,.0f}",
        )
    ]
