"""What one /generate request costs the server in CPU, beside the engine: the figure the HTTP ratio of
`python -m bench --http` depends on, since on 2 cores every microsecond of it is taken from onnxruntime.

1. The real server under the HTTP benchmark's load (`clients` keep-alive clients posting the bundled
   mix back to back): CPU per request of the event loop thread (Linux gives the main thread the
   process id), of the server's other threads together (the engine thread and onnxruntime's pool),
   and of the load generator itself.
2. The app alone, in process: the same POST /generate through the ASGI app (middleware, routing,
   validation, tokenizing the input, the response) with an engine that answers at once, no sockets.

    PYTHONPATH=. python bench/http_cost.py [--model-dir models/normalize/1] [--loops 8]
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from bench.http_path import http_closed_loop
from bench.server import local_server
from bench.workload import bundled_texts
from service.app import create_app
from service.generation import GenerationParams, GenerationResult
from service.repository import load_model_directory
from service.settings import ServiceSettings
from service.tokenizer import Tokenizer


def thread_seconds(process: psutil.Process) -> dict[int, float]:
    return {t.id: t.user_time + t.system_time for t in process.threads()}


async def server_cost(model_dir: Path, *, clients: int, loops: int) -> None:
    texts = bundled_texts(clients * 12)
    tokens_of = dict.fromkeys(texts, 1)  # throughput is not the point here
    with local_server(model_dir, max_batch_size=32) as server:
        process = psutil.Process(server.process.pid)
        await http_closed_loop(server.url, texts, concurrency=clients, max_new_tokens=64, tokens_of=tokens_of)
        before, client_before, started = thread_seconds(process), time.process_time(), time.perf_counter()
        for _ in range(loops):
            await http_closed_loop(server.url, texts, concurrency=clients, max_new_tokens=64, tokens_of=tokens_of)
        requests, wall = loops * len(texts), time.perf_counter() - started
        client = time.process_time() - client_before
        spent = {tid: seconds - before.get(tid, 0.0) for tid, seconds in thread_seconds(process).items()}
    event_loop = spent.pop(process.pid, 0.0)
    print(f"server under load: {clients} clients, {requests} requests at {requests / wall:,.0f}/s")
    print(f"  event loop thread   {event_loop / requests * 1e6:6.0f} us CPU per request")
    print(f"  its other threads   {sum(spent.values()) / requests * 1e6:6.0f} us (engine, onnxruntime pool)")
    print(f"  load generator      {client / requests * 1e6:6.0f} us (this process)")


@dataclass(frozen=True)
class _Info:
    name: str
    version: str
    variant: str = "fp32"
    provider: str = "CPUExecutionProvider"


@dataclass(frozen=True)
class _Stats:
    queue_depth: int = 0
    running_sequences: int = 0


class _Answered:
    def __init__(self, result: GenerationResult) -> None:
        self.id = "answered"
        self._result = result

    def result(self) -> asyncio.Future[GenerationResult]:
        future = asyncio.get_running_loop().create_future()
        future.set_result(self._result)
        return future

    def cancel(self, reason: str = "disconnect") -> None:
        pass


class InstantEngine:
    """The engine API, answering every request at once: tokenizes and validates as the engine does."""

    def __init__(self, model_dir: Path) -> None:
        files = load_model_directory(model_dir)
        self.tokenizer = Tokenizer.from_file(files.tokenizer, eos_id=files.special_tokens["eos"])
        self.info = _Info(name=files.name, version=files.version, variant=files.variant)
        self.observer: Any = None
        self.ready = False
        self._result = GenerationResult(text="el tres de mayo", token_ids=list(range(17)), tokens=[],
                                        finish_reason="eos", input_token_ids=[], seed=None)

    async def start(self) -> None:
        self.ready = True

    async def stop(self, *, drain: bool = True, timeout_s: float) -> None:
        self.ready = False

    def stats(self) -> _Stats:
        return _Stats()

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        return self.tokenizer.encode(text)

    def submit(self, text: str, params: GenerationParams, **_: Any) -> _Answered:
        params.validate()
        self.tokenizer.encode(text)
        return _Answered(self._result)


async def app_cost(model_dir: Path, *, requests: int) -> None:
    engine = InstantEngine(model_dir)
    app = create_app(ServiceSettings(model_dir=model_dir), engine=engine)
    body = json.dumps({"inputs": bundled_texts(1)[0], "parameters": {"max_new_tokens": 64}}).encode()
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/generate", "raw_path": b"/generate", "query_string": b"",
             "root_path": "", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}

    async def one() -> None:
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop()
            await asyncio.Event().wait()  # the client never disconnects
            raise AssertionError("unreachable")

        async def send(message: Any) -> None:
            sent.append(message)

        await app(dict(scope, headers=list(headers)), receive, send)
        if sent[0]["status"] != 200:
            raise RuntimeError(f"/generate answered {sent[0]['status']}")

    async with app.router.lifespan_context(app):
        while not engine.ready:
            await asyncio.sleep(0.01)
        for _ in range(200):
            await one()
        started = time.thread_time()
        for _ in range(requests):
            await one()
        spent = time.thread_time() - started
    print(f"the app alone, in process: {spent / requests * 1e6:.0f} us CPU per request ({requests} requests)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--loops", type=int, default=8, help="rounds of 12 requests per client")
    parser.add_argument("--requests", type=int, default=3000, help="requests through the app in process")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(server_cost(args.model_dir, clients=args.clients, loops=args.loops))
    asyncio.run(app_cost(args.model_dir, requests=args.requests))


if __name__ == "__main__":
    main()
