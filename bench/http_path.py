"""Benchmarks 3 and 6: the HTTP service's throughput at saturation against the engine alone (the
same model, batching and threads; requests alternate between the two in one run), and the server
process's resident memory (psutil) at idle and at saturation.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import psutil

from bench.report import Figure
from bench.server import local_server
from bench.workload import alternate, closed_loop, make_engine
from service.engine import GenerationParams

MIB = 1024 * 1024


async def http_closed_loop(client: httpx.AsyncClient, texts: Sequence[str], *, concurrency: int,
                           max_new_tokens: int) -> float:
    """Generated tokens/s of `concurrency` clients posting /generate back to back (EOS not counted)."""
    queue = list(reversed(texts))
    tokens = 0

    async def worker() -> None:
        nonlocal tokens
        while queue:
            text = queue.pop()
            response = await client.post("/generate", json={
                "inputs": text, "parameters": {"max_new_tokens": max_new_tokens, "details": True}})
            response.raise_for_status()
            details = response.json()["details"]
            tokens += details["generated_tokens"] - (details["finish_reason"] == "eos_token")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return tokens / (time.perf_counter() - started)


async def run(model_dir: Path, texts: Sequence[str], *, concurrency: int, rounds: int,
              max_new_tokens: int = 64, device: str = "cpu", variant: str | None = None) -> list[Figure]:
    engine = make_engine(model_dir, max_batch_size=concurrency, device=device, variant=variant)
    await engine.start()
    params = GenerationParams(max_new_tokens=max_new_tokens)
    rss: list[int] = []
    try:
        with local_server(model_dir, max_batch_size=concurrency, device=device, variant=variant) as server:
            process = psutil.Process(server.process.pid)
            limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=120) as client:
                await http_closed_loop(client, texts[:8], concurrency=4, max_new_tokens=max_new_tokens)  # warm
                await asyncio.sleep(1.0)
                idle = process.memory_info().rss

                async def sample() -> None:
                    while True:
                        rss.append(process.memory_info().rss)
                        await asyncio.sleep(0.05)

                sampler = asyncio.create_task(sample())

                async def over_http() -> float:
                    return await http_closed_loop(client, texts, concurrency=concurrency,
                                                  max_new_tokens=max_new_tokens)

                async def engine_alone() -> float:
                    return (await closed_loop(engine, texts, params, concurrency=concurrency)).tokens_per_s

                result = await alternate({"http": over_http, "engine": engine_alone}, rounds=rounds)
                sampler.cancel()
    finally:
        await engine.stop(timeout_s=30)
    value = result.ratio("http", "engine")
    where = "" if device == "cpu" else f", {device} {variant or ''}"
    low, high = result.spread("http", "engine")
    return [
        Figure("http", f"HTTP /generate / engine alone, {concurrency} concurrent{where}", value, "x",
               detail=f"rounds {low:.2f}-{high:.2f}; tok/s: HTTP {result.median('http'):,.0f}, "
                      f"engine {result.median('engine'):,.0f}; client in the same machine",
               target=">= 0.8x", passed=value >= 0.8),
        Figure("memory", "server RSS at idle (after warm-up)", idle / MIB, "MiB"),
        Figure("memory", f"server RSS at saturation ({concurrency} concurrent), peak", max(rss) / MIB, "MiB",
               detail=f"median {statistics.median(rss) / MIB:,.0f} MiB over {len(rss)} samples"),
    ]
