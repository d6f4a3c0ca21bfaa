"""Cancellation: clients that hang up free their batch slots at once, on /generate and /generate_stream.

tests/integration/test_http_generate.py::test_disconnect_cancels_at_next_step proves one disconnect is
seen (fake engine). This proves it on the real engine with a crowd: streams hung up mid-stream, awaited
requests abandoned while running and while queued, all at once next to a request that stays. The queue
and running gauges drop to the survivor alone long before the abandoned work would have ended, every
cancellation is counted, and the survivor's output is exactly its unloaded output (dropping rows from the
running batch's KV cache must not disturb the rows that stay).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import httpx
import pytest
from harness import TEXTS, metrics, real_server, unloaded_outputs, wait_for_idle

from service.engine.settings import BatchingSettings

pytestmark = pytest.mark.slow

STEP_S = 0.04  # per decoder call: the survivor's 42 tokens take about 1.7 s
LONG = {"inputs": TEXTS[0], "parameters": {"max_new_tokens": 48}}  # 42 tokens, then EOS
STREAMS = 3
AWAITED = 3
BATCH = 1 + STREAMS + 1  # the survivor, the streams and one awaited request run; two awaited ones queue


async def _until(condition, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


def test_hung_up_clients_free_their_slots_at_once(tiny_model_dir: Path) -> None:
    batching = BatchingSettings(max_batch_size=BATCH, max_queue=16)
    with real_server(tiny_model_dir, batching=batching, delay_s=STEP_S, max_new_tokens_limit=64) as s:
        [expected] = unloaded_outputs(s.url, [LONG])
        before = metrics(s.url)
        stats = s.engine.stats

        async def scenario() -> tuple[httpx.Response, float]:
            async with httpx.AsyncClient(base_url=s.url, timeout=60) as client:
                survivor = asyncio.ensure_future(client.post("/generate", json=LONG))
                await _until(lambda: stats().running_requests == 1)
                readers = []  # referenced until the hang-up: a collected line iterator closes its stream
                async with contextlib.AsyncExitStack() as streams:
                    for _ in range(STREAMS):  # each reads its first token, then hangs up below
                        response = await streams.enter_async_context(
                            client.stream("POST", "/generate_stream", json=LONG)
                        )
                        readers.append(response.aiter_lines())
                        while not (await anext(readers[-1])).startswith("data:"):
                            pass
                    awaited = [asyncio.ensure_future(client.post("/generate", json=LONG)) for _ in range(AWAITED)]
                    await _until(lambda: (stats().running_requests, stats().queue_depth) == (BATCH, AWAITED - 1))
                    for request in awaited:
                        request.cancel()  # closes its connection: the server sees http.disconnect
                    hung_up = time.monotonic()
                # Streams closed mid-body: their connections are closed too.
                await _until(lambda: (stats().running_requests, stats().queue_depth) == (1, 0))
                freed_after = time.monotonic() - hung_up
                assert not survivor.done(), "the survivor must still be running: slots freed, not finished"
                return await survivor, freed_after

        survivor, freed_after = asyncio.run(scenario())
        assert freed_after < 0.5, f"slots freed after {freed_after:.2f}s"
        assert survivor.status_code == 200 and survivor.json()["generated_text"] == expected
        after = wait_for_idle(s.url)
        disconnects = ("atento_cancellations_total", (("reason", "disconnect"),))
        assert after[disconnects] - before[disconnects] == STREAMS + AWAITED
        assert s.engine.stats() == type(s.engine.stats())(0, 0, 0)
