"""The Runner protocol and OnnxRunner: the only module that imports onnxruntime. The KV cache and the
decoder step every runner shares are in kv_cache.py (re-exported here for the runner's callers).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import onnxruntime as ort

from service.engine.errors import ModelLoadError
from service.engine.kv_cache import DecoderOutput as DecoderOutput
from service.engine.kv_cache import DecoderStep as DecoderStep
from service.engine.kv_cache import EncoderBatch as EncoderBatch
from service.engine.kv_cache import EncoderOutput as EncoderOutput
from service.engine.kv_cache import KvCache as KvCache
from service.engine.model_dir import CACHE_INPUTS, ModelFiles, TensorSpec, check_graph_signature
from service.engine.settings import RuntimeSettings

logger = logging.getLogger(__name__)

_OPTIMIZATION = {
    "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
_ORT_DTYPES = {"tensor(int64)": "int64", "tensor(int32)": "int32", "tensor(float)": "float32", "tensor(bool)": "bool"}


class Runner(Protocol):
    def encode(self, batch: EncoderBatch, *, attention: bool) -> EncoderOutput: ...

    def decode(
        self, tgt: np.ndarray, cache: KvCache, *, attention: bool, tgt_mask: np.ndarray | None = None
    ) -> DecoderOutput:
        """Run tgt (B, T) after `cache`; tgt_mask (B, T) marks real new tokens (default all)."""
        ...


class ProcessThreadPool:
    """onnxruntime's process-wide thread pools, which can be sized once per process and never replaced.

    onnxruntime keeps that state itself; this object only remembers the size it was given, so that a
    later engine asking for another size is told (logged) instead of silently running on the first.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sizes: tuple[int, int] | None = None  # (intra, inter) once created

    def join(self, intra_op_threads: int, inter_op_threads: int) -> None:
        """Create the pools at this size if nobody has; otherwise share them as they are."""
        wanted = (intra_op_threads, inter_op_threads)
        with self._lock:
            if self.sizes is None:
                try:
                    ort.set_global_thread_pool_sizes(*wanted)
                except Exception as error:  # created in this process before us, by code we don't own
                    logger.warning("onnxruntime's process thread pools already exist (%s); sharing them", error)
                self.sizes = wanted
            elif self.sizes != wanted:
                logger.warning(
                    "the process thread pool has %s intra-op / %s inter-op threads (0 = one per core); "
                    "this engine asked for %s / %s and shares it as it is",
                    *self.sizes,
                    *wanted,
                )


PROCESS_THREAD_POOL = ProcessThreadPool()  # one per process, as onnxruntime's own pools


def session_options(runtime: RuntimeSettings, *, allow_spinning: bool) -> ort.SessionOptions:
    """Options for one session: on the process's pool when `runtime.shared_thread_pool` is True or the
    pool already exists (onnxruntime then refuses a per-session pool), otherwise a pool of its own."""
    options = ort.SessionOptions()
    options.graph_optimization_level = _OPTIMIZATION[runtime.graph_optimization]
    if runtime.shared_thread_pool or PROCESS_THREAD_POOL.sizes is not None:
        if runtime.shared_thread_pool is False:
            logger.warning("this process already runs onnxruntime's shared thread pool; the session shares it")
        PROCESS_THREAD_POOL.join(runtime.intra_op_threads, runtime.inter_op_threads)
        options.use_per_session_threads = False
        return options
    options.intra_op_num_threads = runtime.intra_op_threads
    options.inter_op_num_threads = runtime.inter_op_threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if allow_spinning else "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "1" if allow_spinning else "0")
    return options


_DEVICES = ("auto", "cpu", "cuda")
_CUDA = "CUDAExecutionProvider"


