"""Engine processes (BatchingSettings.processes, service/engine/replicas.py) on the session's tiny model: the same
outputs, streams and attention as one engine in this process; refusals, cancels, metrics hooks and logs cross
back; a killed engine process fails only its requests and is started again; stop drains and ends them all."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from service.engine import AttentionSpec, Engine, GenerationParams
from service.engine.errors import InferenceFailed, InputTooLong, InvalidInput, ModelNotReady, Overloaded
from service.engine.observer import NoObserver
from service.engine.replicas import ReplicatedEngine, build_engine
from service.engine.settings import BatchingSettings, RuntimeSettings

pytestmark = pytest.mark.slow

RUNTIME = RuntimeSettings(intra_op_threads=1)
MAX_NEW = 24


class Recorder(NoObserver):
    def __init__(self) -> None:
        self.steps = 0
        self.finished = 0
        self.cancels: list[str] = []

    def on_step(self, batch_size: int, duration_s: float) -> None:
        self.steps += 1

    def on_finish(self, input_tokens: int, generated_tokens: int) -> None:
        self.finished += 1

    def on_cancel(self, reason: str) -> None:
        self.cancels.append(reason)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    from model.data import generate_examples

    return [e.source for e in generate_examples(10, seed=4321, split="test")]


def _engines(model_dir: Path, **batching: Any) -> tuple[Engine, ReplicatedEngine]:
    one = Engine(model_dir, runtime=RUNTIME, batching=BatchingSettings(max_batch_size=16, max_queue=64))
    settings = BatchingSettings(max_batch_size=16, max_queue=64, processes=2, **batching)
    replicated = build_engine(model_dir, runtime=RUNTIME, batching=settings)
    assert isinstance(replicated, ReplicatedEngine)
    return one, replicated


def _wait_until(condition: Any, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_processes_serve_what_one_engine_serves(tiny_model_dir: Path, texts: list[str]) -> None:
    one, replicated = _engines(tiny_model_dir)
    observer = Recorder()
    replicated.observer = observer
    spec = AttentionSpec()

    async def run() -> None:
        await one.start()
        await replicated.start()
        try:
            assert replicated.info.limits["processes"] == 2 and replicated.info.limits["max_batch_size"] == 16
            assert replicated.info.variant == one.info.variant
            assert replicated.tokenize(texts[0]) == one.tokenize(texts[0])
            greedy = GenerationParams(max_new_tokens=MAX_NEW)
            beams = GenerationParams(max_new_tokens=MAX_NEW, num_beams=3)
            expected = [await one.submit(t, greedy, stream=False).result() for t in texts]
            expected_beams = [await one.submit(t, beams, stream=False).result() for t in texts[:3]]
            handles = [replicated.submit(t, greedy, stream=False) for t in texts]
            beam_handles = [replicated.submit(t, beams, stream=False) for t in texts[:3]]
            got = await asyncio.gather(*(h.result() for h in handles))
            got_beams = await asyncio.gather(*(h.result() for h in beam_handles))
            for want, have in zip(expected + expected_beams, got + got_beams, strict=True):
                assert (have.text, have.finish_reason) == (want.text, want.finish_reason)
                assert have.token_ids == want.token_ids
                assert [e.id for e in have.tokens] == [e.id for e in want.tokens]
                assert have.input_token_ids == want.input_token_ids
            # A stream: its tokens one by one, then the same result.
            stream = replicated.submit(texts[1], greedy)
            await stream.admitted()
            events = [event async for event in stream]
            assert [e.id for e in events] == [e.id for e in expected[1].tokens]
            assert "".join(e.text for e in events) == expected[1].text
            assert (await stream.result()).text == expected[1].text
            # Attention crosses whole: every kind, layer and head, as the engine in this process computes it.
            want_attention = (await one.submit(texts[2], greedy, attention=spec, stream=False).result()).attention
            relayed = replicated.submit(texts[2], greedy, attention=spec, stream=False)
            have_attention = (await relayed.result()).attention
            assert want_attention is not None and have_attention is not None
            for kind in ("encoder", "decoder", "cross"):
                for layer, weights in getattr(want_attention, kind).items():
                    np.testing.assert_allclose(getattr(have_attention, kind)[layer], weights, atol=1e-5)
            assert replicated.stats() == type(replicated.stats())(0, 0, 0)
        finally:
            await one.stop(timeout_s=10)
            await replicated.stop(timeout_s=10)
        assert not replicated.ready
        # The metrics hooks of both processes reached this process's observer.
        assert observer.finished >= len(texts) + 3 and observer.steps > 0

    asyncio.run(run())
    _wait_until(lambda: not multiprocessing.active_children(), timeout_s=10)


def test_refusals_cancels_and_logs_cross_back(
    tiny_model_dir: Path, texts: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    observer = Recorder()
    settings = BatchingSettings(max_batch_size=2, max_queue=2, processes=2)
    engine = build_engine(tiny_model_dir, runtime=RUNTIME, batching=settings, observer=observer)

    async def run() -> None:
        with caplog.at_level(logging.INFO):
            await engine.start()
        try:
            # The engine processes' log records, through this process's handlers, marked with their process.
            loaded = [r for r in caplog.records if r.name == "service.engine.engine" and "variant" in r.getMessage()]
            assert sorted(getattr(r, "engine_process", None) for r in loaded) == [0, 1]
            invalid = engine.submit(texts[0], GenerationParams(temperature=0))
            with pytest.raises(InvalidInput, match="temperature"):
                await invalid.admitted()
            with pytest.raises(InvalidInput):
                await invalid.result()
            too_long = engine.submit("uno " * 1000, GenerationParams())
            with pytest.raises(InputTooLong):
                await too_long.admitted()
            # One row and one queued request a process: a burst overflows both, refused with its Retry-After.
            burst = [engine.submit(t, GenerationParams(max_new_tokens=MAX_NEW), stream=False) for t in texts]
            outcomes = await asyncio.gather(*(h.result() for h in burst), return_exceptions=True)
            refused = [o for o in outcomes if isinstance(o, Overloaded)]
            assert refused and all(o.retry_after_s > 0 for o in refused)
            assert all(not isinstance(o, BaseException) for o in outcomes if not isinstance(o, Overloaded))
            # A cancel reaches the process that holds the request, and its on_cancel comes back.
            # 190 tokens (about 50 ms of the tiny model's steps): long enough for the cancel's round trip, which
            # 24 tokens were not once steps got faster.
            doomed = engine.submit(texts[3], GenerationParams(max_new_tokens=190))
            await doomed.admitted()
            doomed.cancel("disconnect")
            with pytest.raises(asyncio.CancelledError):
                await doomed.result()
            deadline = time.monotonic() + 5
            while "disconnect" not in observer.cancels and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert "disconnect" in observer.cancels
        finally:
            await engine.stop(timeout_s=10)
        with pytest.raises(ModelNotReady):
            engine.submit(texts[0], GenerationParams())

    asyncio.run(run())


def test_a_killed_engine_process_fails_its_requests_and_starts_again(tiny_model_dir: Path, texts: list[str]) -> None:
    engine = build_engine(tiny_model_dir, runtime=RUNTIME, batching=BatchingSettings(max_batch_size=8, processes=2))

    async def run() -> None:
        await engine.start()
        try:
            children = multiprocessing.active_children()
            assert len(children) == 2
            # Long, sampled hot: still running when the signal lands.
            hot = GenerationParams(max_new_tokens=MAX_NEW, do_sample=True, temperature=3.0, seed=3)
            handles = [engine.submit(t, hot, stream=False) for t in texts[:8]]
            await asyncio.gather(*(h.admitted() for h in handles))
            victim = children[0]
            os.kill(victim.pid, signal.SIGKILL)
            outcomes = await asyncio.gather(*(h.result() for h in handles), return_exceptions=True)
            failed = [o for o in outcomes if isinstance(o, BaseException)]
            assert all(isinstance(o, InferenceFailed) and "engine process exited" in str(o) for o in failed)
            # The other process kept serving meanwhile, and the killed one comes back.
            alone = await engine.submit(texts[0], GenerationParams(max_new_tokens=MAX_NEW), stream=False).result()
            assert alone.text
            deadline = time.monotonic() + 60
            while len([c for c in multiprocessing.active_children() if c.pid != victim.pid]) < 2:
                assert time.monotonic() < deadline, "the killed engine process was not started again"
                await asyncio.sleep(0.1)
            while not all(link.alive for link in engine._links):  # noqa: SLF001 - the restart's own flag
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
            burst = [engine.submit(t, GenerationParams(max_new_tokens=MAX_NEW), stream=False) for t in texts]
            assert all(r.text for r in await asyncio.gather(*(h.result() for h in burst)))
        finally:
            await engine.stop(timeout_s=10)

    asyncio.run(run())
    _wait_until(lambda: not multiprocessing.active_children(), timeout_s=10)


def test_stop_drains_what_is_in_flight(tiny_model_dir: Path, texts: list[str]) -> None:
    engine = build_engine(tiny_model_dir, runtime=RUNTIME, batching=BatchingSettings(max_batch_size=4, processes=2))

    async def run() -> None:
        await engine.start()
        handles = [engine.submit(t, GenerationParams(max_new_tokens=MAX_NEW), stream=False) for t in texts]
        await asyncio.gather(*(h.admitted() for h in handles))
        await engine.stop(drain=True, timeout_s=30)
        results = await asyncio.gather(*(h.result() for h in handles))
        assert all(r.text for r in results)

    asyncio.run(run())
    _wait_until(lambda: not multiprocessing.active_children(), timeout_s=10)


def test_an_engine_process_that_cannot_load_fails_the_start(tmp_path: Path) -> None:
    engine = build_engine(tmp_path, runtime=RUNTIME, batching=BatchingSettings(processes=2))

    async def run() -> None:
        with pytest.raises(Exception, match="manifest.json is missing"):
            await engine.start()

    asyncio.run(run())
    _wait_until(lambda: not multiprocessing.active_children(), timeout_s=10)


def test_a_cancelled_start_leaves_no_process(tiny_model_dir: Path) -> None:
    """A shutdown while the model loads (the app cancels the start, then stops the engine): no engine process is
    left behind, whether it had loaded already or not."""
    for delay_s in (0.05, 0.5, 3.0):
        engine = build_engine(tiny_model_dir, runtime=RUNTIME, batching=BatchingSettings(max_batch_size=4, processes=2))

        async def run(engine: Any = engine, delay_s: float = delay_s) -> None:
            starting = asyncio.ensure_future(engine.start())
            await asyncio.sleep(delay_s)
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            await engine.stop(drain=True, timeout_s=1)
            assert not engine.ready

        asyncio.run(run())
        _wait_until(lambda: not multiprocessing.active_children(), timeout_s=10)
