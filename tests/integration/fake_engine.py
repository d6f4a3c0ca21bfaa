"""A small in-process engine with service.engine.Engine's API (docs/engine-api.md), for HTTP tests.

It "normalizes" text by upper-casing it, one character per token, taking `step_delay_s` per step, so
tests can control timing (deadlines, disconnects, shutdown) and capacity (max_queue) exactly.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from service.engine import (
    Attention,
    AttentionSpec,
    EngineClient,
    EngineObserver,
    EngineStats,
    GenerationParams,
    GenerationResult,
    ModelInfo,
    TokenEvent,
)
from service.engine.errors import DeadlineExceeded, InputTooLong, ModelLoadError, ModelNotReady, Overloaded
from service.engine.handle import admitted_at_submit
from service.engine.observer import NoObserver

EOS = 2
EOS_TEXT = "</s>"


def fake_info() -> ModelInfo:
    """The fake model's facts: 2 heads, 2 + 2 layers, 64 tokens each way."""
    return ModelInfo(
        name="fake",
        version="1",
        config={"vocab_size": 300, "d_model": 8, "n_heads": 2, "n_encoder_layers": 2, "n_decoder_layers": 2},
        files={"encoder.onnx": "0" * 64, "decoder.onnx": "1" * 64},
        variant="fp32",
        provider="CPUExecutionProvider",
        max_source_tokens=64,
        max_target_tokens=64,
        limits={},
        special_labels={EOS: EOS_TEXT},
    )


