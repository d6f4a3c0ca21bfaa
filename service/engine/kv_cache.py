"""The batch's KV cache, the runners' inputs and outputs, and one decoder step's buffers: what every runner
(onnxruntime's, OpenVINO's) shares, with no runtime imported. Split from runner.py.

Rows of a KvCache may have different target lengths: they are left-padded, `self_mask` False on the
padding, and each row's next position is its count of real cached tokens.
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

    def drop_masked_columns(self) -> KvCache:
        """Move each row's real columns to its right end, in order, and drop the columns then masked in every
        row, once masked columns are most of the cache.

        A step that checks drafted tokens (drafts.py) writes a column for every drafted position of every
        row and masks the ones greedy did not keep: masked columns pile up between real ones, where
        trim_left_padding cannot reach them. Attention ignores a column's place (its position is in its
        key), so gathering the real ones changes no result.
        """
        real = self.self_mask.sum(axis=1)
        width = int(real.max()) if self.batch else 0
        if self.past_length < 2 * width + 8:
            return self
        # A stable sort of the mask puts each row's masked columns first and its real ones last, in order.
        order = np.argsort(self.self_mask, axis=1, kind="stable")[:, self.past_length - width :]
        gather = order[None, :, None, :, None]
        return KvCache(
            keys=np.take_along_axis(self.keys, gather, axis=3),
            values=np.take_along_axis(self.values, gather, axis=3),
            self_mask=np.take_along_axis(self.self_mask, order, axis=1),
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
