"""What one decoder row recorded of the attention a request asked for, and its assembly into the result.

Kept apart from the batch executor, which only appends to it. Pure numpy; no onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from service.engine.types import Attention, AttentionSpec


@dataclass
class AttentionLog:
    """Attention probabilities of one row's positions, only the layers and heads asked for."""

    spec: AttentionSpec
    source_len: int
    encoder: np.ndarray | None = None  # (l, h, S, S)
    decoder: list[np.ndarray] = field(default_factory=list)  # per position: (l, h, t+1)
    cross: list[np.ndarray] = field(default_factory=list)  # per position: (l, h, S)

    def select(self, array: np.ndarray) -> np.ndarray:
        """(L, H, ...) -> (l, h, ...)."""
        if self.spec.layers is not None:
            array = array[list(self.spec.layers)]
        if self.spec.heads is not None:
            array = array[:, list(self.spec.heads)]
        return array

    def fork(self) -> AttentionLog:
        return AttentionLog(self.spec, self.source_len, self.encoder, list(self.decoder), list(self.cross))

    def build(self, *, n_heads: int, n_layers: int, n_encoder_layers: int) -> Attention:
        kinds = self.spec.kinds
        heads = tuple(self.spec.heads) if self.spec.heads is not None else tuple(range(n_heads))

        def layer_ids(total: int) -> list[int]:
            return list(self.spec.layers) if self.spec.layers is not None else list(range(total))

        encoder: dict[int, np.ndarray] = {}
        if "encoder" in kinds and self.encoder is not None:
            encoder = {layer: self.encoder[i] for i, layer in enumerate(layer_ids(n_encoder_layers))}
        decoder: dict[int, np.ndarray] = {}
        cross: dict[int, np.ndarray] = {}
        length = len(self.decoder) if "decoder" in kinds else len(self.cross)
        if "decoder" in kinds and self.decoder:
            square = np.zeros((*self.decoder[0].shape[:2], length, length), dtype=np.float32)
            for t, row in enumerate(self.decoder):
                square[:, :, t, : t + 1] = row
            decoder = {layer: square[i] for i, layer in enumerate(layer_ids(n_layers))}
        if "cross" in kinds and self.cross:
            stacked = np.stack(self.cross, axis=2)  # (l, h, T, S)
            cross = {layer: stacked[i] for i, layer in enumerate(layer_ids(n_layers))}
        return Attention(encoder=encoder, decoder=decoder, cross=cross, heads=heads)
