"""The cache trim, A/B in one process: the same engine in a closed loop with
`KvCache.trim_left_padding` on (the shipped behaviour) and switched off, alternating.

    PYTHONPATH=. python bench/cache_trim.py --requests 512 --rounds 4
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.workload import alternate, bundled_texts, closed_loop, make_engine
from service.engine import GenerationParams
from service.runner import KvCache


async def main(args: argparse.Namespace) -> None:
    trim = KvCache.trim_left_padding
    engine = make_engine(Path(args.model_dir), max_batch_size=args.concurrency)
    await engine.start()
    texts = bundled_texts(args.requests)
    params = GenerationParams(max_new_tokens=64)

    def contender(method: Callable[[KvCache], KvCache]) -> Callable[[], Awaitable[float]]:
        async def run() -> float:
            KvCache.trim_left_padding = method  # type: ignore[method-assign]
            return (await closed_loop(engine, texts, params, concurrency=args.concurrency)).tokens_per_s

        return run

    try:
        result = await alternate({"trim": contender(trim), "no trim": contender(lambda cache: cache)},
                                 rounds=args.rounds)
    finally:
        KvCache.trim_left_padding = trim  # type: ignore[method-assign]
        await engine.stop(timeout_s=30)
    for name, values in result.rates.items():
        print(f"{name:>8}: median {result.median(name):,.0f} tok/s  rounds {[round(v) for v in values]}")
    low, high = result.spread("trim", "no trim")
    print(f"trim / no trim: {result.ratio('trim', 'no trim'):.2f}x (median of per-round ratios; {low:.2f}-{high:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="models/normalize/1")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--requests", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=4)
    asyncio.run(main(parser.parse_args()))
