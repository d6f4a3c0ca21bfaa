"""The engine against the session's tiny model: parity with model.decoding's PyTorch reference, alone
and interleaved with random other requests, plus cancellation, deadlines and an injected fault.

Only this test imports torch/model (for the reference); service/ never does.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine import AttentionSpec, Engine, GenerationParams, GenerationResult
from service.engine.errors import DeadlineExceeded, InferenceFailed, InputTooLong, InvalidInput
from service.engine.model_dir import ModelFiles
from service.engine.runner import OnnxRunner, Runner
from service.engine.settings import BatchingSettings, RuntimeSettings

pytestmark = pytest.mark.slow

MAX_NEW = 24
BEAMS = 3
RUNTIME = RuntimeSettings(intra_op_threads=1)


@pytest.fixture(scope="module")
def held_out_texts() -> list[str]:
    from model.data import generate_examples

    return [e.source for e in generate_examples(12, seed=1234, split="test")]


@pytest.fixture(scope="module")
def engine(tiny_model_dir: Path) -> Iterator[Engine]:
    engine = Engine(tiny_model_dir, runtime=RUNTIME, batching=BatchingSettings(max_batch_size=16, max_queue=64))
    asyncio.run(engine.start())
    yield engine
    asyncio.run(engine.stop(timeout_s=10))


@pytest.fixture(scope="module")
def reference(tiny_checkpoint_dir: Path, engine: Engine, held_out_texts: list[str]) -> dict[str, Any]:
    """PyTorch greedy and beam outputs of every held-out text, each decoded alone."""
    from model.checkpoint import load_checkpoint
    from model.decoding import beam_search, greedy_decode

    model = load_checkpoint(tiny_checkpoint_dir).model
    out: dict[str, Any] = {}
    for text in held_out_texts:
        ids = engine.tokenize(text)[0]
        out[text] = (
            list(greedy_decode(model, [ids], max_new_tokens=MAX_NEW)[0].tokens),
            list(beam_search(model, ids, num_beams=BEAMS, max_new_tokens=MAX_NEW).tokens),
        )
    return out


def greedy(**kw: Any) -> GenerationParams:
    return GenerationParams(**{"max_new_tokens": MAX_NEW, **kw})


def test_alone_matches_the_reference(engine: Engine, reference: dict[str, Any]) -> None:
    async def run() -> None:
        for text, (ref_greedy, ref_beam) in reference.items():
            g = await engine.submit(text, greedy()).result()
            b = await engine.submit(text, greedy(num_beams=BEAMS)).result()
            assert g.token_ids == ref_greedy, text
            assert b.token_ids == ref_beam, text

    asyncio.run(run())


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_interleaving_never_changes_results(engine: Engine, reference: dict[str, Any], data: st.DataObject) -> None:
    texts = list(reference)
    chosen = data.draw(st.lists(st.sampled_from(texts), min_size=1, max_size=4), label="inputs")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = random.Random(seed)

    async def one(text: str, beam: bool, delay: float) -> tuple[str, bool, GenerationResult]:
        await asyncio.sleep(delay)
        params = greedy(num_beams=BEAMS) if beam else greedy()
        return text, beam, await engine.submit(text, params).result()

    async def other(delay: float) -> None:
        await asyncio.sleep(delay)
        params = rng.choice(
            [
                greedy(max_new_tokens=rng.randint(1, MAX_NEW)),
                greedy(do_sample=True, temperature=1.5, top_p=0.9),
                greedy(num_beams=2, length_penalty=0.5),
                greedy(repetition_penalty=1.3, stop=("a",)),
            ]
        )
        handle = engine.submit(rng.choice(texts)[: rng.randint(1, 60)], params)
        if rng.random() < 0.4:  # leave mid-flight
            await asyncio.sleep(rng.random() * 0.02)
            handle.cancel()
        try:
            await handle.result()
        except asyncio.CancelledError:
            pass

    async def run() -> list[tuple[str, bool, GenerationResult]]:
        tasks = [one(t, rng.random() < 0.5, rng.random() * 0.05) for t in chosen]
        others = [other(rng.random() * 0.05) for _ in range(rng.randint(1, 6))]
        results = await asyncio.gather(*tasks, *others)
        return [r for r in results if r is not None]

    for text, beam, result in asyncio.run(run()):
        ref_greedy, ref_beam = reference[text]
        assert result.token_ids == (ref_beam if beam else ref_greedy), (text, beam)


def test_stream_sampling_seed_and_attention(engine: Engine, held_out_texts: list[str]) -> None:
    text = held_out_texts[0]

    async def run() -> None:
        params = greedy(do_sample=True, seed=7, top_k=5)
        alone = await engine.submit(text, params).result()
        crowd = [engine.submit(t, greedy(do_sample=True)) for t in held_out_texts[1:6]]
        handle = engine.submit(text, params)
        streamed = [event async for event in handle]
        mixed = await handle.result()
        await asyncio.gather(*(h.result() for h in crowd))
        assert mixed.token_ids == alone.token_ids and mixed.seed == 7
        assert "".join(e.text for e in streamed) == mixed.text
        assert [e.id for e in streamed] == [e.id for e in mixed.tokens]
        quiet = engine.submit(text, params, stream=False)  # result only: no per-token hand-off
        with pytest.raises(RuntimeError, match="stream=False"):
            quiet.__aiter__()
        assert (await quiet.result()).token_ids == alone.token_ids

        spec = AttentionSpec(layers=(1,), heads=(0,))
        result = await engine.submit(text, greedy(), attention=spec).result()
        assert result.attention is not None
        steps, source = len(result.tokens), len(result.input_token_ids)
        assert result.attention.decoder[1].shape == (1, steps, steps)
        assert result.attention.cross[1].shape == (1, steps, source)
        assert result.attention.encoder[1].shape == (1, source, source)
        np.testing.assert_allclose(result.attention.cross[1].sum(-1), 1.0, atol=1e-5)
        assert await engine.submit(text, greedy()).result() == await engine.submit(text, greedy()).result()

        full = await engine.submit(text, greedy(), attention=AttentionSpec()).result()
        forced = await engine.submit(text, greedy(), attention=AttentionSpec(), forced_target=full.text).result()
        assert forced.token_ids == full.token_ids
        if full.finish_reason == "eos":  # then both ran the decoder over the same BOS + tokens
            assert full.attention is not None and forced.attention is not None
            np.testing.assert_allclose([t.logprob for t in forced.tokens], [t.logprob for t in full.tokens], atol=1e-4)
            for layer in (0, 1):
                np.testing.assert_allclose(forced.attention.decoder[layer], full.attention.decoder[layer], atol=1e-5)
                np.testing.assert_allclose(forced.attention.cross[layer], full.attention.cross[layer], atol=1e-5)

    asyncio.run(run())


def test_submit_validation(engine: Engine) -> None:
    async def run() -> None:
        with pytest.raises(InvalidInput):
            engine.submit("x", GenerationParams(temperature=0))
        with pytest.raises(InvalidInput):
            engine.submit("x", GenerationParams(num_beams=2, do_sample=True))
        with pytest.raises(InputTooLong):
            engine.submit("uno " * 1000, GenerationParams())

    asyncio.run(run())


class SlowRunner:
    """Sleeps in every decoder step, so a test can act while a request is surely mid-flight."""

    def __init__(self, inner: Runner, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.decoded_rows: list[int] = []

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.encode(*args, **kwargs)

    def decode(self, tgt: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(self.delay_s)
        self.decoded_rows.append(tgt.shape[0])
        return self.inner.decode(tgt, *args, **kwargs)


def test_cancel_and_deadline_free_the_slot_at_the_next_step(tiny_model_dir: Path, reference: dict[str, Any]) -> None:
    longest = max(reference, key=lambda text: len(reference[text][0]))
    if len(reference[longest][0]) < 8:
        pytest.skip("the tiny model's outputs are too short to act mid-flight")
    runners: list[SlowRunner] = []

    def factory(model: ModelFiles) -> Runner:
        runners.append(SlowRunner(OnnxRunner(model, runtime=RUNTIME), delay_s=0.05))
        return runners[-1]

    async def run() -> None:
        engine = Engine(tiny_model_dir, runtime=RUNTIME, runner_factory=factory)
        await engine.start()
        runner = runners[0]
        handle = engine.submit(longest, greedy())
        async for _ in handle:
            handle.cancel()
            steps_at_cancel = len(runner.decoded_rows)
        with pytest.raises(asyncio.CancelledError):
            await handle.result()
        assert len(runner.decoded_rows) <= steps_at_cancel + 1  # at most the step already running
        assert engine.stats().running_sequences == 0

        late = engine.submit(longest, greedy(timeout_s=0.2))
        with pytest.raises(DeadlineExceeded):
            await late.result()
        assert engine.stats() == type(engine.stats())(0, 0, 0)
        await engine.stop(timeout_s=5)

    asyncio.run(run())


class FaultyRunner:
    """Raises inside the decoder step on chosen calls."""

    def __init__(self, inner: Runner) -> None:
        self.inner = inner
        self.calls = 0
        self.fail_at: set[int] = set()

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.encode(*args, **kwargs)

    def decode(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls in self.fail_at:
            raise RuntimeError("injected fault")
        return self.inner.decode(*args, **kwargs)


def test_a_fault_fails_only_that_step(
    tiny_model_dir: Path, held_out_texts: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    runners: list[FaultyRunner] = []

    def factory(model: ModelFiles) -> Runner:
        runners.append(FaultyRunner(OnnxRunner(model, runtime=RUNTIME)))
        return runners[-1]

    async def run() -> None:
        engine = Engine(tiny_model_dir, runtime=RUNTIME, runner_factory=factory, batching=BatchingSettings(max_queue=1))
        await engine.start()
        runner = runners[0]
        runner.fail_at = {runner.calls + 2}
        doomed = engine.submit(held_out_texts[0], greedy())
        with pytest.raises(InferenceFailed) as caught:
            await doomed.result()
        assert caught.value.error_id in caplog.text
        after = await engine.submit(held_out_texts[0], greedy()).result()
        assert after.finish_reason in ("eos", "length")
        await engine.stop(timeout_s=5)

    asyncio.run(run())


def test_token_logprobs_only_for_requests_that_ask(engine: Engine, held_out_texts: list[str]) -> None:
    """A batch mixing requests with and without token_logprobs: the same tokens for all, the asking
    ones' logprobs equal to those they get alone, None for the others (the executor skips their softmax)."""

    async def run() -> None:
        alone = [await engine.submit(text, greedy()).result() for text in held_out_texts[:6]]
        handles = [
            engine.submit(text, greedy(token_logprobs=index % 2 == 0)) for index, text in enumerate(held_out_texts[:6])
        ]
        mixed = [await handle.result() for handle in handles]
        for index, (single, together) in enumerate(zip(alone, mixed, strict=True)):
            assert together.token_ids == single.token_ids
            if index % 2 == 0:
                assert all(t.logprob is not None for t in together.tokens)
                np.testing.assert_allclose(
                    [t.logprob for t in together.tokens], [t.logprob for t in single.tokens], atol=1e-5
                )
            else:
                assert all(t.logprob is None for t in together.tokens)
        few = [engine.submit(text, greedy(token_logprobs=text == held_out_texts[0])) for text in held_out_texts[:6]]
        first = await few[0].result()
        np.testing.assert_allclose([t.logprob for t in first.tokens], [t.logprob for t in alone[0].tokens], atol=1e-5)
        for handle in few[1:]:
            assert all(t.logprob is None for t in (await handle.result()).tokens)

    asyncio.run(run())


