"""Benchmarks 3 and 6: the HTTP service's throughput at saturation against the engine alone (the
same model, batching and threads; requests alternate between the two in one run), and the server
process's resident memory (psutil) at idle and at saturation.

Saturation means more closed-loop clients than batch rows (`clients` = 2 x `max_batch_size` in
`python -m bench`), so that both arms always have a request waiting for the next free row: with
exactly as many clients as rows, a request's HTTP round trip leaves its row empty meanwhile, and the
figure measures that latency as well as the HTTP layer's cost. Rounds are long (12 requests per
client) so that the ramp-up and the ramp-down, where both arms run part-empty batches, weigh little.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from bench.report import Figure
from bench.workload import alternate, closed_loop, make_engine
from deploy.loadtest.local_server import local_server
from service.engine import GenerationParams

MIB = 1024 * 1024


class Connection:
    """A minimal HTTP/1.1 keep-alive client: a lean load generator matters when it shares 2 cores with
    the server (httpx cost more CPU per request than the server's whole HTTP layer)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, url: str) -> Connection:
        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        return cls(reader, writer, parts.netloc)

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.writer.write(head + body)
        status_line, *header_lines = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in header_lines if ": " in line)
        length = int(next(v for k, v in headers.items() if k.lower() == "content-length"))
        return int(status_line.split()[1]), await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def http_closed_loop(
    url: str, texts: Sequence[str], *, concurrency: int, max_new_tokens: int, tokens_of: dict[str, int]
) -> float:
    """Generated tokens/s of `concurrency` clients posting /generate back to back. Without `details`
    (as most TGI clients), so tokens are counted from the engine's greedy outputs of the same texts."""
    queue = list(reversed(texts))
    connections = [await Connection.open(url) for _ in range(concurrency)]

    async def worker(connection: Connection) -> None:
        while queue:
            text = queue.pop()
            body = json.dumps({"inputs": text, "parameters": {"max_new_tokens": max_new_tokens}}).encode()
            status, _ = await connection.post("/generate", body)
            if status != 200:
                raise RuntimeError(f"/generate answered {status}")

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in connections))
    finally:
        for connection in connections:
            connection.close()
    return sum(tokens_of[t] for t in texts) / (time.perf_counter() - started)


async def run(
    model_dir: Path,
    texts: Sequence[str],
    *,
    clients: int,
    max_batch_size: int,
    rounds: int,
    max_new_tokens: int = 64,
    device: str = "cpu",
    variant: str | None = None,
    decoder_spinning: bool | None = None,
    memory: bool = True,
) -> list[Figure]:
    """HTTP / engine alone with `clients` closed-loop clients each, on `texts` per round; with `memory`,
    also the server's RSS at idle and its peak during the HTTP rounds."""
    engine = make_engine(
        model_dir, max_batch_size=max_batch_size, device=device, variant=variant, decoder_spinning=decoder_spinning
    )
    await engine.start()
    params = GenerationParams(max_new_tokens=max_new_tokens)
    rss: list[int] = []
    try:
        with local_server(
            model_dir, max_batch_size=max_batch_size, device=device, variant=variant, decoder_spinning=decoder_spinning
        ) as server:
            process = psutil.Process(server.process.pid)
            warm = await closed_loop(engine, texts, params, concurrency=clients)
            tokens_of = {text: len(r.token_ids) for text, r in zip(texts, warm.results, strict=True)}
            await http_closed_loop(
                server.url, texts[:8], concurrency=4, max_new_tokens=max_new_tokens, tokens_of=tokens_of
            )  # warm up
            await asyncio.sleep(1.0)
            idle = process.memory_info().rss

            async def sample() -> None:
                while True:
                    rss.append(process.memory_info().rss)
                    await asyncio.sleep(0.05)

            sampler = asyncio.create_task(sample())

            async def over_http() -> float:
                return await http_closed_loop(
                    server.url, texts, concurrency=clients, max_new_tokens=max_new_tokens, tokens_of=tokens_of
                )

            async def engine_alone() -> float:
                return (await closed_loop(engine, texts, params, concurrency=clients)).tokens_per_s

            result = await alternate({"http": over_http, "engine": engine_alone}, rounds=rounds)
            sampler.cancel()
    finally:
        await engine.stop(timeout_s=30)
    value = result.ratio("http", "engine")
    where = "" if device == "cpu" else f", {device} {variant or ''}"
    saturated = clients > max_batch_size
    low, high = result.spread("http", "engine")
    figures = [
        Figure(
            "http",
            f"HTTP /generate / engine alone, {clients} clients, batches of {max_batch_size}"
            f"{' (saturation)' if saturated else ''}{where}",
            value,
            "x",
            detail=f"rounds {low:.2f}-{high:.2f}; tok/s: HTTP {result.median('http'):,.0f}, "
            f"engine {result.median('engine'):,.0f}; {len(texts)} requests a round; "
            "lean keep-alive client on the same 2 cores",
            target=">= 0.8x" if saturated else "",
            passed=value >= 0.8 if saturated else None,
        ),
    ]
    if memory:
        figures += [
            Figure("memory", "server RSS at idle (after warm-up)", idle / MIB, "MiB"),
            Figure(
                "memory",
                f"server RSS under load ({clients} clients), peak",
                max(rss) / MIB,
                "MiB",
                detail=f"median {statistics.median(rss) / MIB:,.0f} MiB over {len(rss)} samples",
            ),
        ]
    return figures
