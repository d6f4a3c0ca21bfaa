"""A FakeRunner for the batch executor: a "copy the source" model with no onnxruntime session.

The source ids travel in cross_keys, so each row's logits depend only on its own source and
position: row b's next token is source[position], then EOS.
"""

from __future__ import annotations

import numpy as np

from service.engine.kv_cache import DecoderStep
from service.engine.runner import DecoderOutput, EncoderBatch, EncoderOutput, KvCache

VOCAB = 50
EOS = 2


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
        # The feeds and cache bookkeeping of a real runner (buffers, each row's new columns after its real ones).
        step = DecoderStep.prepare(tgt, cache, tgt_mask, [("k", "v", "ck", "cv")])
        batch, new = tgt.shape
        logits = np.zeros((batch, new, VOCAB), dtype=np.float32)
        for b in range(batch):
            source = cache.cross_keys[0, b, 0, :, 0][cache.src_mask[b]].astype(np.int64)
            for t in range(new):
                position = int(step.feeds["tgt_positions"][b, t])
                logits[b, t, source[position] if position < len(source) else EOS] = 5.0
        columns = np.zeros((1, batch, 1, new, 1), dtype=np.float32)
        return step.finish(cache, [logits, columns, columns], attention=False)


class FakeTokenizer:
    def decode(self, ids: list[int]) -> str:
        return "".join(f"<{i}>" for i in ids if i != EOS)