def _softmax(x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    if mask is not None:
        x = np.where(mask, x, -np.inf)
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    probabilities: np.ndarray = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    return probabilities


class FakeHandle:
    def __init__(self, engine: FakeEngine, request_id: str) -> None:
        self.id = request_id
        self._engine = engine
        self._events: asyncio.Queue[TokenEvent | None] = asyncio.Queue()
        self._result: asyncio.Future[GenerationResult] = asyncio.get_running_loop().create_future()
        self.cancel_reason: str | None = None
        self.task: asyncio.Task[None] | None = None

    async def __aiter__(self) -> AsyncIterator[TokenEvent]:
        while True:
            event = await self._events.get()
            if event is None:
                if self._result.done() and self._result.exception() is not None:
                    raise self._result.exception()  # type: ignore[misc]  # checked just above
                return
            yield event

    def result(self) -> asyncio.Future[GenerationResult]:
        return asyncio.shield(self._result)

    def admitted(self) -> asyncio.Future[None]:
        return admitted_at_submit()

    def cancel(self, reason: str = "disconnect") -> None:
        if self.cancel_reason is None and not self._result.done():
            self.cancel_reason = reason


class FakeEngine:
    """Engine API double. `step_delay_s` per token; at most `max_queue` requests in flight."""

    def __init__(
        self,
        *,
        step_delay_s: float = 0.0,
        start_delay_s: float = 0.0,
        max_queue: int = 64,
        fail_load: bool = False,
        info: ModelInfo | None = None,
    ) -> None:
        self.step_delay_s = step_delay_s
        self.start_delay_s = start_delay_s
        self.max_queue = max_queue
        self.fail_load = fail_load
        self.observer: EngineObserver = NoObserver()
        self._info = info or fake_info()
        self._ready = False
        self._ids = itertools.count()
        self.in_flight: dict[str, FakeHandle] = {}
        self.cancelled: list[tuple[str, str]] = []  # (request id, reason)
        self.finished: list[str] = []
        self.stopped = False

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def info(self) -> ModelInfo:
        return self._info

    async def start(self) -> None:
        await asyncio.sleep(self.start_delay_s)
        if self.fail_load:
            raise ModelLoadError("encoder.onnx: sha256 mismatch")
        self._ready = True

    async def stop(self, *, drain: bool = True, timeout_s: float) -> None:
        tasks = [h.task for h in self.in_flight.values() if h.task is not None]
        if tasks and drain:
            await asyncio.wait(tasks, timeout=timeout_s)
        self._ready = False
        self.stopped = True

    def stats(self) -> EngineStats:
        running = len(self.in_flight)
        return EngineStats(queue_depth=0, running_sequences=running, running_requests=running)

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        ids = [10 + (ord(c) % 250) for c in text] + [EOS]
        offsets = [(i, i + 1) for i in range(len(text))] + [(len(text), len(text))]
        return ids, offsets

    def prepare(self, text: str) -> None:
        """Nothing to do ahead: the fake tokenizes by listing characters."""

    def _notify(self, name: str, *args: Any) -> None:
        getattr(self.observer, name)(*args)

    def submit(
        self,
        text: str,
        params: GenerationParams,
        *,
        attention: AttentionSpec | None = None,
        forced_target: str | None = None,
        stream: bool = True,  # the fake always queues tokens; the real engine skips them when False
    ) -> FakeHandle:
        if not self._ready:
            raise ModelNotReady("model is loading")
        params.validate()
        ids, _ = self.tokenize(text)
        if len(ids) > self._info.max_source_tokens:
            raise InputTooLong(f"input has {len(ids)} tokens, the model takes at most {self._info.max_source_tokens}")
        if len(self.in_flight) >= self.max_queue:
            raise Overloaded("queue full", retry_after_s=2.0)
        handle = FakeHandle(self, f"req-{next(self._ids)}")
        self.in_flight[handle.id] = handle
        handle.task = asyncio.get_running_loop().create_task(
            self._run(handle, text, ids, params, attention, forced_target)
        )
        return handle

    async def _run(
        self,
        handle: FakeHandle,
        text: str,
        ids: list[int],
        params: GenerationParams,
        spec: AttentionSpec | None,
        forced_target: str | None,
    ) -> None:
        submitted = time.monotonic()
        self._notify("on_queue_wait", 0.0)
        target = forced_target if forced_target is not None else text.upper()
        tokens: list[TokenEvent] = []
        finish = "eos"
        previous = submitted
        try:
            for position in range(params.max_new_tokens + 1):
                if self.step_delay_s:
                    await asyncio.sleep(self.step_delay_s)
                if handle.cancel_reason is not None:
                    self._cancel(handle, handle.cancel_reason)
                    return
                if params.timeout_s is not None and time.monotonic() - submitted > params.timeout_s:
                    self._cancel(handle, "deadline")
                    raise DeadlineExceeded(f"request exceeded its {params.timeout_s}s deadline")
                now = time.monotonic()
                self._notify("on_step", 1, now - previous)
                self._notify("on_first_token" if position == 0 else "on_token", now - previous)
                previous = now
                if position >= len(target):
                    event = TokenEvent(id=EOS, text=EOS_TEXT, logprob=-0.01, special=True)
                elif position >= params.max_new_tokens and forced_target is None:
                    finish = "length"
                    break
                else:
                    char = target[position]
                    event = TokenEvent(id=10 + ord(char) % 250, text=char, logprob=-0.5, special=False)
                tokens.append(event)
                handle._events.put_nowait(event)
                if event.special:
                    break
                generated = "".join(t.text for t in tokens)
                if any(generated.endswith(stop) for stop in params.stop):
                    finish = "stop_sequence"
                    break
            text_out = "".join(t.text for t in tokens if not t.special)
            result = GenerationResult(
                text=text_out,
                token_ids=[t.id for t in tokens if not t.special],
                tokens=tokens,
                finish_reason=finish,
                input_token_ids=ids,
                seed=params.seed if params.seed is not None else (1234 if params.do_sample else None),
                attention=self._attention(spec, len(ids), len(tokens)) if spec is not None else None,
            )
            self._notify("on_finish", len(ids), len(tokens))
            self.finished.append(handle.id)
            handle._result.set_result(result)
        except DeadlineExceeded as exc:
            handle._result.set_exception(exc)
        finally:
            self.in_flight.pop(handle.id, None)
            handle._events.put_nowait(None)

    def _cancel(self, handle: FakeHandle, reason: str) -> None:
        self.cancelled.append((handle.id, reason))
        self._notify("on_cancel", reason)

    def _attention(self, spec: AttentionSpec, source_len: int, target_len: int) -> Attention:
        config = self._info.config
        heads = spec.heads if spec.heads is not None else tuple(range(config["n_heads"]))
        rng = np.random.default_rng(0)
        s, t = source_len, max(target_len, 1)
        causal = np.tril(np.ones((t, t), dtype=bool))

        def layers(n: int) -> tuple[int, ...]:
            return spec.layers if spec.layers is not None else tuple(range(n))

        out: dict[str, dict[int, np.ndarray]] = {"encoder": {}, "decoder": {}, "cross": {}}
        for kind, n_layers, shape, mask in (
            ("encoder", config["n_encoder_layers"], (s, s), None),
            ("decoder", config["n_decoder_layers"], (t, t), causal),
            ("cross", config["n_decoder_layers"], (t, s), None),
        ):
            if kind in spec.kinds:
                for layer in layers(n_layers):
                    out[kind][layer] = _softmax(rng.normal(size=(len(heads), *shape)), mask)
        return Attention(encoder=out["encoder"], decoder=out["decoder"], cross=out["cross"], heads=heads)


def as_engine_client(engine: FakeEngine) -> EngineClient:
    """What keeps the fake honest: mypy (`make lint`) checks FakeEngine against the EngineClient protocol."""
    return engine
