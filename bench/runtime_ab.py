"""One runtime switch, A/B in one process: the same model in two engines that differ only in one boolean
`RuntimeSettings` field (otherwise configured as `python -m service` runs one), each at 32 concurrent
and one request at a time, alternating.

    PYTHONPATH=. python bench/runtime_ab.py --setting shared_thread_pool --requests 256 --rounds 4
    PYTHONPATH=. python bench/runtime_ab.py --setting decoder_allow_spinning

shared_thread_pool off is a pool per session with spinning off (the library default).
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.engine_batching import serve_one_at_a_time
from bench.workload import Run, alternate, bundled_texts, closed_loop, make_engine
from service.config import RuntimeSettings
from service.engine import Engine, GenerationParams

SWITCHES = sorted(name for name, spec in RuntimeSettings.model_fields.items() if spec.annotation in (bool, bool | None))


async def main(args: argparse.Namespace) -> None:
    # "off" loads first: once the process pool exists, onnxruntime refuses new sessions a pool of their
    # own (sessions made before keep theirs), which matters when the switch is shared_thread_pool.
    engines = {
        f"{args.setting}={value}": make_engine(
            Path(args.model_dir), max_batch_size=args.concurrency, runtime={args.setting: value}
        )
        for value in (False, True)
    }
    off, on = engines
    texts = bundled_texts(args.requests)
    params = GenerationParams(max_new_tokens=64)

    def concurrent(engine: Engine) -> Callable[[], Awaitable[float]]:
        async def run() -> float:
            return (await closed_loop(engine, texts, params, concurrency=args.concurrency)).tokens_per_s

        return run

    def one_at_a_time(engine: Engine) -> Callable[[], Awaitable[float]]:
        async def run() -> float:
            started = time.perf_counter()
            results = await serve_one_at_a_time(engine, texts[: args.requests // 4], params)
            return Run(sum(len(r.token_ids) for r in results), len(results), time.perf_counter() - started).tokens_per_s

        return run

    for engine in engines.values():  # in order: see above
        await engine.start()
    try:
        contenders = {}
        for name, engine in engines.items():
            contenders[f"{name}, {args.concurrency} concurrent"] = concurrent(engine)
            contenders[f"{name}, one at a time"] = one_at_a_time(engine)
        result = await alternate(contenders, rounds=args.rounds)
    finally:
        for engine in engines.values():
            await engine.stop(timeout_s=30)
    for name, values in result.rates.items():
        print(f"{name:>48}: median {result.median(name):,.0f} tok/s  rounds {[round(v) for v in values]}")
    for mode in (f"{args.concurrency} concurrent", "one at a time"):
        a, b = f"{on}, {mode}", f"{off}, {mode}"
        low, high = result.spread(a, b)
        print(f"on / off, {mode}: {result.ratio(a, b):.2f}x (median of per-round ratios; {low:.2f}-{high:.2f})")
    for name in engines:
        a, b = f"{name}, {args.concurrency} concurrent", f"{name}, one at a time"
        low, high = result.spread(a, b)
        print(f"{name}: {args.concurrency} concurrent / one at a time {result.ratio(a, b):.2f}x ({low:.2f}-{high:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setting", choices=SWITCHES, default="shared_thread_pool")
    parser.add_argument("--model-dir", default="models/normalize/1")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=4)
    asyncio.run(main(parser.parse_args()))
