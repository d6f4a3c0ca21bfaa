"""The model's architecture as one frozen dataclass, stored with every checkpoint.

Imports nothing from this repository.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = field(default=2048, metadata={"help": "Vocabulary size (set from the tokenizer)."})
    d_model: int = field(default=192, metadata={"help": "Width of every residual stream."})
    n_heads: int = field(default=4, metadata={"help": "Attention heads per layer (must divide --d-model)."})
    n_encoder_layers: int = field(default=3, metadata={"help": "Encoder layers."})
    n_decoder_layers: int = field(default=3, metadata={"help": "Decoder layers."})
    d_ff: int = field(default=768, metadata={"help": "Inner width of each feed-forward block."})
    dropout: float = field(default=0.1, metadata={"help": "Dropout probability."})
    max_positions: int = field(default=256, metadata={"help": "Longest source or target in tokens, BOS/EOS included."})
    pre_norm: bool = field(
        default=True,
        metadata={
            "help": "Pre-norm (trains stably without warm-up tricks); --no-pre-norm is the 2017 paper's post-norm."
        },
    )
    positional: str = field(default="sinusoidal", metadata={"help": "Position encoding: sinusoidal or learned."})
    share_embeddings: bool = field(
        default=True, metadata={"help": "One embedding table for source, target and the output projection."}
    )
    layer_norm_eps: float = field(default=1e-5, metadata={"help": "Layer norm epsilon."})
    pad_id: int = field(default=0, metadata={"help": "Padding token id (set from the tokenizer)."})
    bos_id: int = field(default=1, metadata={"help": "Beginning-of-sequence token id (set from the tokenizer)."})
    eos_id: int = field(default=2, metadata={"help": "End-of-sequence token id (set from the tokenizer)."})

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