def pick_providers(device: str) -> list[str]:
    """The execution providers for `device`: "cuda" must get CUDA, "auto" takes it when onnxruntime has it.

    Raises:
        ModelLoadError: `device` is not auto, cpu or cuda; or it is cuda and this onnxruntime has no
            CUDAExecutionProvider (an explicit device that cannot be honoured is not silently CPU).
    """
    if device not in _DEVICES:
        raise ModelLoadError(f"ATENTO_DEVICE={device!r} is not one of {', '.join(_DEVICES)}")
    available = ort.get_available_providers()
    if device != "cpu" and _CUDA in available:
        return [_CUDA, "CPUExecutionProvider"]
    if device == "cuda":
        raise ModelLoadError(
            f"ATENTO_DEVICE=cuda but onnxruntime has no {_CUDA} (installed: onnxruntime {ort.__version__}, "
            f"{ort.get_device()} build, providers {', '.join(available)}); install onnxruntime-gpu, or use auto or cpu"
        )
    return ["CPUExecutionProvider"]


def runs_on_cpu(device: str) -> bool:
    """Whether onnxruntime runs the graphs on the CPU for `device`: cpu, or auto where this onnxruntime has no
    CUDA provider (an onnxruntime-gpu build lists it even on a machine without a GPU, and auto then means CUDA)."""
    return pick_providers(device)[0] == "CPUExecutionProvider"


