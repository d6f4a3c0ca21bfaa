"""A FakeRunner for the batch executor: a "copy the source" model with no onnxruntime session.

The source ids travel in cross_keys, so each row's logits depend only on its own source and
position: row b's next token is source[position], then EOS.
"""

from __future__ import annotations

import numpy as np

from service.engine.runner import DecoderOutput, EncoderBatch, EncoderOutput, KvCache

VOCAB = 50
EOS = 2


def _decoder_inputs(tgt: np.ndarray, cache: KvCache, tgt_mask: np.ndarray | None) -> dict[str, np.ndarray]:
    """The decoder inputs a real runner would build for `tgt` after `cache` (format 1's, without buffers)."""
    batch, new = tgt.shape
    mask = np.ones((batch, new), dtype=bool) if tgt_mask is None else tgt_mask
    positions = cache.positions()[:, None] + np.arange(new, dtype=np.int64)[None, :]  # (B, T)
    return {
        "tgt": np.ascontiguousarray(tgt, dtype=np.int64),
        "tgt_positions": positions,
        "self_mask": np.concatenate([cache.self_mask, mask], axis=1),
        "src_mask": cache.src_mask,
    }


class FakeRunner:
    def __init__(self) -> None:
        self.encode_calls: list[int] = []  # batch size of each call
        self.decode_calls: list[int] = []
        self.fail_on_decode: int | None = None  # raise on this decode call (1-based)

    def encode(self, batch: EncoderBatch, *, attention: bool) -> EncoderOutput:
        self.encode_calls.append(batch.src.shape[0])
        keys = batch.src.astype(np.float32)[None, :, None, :, None]  # (1, B, 1, S, 1)
        return EncoderOutput(KvCache.start(keys, keys.copy(), batch.src_mask), None)

    def decode(
        self, tgt: np.ndarray, cache: KvCache, *, attention: bool, tgt_mask: np.ndarray | None = None
    ) -> DecoderOutput:
        self.decode_calls.append(tgt.shape[0])
        if self.fail_on_decode is not None and len(self.decode_calls) == self.fail_on_decode:
            raise RuntimeError("injected fault")
        feeds = _decoder_inputs(tgt, cache, tgt_mask)
        batch, new = tgt.shape
        logits = np.zeros((batch, new, VOCAB), dtype=np.float32)
        for b in range(batch):
            source = cache.cross_keys[0, b, 0, :, 0][cache.src_mask[b]].astype(np.int64)
            for t in range(new):
                position = int(feeds["tgt_positions"][b, t])
                logits[b, t, source[position] if position < len(source) else EOS] = 5.0
        step = np.zeros((1, batch, 1, new, 1), dtype=np.float32)
        keys = np.concatenate([cache.keys, step], axis=3)
        next_cache = KvCache(
            keys, keys.copy(), feeds["self_mask"], cache.cross_keys, cache.cross_values, cache.src_mask
        )
        return DecoderOutput(logits, next_cache, None, None)


class FakeTokenizer:
    def decode(self, ids: list[int]) -> str:
        return "".join(f"<{i}>" for i in ids if i != EOS)
