"""The model's architecture as one frozen dataclass, stored with every checkpoint.

Imports nothing from this repository.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 2048  # set from the tokenizer
    d_model: int = 192  # width of every residual stream
    n_heads: int = 4  # d_model must divide evenly
    n_encoder_layers: int = 3
    n_decoder_layers: int = 3
    d_ff: int = 768  # inner width of each feed-forward block
    dropout: float = 0.1
    max_positions: int = 256  # longest source or target, BOS/EOS included
    pre_norm: bool = True  # pre-norm trains stably without warm-up tricks; post-norm is the 2017 paper
    positional: str = "sinusoidal"  # or "learned"
    share_embeddings: bool = True  # one table for source, target and the output projection
    layer_norm_eps: float = 1e-5
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional must be 'sinusoidal' or 'learned', not {self.positional!r}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown ModelConfig fields: {unknown}")
        return cls(**data)

    def fingerprint(self) -> str:
        """A short stable hash, written into checkpoints and manifests to catch mismatches."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
