"""The engine the HTTP layer calls (docs/engine-api.md): submit requests, stream their tokens.

Engine is the API (lifecycle, submit, facts); its EngineLoop worker thread (worker.py) runs the pure
Scheduler and the BatchExecutor step after step, off the event loop.
No HTTP here, and no torch.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from service.engine.decoding_rules import ModelGeneration
from service.engine.errors import (
    InputTooLong,
    InvalidInput,
    ModelNotReady,
)
from service.engine.executor import BatchExecutor, ModelShape, Request, SpecialIds
from service.engine.handle import RequestHandle
from service.engine.joined_handle import JoinedHandle
from service.engine.model_dir import ModelFiles, load_model_directory
from service.engine.observer import EngineObserver, NoObserver
from service.engine.openvino_runner import OpenVinoRunner
from service.engine.pieces import TextRules
from service.engine.request_rules import ModelLanguages, model_tokenizers, request_rules, with_languages
from service.engine.runner import OnnxRunner, Runner, runs_on_cpu
from service.engine.scheduler import BatchPolicy, PendingRequest, Scheduler
from service.engine.settings import BatchingSettings, RuntimeSettings
from service.engine.text_cache import TextMemo
from service.engine.tokenizer import Tokenizer, special_labels
from service.engine.types import AttentionSpec, EngineStats, GenerationParams, ModelInfo
from service.engine.variant_choice import cpu_flags
from service.engine.worker import EngineLoop, Entry

logger = logging.getLogger(__name__)
_STEP_JOIN_S = 30.0  # Engine.stop's longest wait for the worker's step in progress (a hung step is not waited out)


@dataclass
class _Loaded:
    model: ModelFiles
    tokenizer: Tokenizer  # encodes sources
    output_tokenizer: Tokenizer  # decodes outputs, encodes forced targets and bad words (the same one unless separate)
    runner: Runner
    provider: str
    executors: list[BatchExecutor] = field(init=False)  # one per lane, over the same runner
    texts: TextRules = field(init=False)  # the manifest's edit_guard and segmentation
    # Memoized tokenizer.encode of long texts: Engine.prepare fills it off the event loop for submit.
    encode: TextMemo[tuple[list[int], list[tuple[int, int]]]] = field(init=False)
    max_input_chars: int = field(init=False)  # longer inputs are refused before any tokenizing
    languages: ModelLanguages | None = field(init=False)  # manifest["languages"]: per-request source/target
    special_labels: dict[int, str] = field(init=False)  # ModelInfo.special_labels
    output_labels: dict[int, str] | None = field(init=False)  # ModelInfo.output_labels


RunnerFactory = Callable[[ModelFiles], Runner]


class Engine:
    def __init__(
        self,
        model_dir: Path,
        *,
        variant: str | None = None,
        device: str = "cpu",
        runtime: RuntimeSettings | None = None,
        batching: BatchingSettings | None = None,
        observer: EngineObserver | None = None,
        runner_factory: RunnerFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        edit_guard: bool = True,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.edit_guard = edit_guard  # False: ignore the manifest's edit_guard (to measure the model alone)
        self.variant = variant
        self.device = device
        self.runtime = runtime or RuntimeSettings()
        self.batching = batching or BatchingSettings()
        self.observer: EngineObserver = observer or NoObserver()
        self._runner_factory = runner_factory
        self._clock = clock
        # Ids unique within this engine; a counter, because uuid4 reads os.urandom, a system call per request.
        self._request_numbers = itertools.count(1)
        # Each lane: its own scheduler, requests and lock (event loop vs its worker thread), its own executor.
        self._lane_limits = self.batching.lane_share()
        self._lanes = [
            EngineLoop(
                Scheduler(BatchPolicy.from_settings(self._lane_limits)), clock=clock, observer=lambda: self.observer
            )
            for _ in range(self.batching.lanes)
        ]
        self._loaded: _Loaded | None = None
        self._threads: list[threading.Thread] = []
        self._accepting = False

    # ---- lifecycle ----

    async def start(self) -> None:
        """Load and verify the model directory, warm up, start the worker. Raises ModelLoadError."""
        self._loaded = await asyncio.to_thread(self._load)
        self._threads = []
        for number, lane in enumerate(self._lanes):
            lane.stopping = False
            thread = threading.Thread(
                target=lane.run,
                args=(functools.partial(self._lane_executor, number),),
                name="atento-engine" if number == 0 else f"atento-engine-{number}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)
        self._accepting = True

    def _lane_executor(self, lane: int) -> BatchExecutor:
        return self._require_loaded().executors[lane]

    def _load(self) -> _Loaded:
        # auto takes int8 on VNNI CPUs for onnxruntime's kernels only (OpenVINO's int8 was slower: BENCHMARKS.md).
        onnxruntime = self._runner_factory is None and self.runtime.backend == "onnxruntime"
        model = load_model_directory(
            self.model_dir,
            variant=self.variant,
            on_cpu=onnxruntime and runs_on_cpu(self.device),
            cpu_flags=cpu_flags() if onnxruntime else frozenset(),
        )
        logger.info("model %s/%s: variant %s (%s)", model.name, model.version, model.variant, model.variant_reason)
        languages, tokenizers = model_tokenizers(model)
        tokenizer, output_tokenizer = tokenizers.source, tokenizers.output
        output_tokenizer.detokenizer()  # builds and checks its byte table now, not in the first request
        if self._runner_factory is not None:
            runner, provider = self._runner_factory(model), "custom"
        elif self.runtime.backend == "openvino":  # the openvino package is imported only now
            openvino = OpenVinoRunner(model, runtime=self.runtime, device=self.device)
            runner, provider = openvino, openvino.provider
        else:
            onnx = OnnxRunner(model, runtime=self.runtime, device=self.device)
            runner, provider = onnx, onnx.provider
        loaded = _Loaded(model, tokenizer, output_tokenizer, runner, provider)
        special = SpecialIds(
            pad=model.special_tokens["pad"], bos=model.special_tokens["bos"], eos=model.special_tokens["eos"]
        )
        shape = ModelShape(n_layers=model.n_layers, n_encoder_layers=model.n_encoder_layers, n_heads=model.n_heads)
        generation = ModelGeneration.from_manifest(
            model.manifest, start=special.bos, eos=special.eos, where=str(model.directory / "manifest.json")
        )
        # A draft is source ids fed as output ids: only where the two sides share a vocabulary.
        drafts = 0 if tokenizers.separate else self.batching.draft_tokens
        new_executor = functools.partial(BatchExecutor, special=special, shape=shape, generation=generation)
        loaded.executors = [new_executor(runner, output_tokenizer, draft_tokens=drafts) for _ in self._lanes]
        loaded.languages = languages
        codes = languages.codes if languages is not None else {}
        around = {*tokenizer.prefix, *tokenizer.suffix}
        if tokenizers.separate:  # one id is a different entry on each side: a label map per side
            loaded.special_labels = special_labels(tokenizer, around, codes=codes)
            loaded.output_labels = special_labels(output_tokenizer, set(model.special_tokens.values()), codes={})
        else:
            loaded.special_labels = special_labels(tokenizer, {*around, *model.special_tokens.values()}, codes=codes)
            loaded.output_labels = None
        loaded.encode = TextMemo(tokenizer.encode)
        loaded.texts = TextRules(
            guard=model.edit_guard if self.edit_guard else None,
            segmentation=model.segmentation,
            encode=lambda text: loaded.encode(text)[0],
            max_source_tokens=model.max_source_tokens,
            max_pieces=max(1, self.batching.max_queue),
            case=model.case_folding,
        )
        # No text longer than this fits the model (one call, or as many pieces as the queue can hold).
        calls = loaded.texts.max_pieces if model.segmentation is not None else 1
        loaded.max_input_chars = calls * model.max_source_tokens * tokenizer.longest_token_chars
        # Warm-up: one short generation through both graphs, so the first request pays no lazy init.
        warm = Request("warmup", tokenizer.encode("warm up")[0], GenerationParams(max_new_tokens=2))
        for executor in loaded.executors:
            outcome = executor.step([warm])
            while warm.id not in outcome.results and executor.rows:
                outcome = executor.step([])
        return loaded

    async def stop(self, *, drain: bool = True, timeout_s: float = 30.0) -> None:
        """Stop accepting; with drain, let in-flight work finish up to timeout_s; fail what is left."""
        self._accepting = False
        deadline = time.monotonic() + timeout_s
        while drain and time.monotonic() < deadline and not all(lane.empty for lane in self._lanes):
            await asyncio.sleep(0.01)
        for lane in self._lanes:
            with lane.lock:
                lane.stopping = True
                lane.wake.notify_all()
        threads, self._threads = self._threads, []
        for number, lane in enumerate(self._lanes):
            worker_alive = False
            if number < len(threads):
                # However short the grace, wait for the step in progress to end: resetting the executor while
                # the worker still steps it breaks both ("dictionary changed size during iteration").
                await asyncio.to_thread(threads[number].join, max(timeout_s, _STEP_JOIN_S))
                worker_alive = threads[number].is_alive()
                if worker_alive:
                    logger.warning(
                        "the engine's worker %s is still in a step after %ss: not resetting its state",
                        number,
                        _STEP_JOIN_S,
                    )
            entries = lane.drop_all()
            if self._loaded is not None and not worker_alive:
                self._loaded.executors[number].reset()
            for entry in entries:
                entry.handle.finish_threadsafe(ModelNotReady("the engine stopped before this request finished"))

    @property
    def ready(self) -> bool:
        return self._accepting and self._loaded is not None

    @property
    def info(self) -> ModelInfo:
        loaded = self._require_loaded()
        model = loaded.model
        return ModelInfo(
            name=model.name,
            version=model.version,
            config=dict(model.config),
            files=dict(model.sha256),
            variant=model.variant,
            provider=loaded.provider,
            max_source_tokens=model.max_source_tokens,
            max_target_tokens=model.max_target_tokens,
            limits=self.batching.model_dump(),
            languages=None if loaded.languages is None else dataclasses.asdict(loaded.languages),
            special_labels=loaded.special_labels,
            output_labels=loaded.output_labels,
            decoder_graphs=dict(getattr(loaded.runner, "decoder_graphs", {})),
        )

    def stats(self) -> EngineStats:
        queued = running_sequences = running_requests = 0
        for lane in self._lanes:
            with lane.lock:
                queued += lane.scheduler.queue_depth
                running_sequences += lane.rows
                running_requests += lane.scheduler.running_requests
        return EngineStats(queue_depth=queued, running_sequences=running_sequences, running_requests=running_requests)

    # ---- requests ----

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        return self._require_loaded().encode(text)

    def prepare(self, text: str) -> None:
        """Tokenize (and, over the limit, segment) `text` now, in any thread; its submit reuses the work.

        The HTTP layer calls it in a worker thread for long inputs, so the event loop never tokenizes them.
        """
        loaded = self._require_loaded()
        if isinstance(text, str) and len(text) <= loaded.max_input_chars:
            loaded.texts.prepare(text)

    def _check_chars(self, text: str, loaded: _Loaded) -> None:
        """Refuse, before tokenizing, a text too long for the model whatever its tokens (InputTooLong)."""
        if isinstance(text, str) and len(text) > loaded.max_input_chars:
            raise InputTooLong(
                f"the input has {len(text)} characters; this model takes at most {loaded.max_input_chars} "
                f"(max_source_tokens {loaded.model.max_source_tokens} of at most "
                f"{loaded.tokenizer.longest_token_chars} characters each"
                + (", in as many pieces as the queue holds)" if loaded.model.segmentation is not None else ")")
            )

    def submit(
        self,
        text: str,
        params: GenerationParams,
        *,
        attention: AttentionSpec | None = None,
        forced_target: str | None = None,
        stream: bool = True,
    ) -> RequestHandle | JoinedHandle:
        """Queue a generation. Raises InvalidInput / InputTooLong / Overloaded / ModelNotReady at once.

        With stream=False the handle only answers result(): its tokens are not passed to the event loop one by
        one. The model directory's edit guard checks the output, and an input over the source limit is split
        into sentences when it declares segmentation (service/engine/pieces.py, joined_handle.py).
        """
        if not self.ready:
            raise ModelNotReady("the model is not loaded yet" if self._loaded is None else "the engine is stopping")
        loaded = self._require_loaded()
        self._check_chars(text, loaded)
        submit_one = functools.partial(
            self._submit_one, params=params, attention=attention, forced_target=forced_target, stream=stream
        )
        return loaded.texts.submit(
            text,
            submit_one,
            attention=attention is not None,
            forced=forced_target is not None,
            stream=stream,
            on_reverted=self.observer.on_edit_guard_reverted,
        )

    def _submit_one(
        self,
        text: str,
        group: str | None,
        *,
        params: GenerationParams,
        attention: AttentionSpec | None,
        forced_target: str | None,
        stream: bool,
    ) -> RequestHandle:
        """Queue one model call (submit's whole work for an input within the limit), a piece of document `group`."""
        loaded = self._require_loaded()
        request, rows = self._build_request(text, params, attention, forced_target, loaded)
        lane = min(self._lanes, key=EngineLoop.load) if len(self._lanes) > 1 else self._lanes[0]
        handle = RequestHandle(request.id, asyncio.get_running_loop(), lane.cancel, stream=stream)
        now = self._clock()
        tokens = rows * (len(request.source_ids) + request.params.max_new_tokens)
        deadline = now + params.timeout_s if params.timeout_s is not None else None
        pending = PendingRequest(request.id, rows=rows, tokens=tokens, deadline=deadline, group=group)
        with lane.lock:
            lane.scheduler.add(pending, now=now)  # raises Overloaded
            lane.entries[request.id] = Entry(request, handle, submitted_at=time.monotonic())
        # Wake the worker once this event loop turn ends, not now: requests submitted together (in
        # one turn) then join in one encoder pass instead of the first one racing ahead alone.
        handle.loop.call_soon(lane.notify)
        return handle

    def _build_request(
        self,
        text: str,
        params: GenerationParams,
        attention: AttentionSpec | None,
        forced_target: str | None,
        loaded: _Loaded,
    ) -> tuple[Request, int]:
        model = loaded.model
        if not isinstance(text, str):
            raise InvalidInput("text must be a string")
        params.validate()
        if attention is not None:
            attention.validate(
                encoder_layers=model.n_encoder_layers, decoder_layers=model.n_layers, heads=model.n_heads
            )
        lane_rows = self._lane_limits.max_batch_size
        if params.num_beams > lane_rows:
            raise InvalidInput(
                f"num_beams must be <= max_batch_size ({lane_rows}"
                + (f" per lane, of {self.batching.lanes})" if self.batching.lanes > 1 else ")")
            )
        source_ids, _ = loaded.encode(text)
        if len(source_ids) > model.max_source_tokens:
            raise InputTooLong(
                f"the input has {len(source_ids)} tokens with EOS; the limit is {model.max_source_tokens}"
            )
        source_ids = with_languages(source_ids, params, languages=loaded.languages, tokenizer=loaded.tokenizer)
        rules = request_rules(
            params,
            loaded.executors[0].generation.rules,
            languages=loaded.languages,
            tokenizer=loaded.output_tokenizer,  # bad words are output ids
            vocab_size=model.vocab_size,
        )
        target_ids = None
        if forced_target is not None:
            target_ids = loaded.output_tokenizer.encode_plain(forced_target)
            if rules is not None and params.target_language is not None and rules.forced_bos is not None:
                target_ids = [rules.forced_bos, *target_ids]  # the language code the model would start with
            if len(target_ids) + 1 > model.max_target_tokens:
                raise InputTooLong(
                    f"forced_target has {len(target_ids)} tokens; the limit is {model.max_target_tokens - 1}"
                )
        folding = model.case_folding  # a stop sequence is looked for in the text the model writes: folded
        stop = params.stop if folding is None else tuple(folding.fold(sequence) for sequence in params.stop)
        clipped = replace(params, max_new_tokens=min(params.max_new_tokens, model.max_target_tokens - 1), stop=stop)
        seed = params.seed
        if params.do_sample and seed is None:
            seed = random.SystemRandom().getrandbits(63)
        request = Request(
            f"r{next(self._request_numbers)}",
            source_ids,
            clipped,
            seed=seed,
            attention=attention,
            forced_target=target_ids,
            rules=rules,
        )
        return request, params.num_beams

    def _require_loaded(self) -> _Loaded:
        if self._loaded is None:
            raise ModelNotReady("the model is not loaded yet")
        return self._loaded
