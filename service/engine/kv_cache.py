"""The batch's KV cache, the runners' inputs and outputs, and one decoder step's buffers: what every runner
(onnxruntime's, OpenVINO's) shares, with no runtime imported. Split from runner.py.

Rows of a KvCache may have different target lengths: each row's real columns come first (columns 0 to its
length - 1, `self_mask` True there) and padding after them, so each row's next position, and the column its
next token's keys go to, is its length. A graph that reads each row's own length only (GroupQueryAttention)
needs exactly that; the mask-reading graph (decoder format 2) reads the mask, wherever the real columns are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class KvCache:
    """Per-row decoder state of a batch: self-attention cache, cross keys/values and masks."""

    keys: np.ndarray  # (L, B, H, P, Dh) float32
    values: np.ndarray  # (L, B, H, P, Dh)
    self_mask: np.ndarray  # (B, P) bool: each row's first `length` columns True, its padding after them False
    cross_keys: np.ndarray  # (L, B, H, S, Dh), right-padded
    cross_values: np.ndarray  # (L, B, H, S, Dh)
    src_mask: np.ndarray  # (B, S) bool
    device: dict[str, Any] = field(default_factory=dict, repr=False)  # runner-owned device copies
    # OnnxRunner's (keys, values, self_mask) buffers with spare columns: keys, values and self_mask are
    # then views of their first P columns, and the next step writes its column in place. Handed on to
    # the cache that step returns; None for a cache built any other way (the step then makes them).
    buffers: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    # OnnxRunner's decoder format 3 IOBinding of these buffers and the cross arrays, handed on with the buffers
    # (the runner checks that they are still the arrays it bound); None: the next format 3 step binds them.
    binding: Any = field(default=None, repr=False)

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
        real = _real_width(self_mask)
        width = _real_width(src_mask)
        return KvCache(
            keys=self.keys[:, index, :, :real],
            values=self.values[:, index, :, :real],
            self_mask=self_mask[:, :real],
            # Contiguous once here: decoder format 3 binds each layer's slice in place every step (a strided one
            # would be copied every step instead).
            cross_keys=np.ascontiguousarray(self.cross_keys[:, index, :, :width]),
            cross_values=np.ascontiguousarray(self.cross_values[:, index, :, :width]),
            src_mask=src_mask[:, :width],
        )

    def trim_padding(self) -> KvCache:
        """A compact copy once the columns past the longest row (the buffers' spare ones included) are a
        quarter of the buffers: the mask-reading graph reads every column of them.

        When the longest rows leave, the others keep the buffers they grew: without this, a batch that never
        empties would carry that width into every step. Waiting for a quarter makes the copy rare.
        """
        capacity = self.buffers[0].shape[3] if self.buffers is not None else self.past_length
        real = _real_width(self.self_mask)
        if capacity - real < max(_SPARE_COLUMNS + 4, capacity // 4):
            return self
        return KvCache(
            keys=np.ascontiguousarray(self.keys[:, :, :, :real]),
            values=np.ascontiguousarray(self.values[:, :, :, :real]),
            self_mask=np.ascontiguousarray(self.self_mask[:, :real]),
            cross_keys=self.cross_keys,
            cross_values=self.cross_values,
            src_mask=self.src_mask,
            device=self.device,
        )

    @staticmethod
    def concatenate(caches: Sequence[KvCache]) -> KvCache:
        """Stack rows of several caches, self and cross caches right-padded."""
        caches = [c for c in caches if c.batch > 0]
        if len(caches) == 1:
            return caches[0]
        past = max(c.past_length for c in caches)
        source = max(c.src_mask.shape[1] for c in caches)

        def pad(array: np.ndarray, axis: int, width: int) -> np.ndarray:
            missing = width - array.shape[axis]
            if missing == 0:
                return array
            spec = [(0, 0)] * array.ndim
            spec[axis] = (0, missing)
            return np.pad(array, spec)

        return KvCache(
            keys=np.concatenate([pad(c.keys, 3, past) for c in caches], axis=1),
            values=np.concatenate([pad(c.values, 3, past) for c in caches], axis=1),
            self_mask=np.concatenate([pad(c.self_mask, 1, past) for c in caches], axis=0),
            cross_keys=np.concatenate([pad(c.cross_keys, 3, source) for c in caches], axis=1),
            cross_values=np.concatenate([pad(c.cross_values, 3, source) for c in caches], axis=1),
            src_mask=np.concatenate([pad(c.src_mask, 1, source) for c in caches], axis=0),
        )


def _real_width(mask: np.ndarray) -> int:
    """The columns up to the last one some row holds (a self or source mask): the longest row's length."""
    if mask.shape[1] == 0 or not mask.any():
        return 0
    return int(np.flatnonzero(mask.any(axis=0)).max()) + 1


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
    lengths: np.ndarray  # (B,) each row's length before the call: where its new columns go

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
        lengths = cache.positions()
        feeds = {
            "tgt": np.ascontiguousarray(tgt, dtype=np.int64),
            "tgt_positions": lengths[:, None] + np.arange(new, dtype=np.int64),
            "self_mask": np.concatenate([mask, new_mask], axis=1),  # the buffer's spare columns are False
            "src_mask": np.ascontiguousarray(cache.src_mask),
        }
        for layer, (past_keys, past_values, cross_keys, cross_values) in enumerate(layer_inputs):
            feeds[past_keys] = keys[layer]
            feeds[past_values] = values[layer]
            if with_cross:
                feeds[cross_keys] = cache.cross_keys[layer]
                feeds[cross_values] = cache.cross_values[layer]
        return cls(feeds, keys, values, mask, new_mask, lengths)

    @classmethod
    def one_token(cls, tgt: np.ndarray, cache: KvCache, tgt_mask: np.ndarray | None) -> DecoderStep:
        """A step of one token a row for decoder format 3, which needs the buffers and each row's length (its
        position) but no feeds: its runner binds the buffers and writes the tokens and lengths itself."""
        keys, values, mask = _buffers_with_room(cache, 1)
        new_mask = np.ones((tgt.shape[0], 1), dtype=bool) if tgt_mask is None else tgt_mask
        return cls({}, keys, values, mask, new_mask, cache.positions())

    @staticmethod
    def output_names(*, attention: bool) -> list[str]:
        names = ["logits", "new_keys", "new_values"]
        return names + ["decoder_attention", "cross_attention"] if attention else names

    def finish(self, cache: KvCache, outputs: Sequence[np.ndarray], *, attention: bool) -> DecoderOutput:
        """The call's outputs (in `output_names` order) as a DecoderOutput: each row's new keys and values
        written into the buffers in place after its real columns; the returned cache owns the buffers now."""
        new = self.new_mask.shape[1]
        rows = np.arange(self.new_mask.shape[0])
        for t in range(new):  # row b's token t goes to column lengths[b] + t: (B, L, H, Dh) by fancy indexing
            self.keys[:, rows, :, self.lengths + t] = np.moveaxis(outputs[1][:, :, :, t], 1, 0)
            self.values[:, rows, :, self.lengths + t] = np.moveaxis(outputs[2][:, :, :, t], 1, 0)
            self.mask[rows, self.lengths + t] = self.new_mask[:, t]
        width = self.width_after(new)
        self_attention = None
        if attention:  # the graph's columns are the buffer's then the new ones: the new ones moved to their rows' place
            self_attention = self._aligned_self_attention(outputs[3], width)
        new_cache = self.handed_on(cache, width)
        return DecoderOutput(
            logits=outputs[0],
            cache=new_cache,
            self_attention=self_attention,
            cross_attention=outputs[4] if attention else None,
        )

    def width_after(self, new: int) -> int:
        """The columns the cache spans after `new` tokens a row: up to the longest row's last."""
        return int(self.lengths.max()) + new if self.lengths.size else new

    def handed_on(self, cache: KvCache, width: int) -> KvCache:
        """The cache after this call, `width` columns of the buffers (the new columns written already)."""
        cache.buffers = None  # handed on: a second step from this cache must not write over the next one's
        cache.binding = None
        return KvCache(
            self.keys[:, :, :, :width],
            self.values[:, :, :, :width],
            self.mask[:, :width],
            cache.cross_keys,
            cache.cross_values,
            cache.src_mask,
            device=cache.device,
            buffers=(self.keys, self.values, self.mask),
        )

    def _aligned_self_attention(self, weights: np.ndarray, width: int) -> np.ndarray:
        """(L, B, H, T, capacity + T) as the graph gives them -> (L, B, H, T, width) over the new cache's
        columns: the buffer's, with each new token's weight at the column its keys were written to."""
        capacity = self.mask.shape[1]
        aligned = np.array(weights[..., :width])
        rows = np.arange(self.new_mask.shape[0])
        for t in range(self.new_mask.shape[1]):
            aligned[:, rows, :, :, self.lengths + t] = np.moveaxis(weights[:, :, :, :, capacity + t], 1, 0)
        return aligned


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
