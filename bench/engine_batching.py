"""Throughput of the engine at N concurrent requests vs the same requests served one at a time.

Both runs use one Engine on the same model directory, side by side in one process:
    .venv/bin/python bench/engine_batching.py --model-dir models/normalize/1 --concurrency 32
Prints requests/s and generated tokens/s of each run and the speed-up. Not a test: no threshold here.
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from service.config import BatchingSettings, RuntimeSettings
from service.engine import Engine, GenerationParams, GenerationResult

SENTENCES = (
    "Compramos 1234 tornillos para la mesa el 3 de mayo de 2021.",
    "The meeting moved to 14 February 1999, with 250 guests.",
    "El pueblo tiene 5678 habitantes según el censo de 2011.",
    "We sold 42 units last year and 1999 the year before.",
    "La empresa vendió 310 unidades el 25/12/2020.",
    "She was born on 7 July 1985 in a town of 12000 people.",
    "En la biblioteca hay 987 libros antiguos.",
    "Flight 815 leaves on 2024-03-05 at gate 23.",
)


def texts(engine: Engine, count: int) -> list[str]:
    out = []
    for i in range(count):
        text = SENTENCES[i % len(SENTENCES)] + ("" if i < len(SENTENCES) else f" #{i}")
        while len(engine.tokenize(text)[0]) > engine.info.max_source_tokens:
            text = text[:-4]  # small models have short limits
        out.append(text)
    return out


async def serve_one_at_a_time(engine: Engine, inputs: list[str], params: GenerationParams) -> list[GenerationResult]:
    return [await engine.submit(text, params, stream=False).result() for text in inputs]


async def serve_concurrently(engine: Engine, inputs: list[str], params: GenerationParams) -> list[GenerationResult]:
    handles = [engine.submit(text, params, stream=False) for text in inputs]
    return list(await asyncio.gather(*(h.result() for h in handles)))


async def main(args: argparse.Namespace) -> float:
    engine = Engine(
        Path(args.model_dir),
        runtime=RuntimeSettings(intra_op_threads=args.threads, shared_thread_pool=True),  # as the server
        batching=BatchingSettings(max_batch_size=args.concurrency, max_queue=args.concurrency * 2),
    )
    await engine.start()
    inputs = texts(engine, args.concurrency)
    params = GenerationParams(max_new_tokens=args.max_new_tokens, num_beams=args.num_beams)
    await serve_concurrently(engine, inputs, params)  # warm up, at every batch size the runs will see
    runs = (("one at a time", serve_one_at_a_time), (f"{args.concurrency} concurrent", serve_concurrently))
    elapsed = dict.fromkeys((name for name, _ in runs), 0.0)
    tokens = dict.fromkeys(elapsed, 0)
    outputs: dict[str, list[list[int]]] = {}
    for _ in range(args.rounds):  # alternate the two modes so that background load hits both alike
        for name, serve in runs:
            started = time.perf_counter()
            results = await serve(engine, inputs, params)
            elapsed[name] += time.perf_counter() - started
            tokens[name] += sum(len(r.tokens) for r in results)
            outputs[name] = [r.token_ids for r in results]
    rates = {}
    for name in elapsed:
        rates[name] = tokens[name] / elapsed[name]
        served = len(inputs) * args.rounds
        print(f"{name:>16}: {served / elapsed[name]:7.2f} req/s {rates[name]:8.1f} tok/s ({elapsed[name]:.2f}s)")
    await engine.stop(timeout_s=10)
    sequential, concurrent = rates.values()
    same = len(set(map(str, outputs.values()))) == 1
    print(f"speed-up at {args.concurrency} concurrent: {concurrent / sequential:.2f}x (same outputs: {same})")
    return concurrent / sequential


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="models/normalize/1")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--num-beams", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="alternating repetitions of both modes")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args(sys.argv[1:])))