class OnnxRunner:
    """Encoder and decoder sessions; with CUDA, I/O binding keeps the cross keys/values on the device."""

    def __init__(self, model: ModelFiles, *, runtime: RuntimeSettings, device: str = "cpu") -> None:
        providers = pick_providers(device)
        self.model = model
        self._encoder = self._session(model.encoder, runtime, providers, runtime.allow_spinning)
        self._decoder = self._session(model.decoder, runtime, providers, runtime.decoder_allow_spinning)
        # onnxruntime falls back to CPU when the CUDA provider is listed but cannot start (no GPU, driver or
        # CUDA libraries): what the sessions really got, not what was asked for.
        self.provider = self._encoder.get_providers()[0]
        if device == "cuda" and {self.provider, self._decoder.get_providers()[0]} != {_CUDA}:
            raise ModelLoadError(
                f"ATENTO_DEVICE=cuda but onnxruntime could not start {_CUDA} (no GPU, driver or CUDA libraries: "
                "onnxruntime's log above says which); use auto or cpu"
            )
        for role, session, path in (
            ("encoder", self._encoder, model.encoder),
            ("decoder", self._decoder, model.decoder),
        ):
            for kind, args in (("inputs", session.get_inputs()), ("outputs", session.get_outputs())):
                specs = [TensorSpec(a.name, _ORT_DTYPES.get(a.type, a.type), tuple(a.shape)) for a in args]
                check_graph_signature(model, role, kind, specs, file=path)
        self._bind = self.provider == "CUDAExecutionProvider" and runtime.io_binding
        self._bind_device = "cuda"  # where bound cross keys/values live (tests bind on "cpu")
        self._layer_inputs = [tuple(f"{name}.{layer}" for name in CACHE_INPUTS) for layer in range(model.n_layers)]
        # Format 3 reads and writes the cache in place in host memory: the CPU provider's.
        self._decoder_gqa = None
        if model.decoder_gqa is not None and runtime.gqa_decoder and self.provider == "CPUExecutionProvider":
            self._decoder_gqa = self._session(model.decoder_gqa, runtime, providers, runtime.decoder_allow_spinning)
            gqa = self._decoder_gqa
            for kind, args in (("inputs", gqa.get_inputs()), ("outputs", gqa.get_outputs())):
                specs = [TensorSpec(a.name, _ORT_DTYPES.get(a.type, a.type), tuple(a.shape)) for a in args]
                check_graph_signature(model, "decoder_gqa", kind, specs, file=model.decoder_gqa)
            logger.info(
                "decoder format 3 (%s): steps without attention weights read each row's own cache and source length",
                model.decoder_gqa.name,
            )

    @property
    def decoder_graphs(self) -> dict[str, str | None]:
        """The decoder graphs this runner runs: format 3's for steps without attention weights (None: not used)."""
        gqa = self.model.decoder_gqa.name if self._decoder_gqa is not None and self.model.decoder_gqa else None
        return {"format_3": gqa, "format_2": self.model.decoder.name}

    @staticmethod
    def _session(path: Any, runtime: RuntimeSettings, providers: list[str], spinning: bool) -> ort.InferenceSession:
        try:
            return ort.InferenceSession(
                str(path), sess_options=session_options(runtime, allow_spinning=spinning), providers=providers
            )
        except Exception as error:  # onnxruntime raises its own untyped Fail/InvalidGraph errors
            raise ModelLoadError(f"{path} is not a loadable ONNX graph: {error}") from error

    def encode(self, batch: EncoderBatch, *, attention: bool) -> EncoderOutput:
        names = ["cross_keys", "cross_values"] + (["encoder_attention"] if attention else [])
        outputs = self._encoder.run(names, {"src": batch.src, "src_mask": batch.src_mask})
        cache = KvCache.start(outputs[0], outputs[1], batch.src_mask)
        return EncoderOutput(cache=cache, attention=outputs[2] if attention else None)

    def decode(
        self, tgt: np.ndarray, cache: KvCache, *, attention: bool, tgt_mask: np.ndarray | None = None
    ) -> DecoderOutput:
        """One decoder call; the new keys and values are written into the cache's buffers in place.

        The graph reads each layer's cache buffer (spare columns masked) and returns only the new
        columns: format 1's graph copied the whole cache three times a step
        (BENCHMARKS.md#in-place-decoder-cache-format-2). Buffers are regrown (one copy) when a step
        outgrows them, and made anew for a cache built by filter, concatenate or trim_padding. A step of one
        token a row that needs no attention weights runs format 3 instead, when the variant has it.
        """
        if self._decoder_gqa is not None and not attention and tgt.shape[1] == 1:
            return self._decode_gqa(tgt, cache, tgt_mask)
        step = DecoderStep.prepare(tgt, cache, tgt_mask, self._layer_inputs, with_cross=not self._bind)
        names = step.output_names(attention=attention)
        outputs = self._decode_bound(step.feeds, cache, names) if self._bind else self._decoder.run(names, step.feeds)
        return step.finish(cache, outputs, attention=attention)

    def _decode_gqa(self, tgt: np.ndarray, cache: KvCache, tgt_mask: np.ndarray | None) -> DecoderOutput:
        """One token a row through decoder format 3: its attention reads each row's own length of the cache and
        of the source, and writes the new keys and values into the cache's buffers itself (each past or cross
        buffer bound as the node's present output too), at each row's length."""
        step = DecoderStep.one_token(tgt, cache, tgt_mask)
        width = step.width_after(1)
        bound = self._gqa_binding(step, cache)
        bound.tgt[:] = tgt
        bound.positions[:, 0] = step.lengths  # a row's next position is its length
        bound.seqlens_k[:] = step.lengths
        bound.total_sequence_length[0] = width
        # Read every step: a joiner written over a dead row changes the source mask in place.
        sources = cache.src_mask.sum(axis=1)
        # The row's last source key, written back in place (never before the row's first: an empty source
        # would make onnxruntime write one column before the buffer).
        bound.src_seqlens_k[:] = np.maximum(sources - 1, 0)
        bound.src_total_sequence_length[0] = int(sources.max())
        logits = np.empty((tgt.shape[0], 1, self.model.vocab_size), dtype=np.float32)
        bound.binding.bind_ortvalue_output("logits", ort.OrtValue.ortvalue_from_numpy(logits))
        assert self._decoder_gqa is not None  # noqa: S101 - decode only calls this when the session exists
        self._decoder_gqa.run_with_iobinding(bound.binding)
        rows = np.arange(tgt.shape[0])
        step.mask[rows, step.lengths] = step.new_mask[:, 0]
        cache_after = step.handed_on(cache, width)
        # Kept for the next step unless it binds copies, which a joiner written over a dead row would not reach.
        if all(buffer.flags.c_contiguous for buffer in bound.buffers):
            cache_after.binding = bound
        return DecoderOutput(logits=logits, cache=cache_after, self_attention=None, cross_attention=None)

    def _gqa_binding(self, step: DecoderStep, cache: KvCache) -> _GqaBinding:
        """The binding of the buffers `step` writes into: the cache's own while they are the arrays it bound (the
        batch's rows stayed, or a joiner was written over a dead row in place), else a new one. Building one costs
        4 OrtValues and 8 binds a layer, as much CPU as the rest of the runner's work on a step."""
        buffers = (step.keys, step.values, cache.cross_keys, cache.cross_values)
        bound = cache.binding
        if isinstance(bound, _GqaBinding) and all(a is b for a, b in zip(bound.buffers, buffers, strict=True)):
            return bound
        assert self._decoder_gqa is not None  # noqa: S101 - only called from _decode_gqa
        return _GqaBinding.make(self._decoder_gqa, buffers, self._layer_inputs, cache.batch)

    def _decode_bound(self, feeds: dict[str, np.ndarray], cache: KvCache, names: list[str]) -> list[np.ndarray]:
        """CUDA: the cross keys/values stay on the device (copied there once per batch composition, kept
        in cache.device); the self-attention cache is uploaded each step from its host buffers."""
        binding = self._decoder.io_binding()
        for name, array in feeds.items():
            binding.bind_cpu_input(name, array)
        for layer, (_, _, cross_keys, cross_values) in enumerate(self._layer_inputs):
            for name, stacked in ((cross_keys, cache.cross_keys), (cross_values, cache.cross_values)):
                if name not in cache.device:
                    host = np.ascontiguousarray(stacked[layer])
                    cache.device[name] = ort.OrtValue.ortvalue_from_numpy(host, self._bind_device, 0)
                binding.bind_ortvalue_input(name, cache.device[name])
        for name in names:
            binding.bind_output(name, "cpu")
        self._decoder.run_with_iobinding(binding)
        return [value.numpy() for value in binding.get_outputs()]


