"""The cache trim, A/B in one process: the same engine in a closed loop with
`KvCache.trim_left_padding` on (the shipped behaviour) and switched off, alternating.

    PYTHONPATH=. python bench/cache_trim.py --requests 512 --rounds 4
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import statistics
from pathlib import Path

from bench.workload import bundled_texts, closed_loop, make_engine
from service.engine import GenerationParams
from service.runner import KvCache


async def main(args: argparse.Namespace) -> None:
    trim = KvCache.trim_left_padding
    engine = make_engine(Path(args.model_dir), max_batch_size=args.concurrency)
    await engine.start()
    texts = bundled_texts(args.requests)
    params = GenerationParams(max_new_tokens=64)
    rates: dict[str, list[float]] = {"trim": [], "no trim": []}
    try:
        await closed_loop(engine, texts, params, concurrency=args.concurrency)  # warm-up
        for round_index in range(args.rounds):
            for name in list(rates) if round_index % 2 == 0 else reversed(list(rates)):
                KvCache.trim_left_padding = trim if name == "trim" else (lambda cache: cache)  # type: ignore[method-assign]
                run = await closed_loop(engine, texts, params, concurrency=args.concurrency)
                rates[name].append(run.tokens_per_s)
    finally:
        KvCache.trim_left_padding = trim  # type: ignore[method-assign]
        await engine.stop(timeout_s=30)
    for name, values in rates.items():
        print(f"{name:>8}: median {statistics.median(values):,.0f} tok/s  rounds {[round(v) for v in values]}")
    print(f"trim / no trim: {statistics.median(rates['trim']) / statistics.median(rates['no trim']):.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="models/normalize/1")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--requests", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=4)
    asyncio.run(main(parser.parse_args()))