def test_lanes_share_the_work_and_change_no_result(tiny_model_dir: Path, reference: dict[str, Any]) -> None:
    """Two lanes (two batches, two worker threads, one onnxruntime thread each, the same sessions): every
    request of a burst gets the reference's output, both lanes step, a cancel reaches the right lane, and
    stop() fails what is left in either lane."""
    texts = list(reference)
    stepped: set[str] = set()

    class LaneRecorder:
        def __init__(self, inner: Runner) -> None:
            self.inner = inner

        def encode(self, *args: Any, **kwargs: Any) -> Any:
            return self.inner.encode(*args, **kwargs)

        def decode(self, *args: Any, **kwargs: Any) -> Any:
            import threading

            stepped.add(threading.current_thread().name)
            return self.inner.decode(*args, **kwargs)

    def factory(model: ModelFiles) -> Runner:
        return LaneRecorder(OnnxRunner(model, runtime=RUNTIME))

    async def run() -> None:
        batching = BatchingSettings(max_batch_size=16, max_queue=64, lanes=2)
        engine = Engine(tiny_model_dir, runtime=RUNTIME, batching=batching, runner_factory=factory)
        await engine.start()
        stepped.clear()  # the warm-up ran in the loading thread
        burst = [(text, beam) for text in texts for beam in (False, True)]
        handles = [engine.submit(text, greedy(num_beams=BEAMS) if beam else greedy()) for text, beam in burst]
        cancelled = engine.submit(texts[0], greedy())
        cancelled.cancel()
        results = await asyncio.gather(*(h.result() for h in handles))
        for (text, beam), result in zip(burst, results, strict=True):
            assert result.token_ids == reference[text][1 if beam else 0], (text, beam)
        with pytest.raises(asyncio.CancelledError):
            await cancelled.result()
        assert stepped == {"atento-engine", "atento-engine-1"}
        assert engine.stats() == type(engine.stats())(0, 0, 0)
        with pytest.raises(InvalidInput, match="per lane"):
            engine.submit(texts[0], greedy(num_beams=9))
        left = [engine.submit(text, greedy()) for text in texts]
        await engine.stop(drain=False, timeout_s=5)
        for handle in left:
            try:
                await handle.result()
            except Exception as error:  # noqa: BLE001 - either finished before the stop or told it stopped
                assert "stopped" in str(error)

    asyncio.run(run())


@pytest.mark.parametrize(("flags", "expected"), [({"avx2", "avx512_vnni"}, "int8"), ({"avx2", "fma"}, "fp32")])
def test_variant_auto_follows_the_cpus_int8_instructions(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, flags: set[str], expected: str
) -> None:
    import json

    import service.engine.engine as engine_module

    manifest = json.loads((tiny_model_dir / "manifest.json").read_text())
    assert manifest["variants"]["int8"]["checked"]  # the export kept int8 for the tiny model: auto may take it
    monkeypatch.setattr(engine_module, "cpu_flags", lambda: frozenset(flags))
    auto = Engine(tiny_model_dir, variant="auto", runtime=RUNTIME)
    asyncio.run(auto.start())
    try:
        assert auto.info.variant == expected
    finally:
        asyncio.run(auto.stop(timeout_s=10))