@dataclass
class _GqaBinding:
    """Decoder format 3's IOBinding for one set of cache buffers: every past/cross buffer bound as both input
    and present output, and small arrays bound once for the per-step inputs, written in place each step."""

    binding: ort.IOBinding
    buffers: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # self keys, values, cross keys, values
    tgt: np.ndarray  # (B, 1) int64
    positions: np.ndarray  # (B, 1) int64
    seqlens_k: np.ndarray  # (B,) int32: each row's length before the step
    total_sequence_length: np.ndarray  # (1,) int32
    src_seqlens_k: np.ndarray  # (B,) int32
    src_total_sequence_length: np.ndarray  # (1,) int32
    owned: list[ort.OrtValue]  # kept alive with the binding

    @classmethod
    def make(
        cls,
        session: ort.InferenceSession,
        buffers: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        layer_inputs: list[tuple[str, ...]],
        batch: int,
    ) -> _GqaBinding:
        small: dict[str, np.ndarray] = {
            "tgt": np.zeros((batch, 1), dtype=np.int64),
            "tgt_positions": np.zeros((batch, 1), dtype=np.int64),
            "seqlens_k": np.zeros(batch, dtype=np.int32),
            "total_sequence_length": np.zeros(1, dtype=np.int32),
            "src_seqlens_k": np.zeros(batch, dtype=np.int32),
            "src_total_sequence_length": np.zeros(1, dtype=np.int32),
        }
        binding = session.io_binding()
        owned: list[ort.OrtValue] = []
        for name, array in small.items():
            value = ort.OrtValue.ortvalue_from_numpy(array)
            binding.bind_ortvalue_input(name, value)
            owned.append(value)
        keys, values, cross_keys, cross_values = buffers
        for layer, names in enumerate(layer_inputs):
            for name, buffer in zip(
                names, (keys[layer], values[layer], cross_keys[layer], cross_values[layer]), strict=True
            ):
                # The buffer's own memory (a copy only for a non-contiguous cross slice: its write is the same
                # values) as the past input and the present output.
                shared = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(buffer))
                binding.bind_ortvalue_input(name, shared)
                binding.bind_ortvalue_output(f"present_{name.removeprefix('past_')}", shared)
                owned.append(shared)
        return cls(
            binding,
            buffers,
            small["tgt"],
            small["tgt_positions"],
            small["seqlens_k"],
            small["total_sequence_length"],
            small["src_seqlens_k"],
            small["src_total_sequence_length"],
            owned,
        )
