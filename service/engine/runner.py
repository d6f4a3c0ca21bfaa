"""The Runner protocol, the batch's KV cache and OnnxRunner: the only module that imports onnxruntime.

Rows of a KvCache may have different target lengths: they are left-padded, `self_mask` False on the
padding, and each row's next position is its count of real cached tokens.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import onnxruntime as ort

from service.engine.errors import ModelLoadError
from service.engine.model_dir import CACHE_INPUTS, ModelFiles, TensorSpec, check_graph_signature
from service.engine.settings import RuntimeSettings

logger = logging.getLogger(__name__)

_OPTIMIZATION = {
    "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
_ORT_DTYPES = {"tensor(int64)": "int64", "tensor(float)": "float32", "tensor(bool)": "bool"}


@dataclass
class KvCache:
    """Per-row decoder state of a batch: self-attention cache, cross keys/values and masks."""

    keys: np.ndarray  # (L, B, H, P, Dh) float32
    values: np.ndarray  # (L, B, H, P, Dh)
    self_mask: np.ndarray  # (B, P) bool, False on left padding
    cross_keys: np.ndarray  # (L, B, H, S, Dh), right-padded
    cross_values: np.ndarray  # (L, B, H, S, Dh)
    src_mask: np.ndarray  # (B, S) bool
    device: dict[str, Any] = field(default_factory=dict, repr=False)  # runner-owned device copies
    # OnnxRunner's (keys, values, self_mask) buffers with spare columns: keys, values and self_mask are
    # then views of their first P columns, and the next step writes its column in place. Handed on to
    # the cache that step returns; None for a cache built any other way (the step then makes them).
    buffers: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def start(cls, cross_keys: np.ndarray, cross_values: np.ndarray, src_mask: np.ndarray) -> KvCache:
        """An empty (P = 0) self-attention cache for freshly encoded rows."""
        layers, batch, heads, _, head_dim = cross_keys.shape
        empty = np.zeros((layers, batch, heads, 0, head_dim), dtype=np.float32)
        return cls(empty, empty.copy(), np.zeros((batch, 0), dtype=bool), cross_keys, cross_values, src_mask)

    @property
    def batch(self) -> int:
        return int(self.self_mask.shape[0])

    @property
    def past_length(self) -> int:
        return int(self.self_mask.shape[1])

    def positions(self) -> np.ndarray:
        """(B,) the absolute position of each row's next token."""
        positions: np.ndarray = self.self_mask.sum(axis=1).astype(np.int64)
        return positions

    def filter(self, rows: Sequence[int]) -> KvCache:
        """Keep (and reorder or repeat, for beams) `rows`, then trim all-padding columns."""
        index = np.asarray(rows, dtype=np.int64)
        self_mask = self.self_mask[index]
        src_mask = self.src_mask[index]
        first = _first_real_column(self_mask)
        width = int(np.flatnonzero(src_mask.any(axis=0)).max()) + 1 if src_mask.any() else 0
        return KvCache(
            keys=self.keys[:, index, :, first:],
            values=self.values[:, index, :, first:],
            self_mask=self_mask[:, first:],
            cross_keys=self.cross_keys[:, index, :, :width],
            cross_values=self.cross_values[:, index, :, :width],
            src_mask=src_mask[:, :width],
        )

    def trim_left_padding(self) -> KvCache:
        """Drop the leading self-attention columns that every row masks, once they are a quarter of the cache.

        Rows reused by new requests keep their old columns, masked; without this a batch that never
        empties would carry an ever longer masked history into every step. Waiting for a quarter
        (at least 4 columns) makes the copy rare.
        """
        first = _first_real_column(self.self_mask)
        if first < max(4, self.past_length // 4):
            return self
        return KvCache(
            keys=np.ascontiguousarray(self.keys[:, :, :, first:]),
            values=np.ascontiguousarray(self.values[:, :, :, first:]),
            self_mask=self.self_mask[:, first:],
            cross_keys=self.cross_keys,
            cross_values=self.cross_values,
            src_mask=self.src_mask,
            device=self.device,
        )

    @staticmethod
    def concatenate(caches: Sequence[KvCache]) -> KvCache:
        """Stack rows of several caches: self caches left-padded, cross caches right-padded."""
        caches = [c for c in caches if c.batch > 0]
        if len(caches) == 1:
            return caches[0]
        past = max(c.past_length for c in caches)
        source = max(c.src_mask.shape[1] for c in caches)

        def pad(array: np.ndarray, axis: int, width: int, *, left: bool) -> np.ndarray:
            missing = width - array.shape[axis]
            if missing == 0:
                return array
            spec = [(0, 0)] * array.ndim
            spec[axis] = (missing, 0) if left else (0, missing)
            return np.pad(array, spec)

        return KvCache(
            keys=np.concatenate([pad(c.keys, 3, past, left=True) for c in caches], axis=1),
            values=np.concatenate([pad(c.values, 3, past, left=True) for c in caches], axis=1),
            self_mask=np.concatenate([pad(c.self_mask, 1, past, left=True) for c in caches], axis=0),
            cross_keys=np.concatenate([pad(c.cross_keys, 3, source, left=False) for c in caches], axis=1),
            cross_values=np.concatenate([pad(c.cross_values, 3, source, left=False) for c in caches], axis=1),
            src_mask=np.concatenate([pad(c.src_mask, 1, source, left=False) for c in caches], axis=0),
        )


def _first_real_column(self_mask: np.ndarray) -> int:
    if self_mask.shape[1] == 0 or not self_mask.any():
        return int(self_mask.shape[1])
    return int(self_mask.any(axis=0).argmax())


@dataclass(frozen=True)
class EncoderBatch:
    src: np.ndarray  # (B, S) int64, right-padded with pad_id
    src_mask: np.ndarray  # (B, S) bool

    @classmethod
    def from_sources(cls, sources: Sequence[Sequence[int]], *, pad_id: int) -> EncoderBatch:
        width = max(len(s) for s in sources)
        src = np.full((len(sources), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(sources), width), dtype=bool)
        for row, tokens in enumerate(sources):
            src[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = True
        return cls(src, mask)


@dataclass(frozen=True)
class EncoderOutput:
    cache: KvCache  # P = 0, one row per source
    attention: np.ndarray | None  # (L, B, H, S, S) when asked for


@dataclass(frozen=True)
class DecoderOutput:
    logits: np.ndarray  # (B, T, V)
    cache: KvCache  # with the new tokens appended
    self_attention: np.ndarray | None  # (L, B, H, T, P+T) when asked for
    cross_attention: np.ndarray | None  # (L, B, H, T, S)


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
        outgrows them, and made anew for a cache built by filter, concatenate or trim_left_padding.
        """
        step = DecoderStep.prepare(tgt, cache, tgt_mask, self._layer_inputs, with_cross=not self._bind)
        names = step.output_names(attention=attention)
        outputs = self._decode_bound(step.feeds, cache, names) if self._bind else self._decoder.run(names, step.feeds)
        return step.finish(cache, outputs, attention=attention)

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


_SPARE_COLUMNS = 16  # a step that outgrows its buffers copies the cache into ones this much wider


@dataclass
class DecoderStep:
    """One decoder call's feeds and the cache buffers it writes its new columns into, for every runner (the
    graphs are the same whatever runs them)."""

    feeds: dict[str, np.ndarray]
    keys: np.ndarray  # (L, B, H, capacity, Dh): the cache's buffers with room for the new columns
    values: np.ndarray
    mask: np.ndarray  # (B, capacity)
    new_mask: np.ndarray  # (B, T)
    past: int

    @classmethod
    def prepare(
        cls,
        tgt: np.ndarray,
        cache: KvCache,
        tgt_mask: np.ndarray | None,
        layer_inputs: Sequence[tuple[str, ...]],
        *,
        with_cross: bool = True,
    ) -> DecoderStep:
        """The feeds of a call on `tgt` (B, T) after `cache`; `with_cross=False` leaves the cross keys and
        values out (OnnxRunner binds them on the device)."""
        batch, new = tgt.shape
        keys, values, mask = _buffers_with_room(cache, new)
        new_mask = np.ones((batch, new), dtype=bool) if tgt_mask is None else tgt_mask
        feeds = {
            "tgt": np.ascontiguousarray(tgt, dtype=np.int64),
            "tgt_positions": cache.positions()[:, None] + np.arange(new, dtype=np.int64),
            "self_mask": np.concatenate([mask, new_mask], axis=1),  # the buffer's spare columns are False
            "src_mask": np.ascontiguousarray(cache.src_mask),
        }
        for layer, (past_keys, past_values, cross_keys, cross_values) in enumerate(layer_inputs):
            feeds[past_keys] = keys[layer]
            feeds[past_values] = values[layer]
            if with_cross:
                feeds[cross_keys] = cache.cross_keys[layer]
                feeds[cross_values] = cache.cross_values[layer]
        return cls(feeds, keys, values, mask, new_mask, cache.past_length)

    @staticmethod
    def output_names(*, attention: bool) -> list[str]:
        names = ["logits", "new_keys", "new_values"]
        return names + ["decoder_attention", "cross_attention"] if attention else names

    def finish(self, cache: KvCache, outputs: Sequence[np.ndarray], *, attention: bool) -> DecoderOutput:
        """The call's outputs (in `output_names` order) as a DecoderOutput: the new keys and values written
        into the buffers in place, which the returned cache owns from now on."""
        past, new = self.past, self.new_mask.shape[1]
        self.keys[:, :, :, past : past + new] = outputs[1]
        self.values[:, :, :, past : past + new] = outputs[2]
        self.mask[:, past : past + new] = self.new_mask
        cache.buffers = None  # handed on: a second step from this cache must not write over the next one's
        total = past + new
        new_cache = KvCache(
            self.keys[:, :, :, :total],
            self.values[:, :, :, :total],
            self.mask[:, :total],
            cache.cross_keys,
            cache.cross_values,
            cache.src_mask,
            device=cache.device,
            buffers=(self.keys, self.values, self.mask),
        )
        self_attention = None
        if attention:  # the graph's columns are the buffer's then the new ones: keep the real P + T
            capacity = self.keys.shape[3]
            self_attention = np.concatenate([outputs[3][..., :past], outputs[3][..., capacity:]], axis=-1)
        return DecoderOutput(
            logits=outputs[0],
            cache=new_cache,
            self_attention=self_attention,
            cross_attention=outputs[4] if attention else None,
        )


def _buffers_with_room(cache: KvCache, new: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cache's buffers when `new` more columns fit; otherwise fresh ones, with the cache copied in."""
    past = cache.past_length
    if cache.buffers is not None and cache.buffers[0].shape[3] >= past + new:
        return cache.buffers
    layers, batch, heads, _, head_dim = cache.cross_keys.shape
    capacity = past + new + _SPARE_COLUMNS
    keys = np.zeros((layers, batch, heads, capacity, head_dim), dtype=np.float32)
    values = np.zeros_like(keys)
    mask = np.zeros((batch, capacity), dtype=bool)
    keys[:, :, :, :past] = cache.keys
    values[:, :, :, :past] = cache.values
    mask[:, :past] = cache.self_mask
    return keys, values, mask
