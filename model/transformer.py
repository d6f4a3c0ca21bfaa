"""The encoder-decoder transformer of "Attention Is All You Need" (Vaswani et al., 2017).

`encode` and `decode_step` are the two entry points the ONNX export wraps; `decode` (teacher
forcing) and `forward` are built from them. Imports only model/.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from model.config import ModelConfig
from model.layers import DecoderLayer, EncoderLayer, PositionalEncoding


@dataclass
class EncoderOutput:
    memory: torch.Tensor  # (B, S, D)
    attention: torch.Tensor  # (L, B, H, S, S) encoder self-attention probabilities


@dataclass
class DecoderOutput:
    logits: torch.Tensor  # (B, T, V)
    present_keys: torch.Tensor  # (L, B, H, P+T, Dh); (L, B, H, T, Dh) from decode_step(beside_cache=True)
    present_values: torch.Tensor  # (L, B, H, P+T, Dh)
    self_attention: torch.Tensor  # (L, B, H, T, P+T) masked decoder self-attention probabilities
    cross_attention: torch.Tensor  # (L, B, H, T, S)


def step_self_mask(self_mask: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Key-validity mask (B, P+T) -> (B, 1, T, P+T): cached keys as given, new keys causally."""
    total = self_mask.shape[1]
    past = total - new_tokens
    query = torch.arange(new_tokens, device=self_mask.device)[:, None]  # (T, 1)
    key = torch.arange(total, device=self_mask.device)[None, :]  # (1, P+T)
    causal = key - past <= query  # (T, P+T): every cached key, and new keys up to the query itself
    return causal[None, None] & self_mask[:, None, None, :]


class Transformer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        layer_args = dict(
            d_model=config.d_model,
            n_heads=config.n_heads,
            d_ff=config.d_ff,
            dropout=config.dropout,
        )
        norm_args = dict(pre_norm=config.pre_norm, eps=config.layer_norm_eps)
        self.embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = PositionalEncoding(
            config.max_positions, config.d_model, learned=config.positional == "learned"
        )
        self.dropout = nn.Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(**layer_args, **norm_args) for _ in range(config.n_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(**layer_args, **norm_args) for _ in range(config.n_decoder_layers)
        )
        # Pre-norm leaves the residual stream unnormalized, so each stack ends with a layer norm.
        self.encoder_norm = (
            nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if config.pre_norm else nn.Identity()
        )
        self.decoder_norm = (
            nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if config.pre_norm else nn.Identity()
        )
        self.output_projection = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.share_embeddings:
            self.output_projection.weight = self.embedding.weight
        self._init_weights()

    def _init_weights(self) -> None:
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1 and "positions" not in name:
                nn.init.xavier_uniform_(parameter)
        nn.init.normal_(self.embedding.weight, std=self.config.d_model**-0.5)

    def embed(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Token embeddings scaled by sqrt(d_model), plus positions: (B, T) -> (B, T, D)."""
        scaled = self.embedding(ids) * math.sqrt(self.config.d_model)
        return self.dropout(scaled + self.positions(positions))

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> EncoderOutput:
        """src (B, S) ids, src_mask (B, S) True for real tokens."""
        positions = torch.arange(src.shape[1], device=src.device).expand_as(src)
        x = self.embed(src, positions)
        key_mask = src_mask[:, None, None, :]  # (B, 1, 1, S)
        attention = []
        for layer in self.encoder_layers:
            x, probs = layer(x, key_mask)
            attention.append(probs)
        return EncoderOutput(memory=self.encoder_norm(x), attention=torch.stack(attention))

    def cross_key_values(self, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every decoder layer's cross-attention keys and values, each (L, B, H, S, Dh)."""
        pairs = [layer.cross_attention.project_key_value(memory) for layer in self.decoder_layers]
        return torch.stack([k for k, _ in pairs]), torch.stack([v for _, v in pairs])

    def decode_step(
        self,
        tgt: torch.Tensor,
        tgt_positions: torch.Tensor,
        self_mask: torch.Tensor,
        past_keys: torch.Tensor,
        past_values: torch.Tensor,
        cross_keys: torch.Tensor,
        cross_values: torch.Tensor,
        src_mask: torch.Tensor,
        *,
        beside_cache: bool = False,
    ) -> DecoderOutput:
        """Run T new target tokens against a cache of P earlier ones (P may be 0).

        Args:
            tgt: (B, T) new token ids. tgt_positions: (B, T) their absolute positions.
            self_mask: (B, P+T) True where a cached or new key is real.
            past_keys, past_values: (L, B, H, P, Dh). cross_keys, cross_values: (L, B, H, S, Dh).
                Stacked, or one (B, H, ., Dh) tensor per layer.
            src_mask: (B, S) True for real source tokens.
            beside_cache: read the cache without concatenating it; present_keys/values are then only
                the new tokens' (L, B, H, T, Dh), for a caller that keeps the cache in a buffer.
        """
        x = self.embed(tgt, tgt_positions)
        attend_mask = step_self_mask(self_mask, tgt.shape[1])  # (B, 1, T, P+T)
        cross_mask = src_mask[:, None, None, :]  # (B, 1, 1, S)
        keys, values, self_attention, cross_attention = [], [], [], []
        for index, layer in enumerate(self.decoder_layers):
            x, self_probs, cross_probs, (k, v) = layer(
                x,
                attend_mask,
                (cross_keys[index], cross_values[index]),
                cross_mask,
                past=(past_keys[index], past_values[index]),
                beside_cache=beside_cache,
            )
            keys.append(k)
            values.append(v)
            self_attention.append(self_probs)
            cross_attention.append(cross_probs)
        return DecoderOutput(
            logits=self.output_projection(self.decoder_norm(x)),
            present_keys=torch.stack(keys),
            present_values=torch.stack(values),
            self_attention=torch.stack(self_attention),
            cross_attention=torch.stack(cross_attention),
        )

    def empty_cache(self, batch: int, device: torch.device | None = None) -> torch.Tensor:
        """A (L, B, H, 0, Dh) cache for the first decoding step."""
        c = self.config
        return torch.zeros(c.n_decoder_layers, batch, c.n_heads, 0, c.head_dim, device=device)

    def decode(
        self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor, tgt_mask: torch.Tensor
    ) -> DecoderOutput:
        """Teacher-forced decoding of a whole target prefix (B, T) with the causal mask."""
        positions = torch.arange(tgt.shape[1], device=tgt.device).expand_as(tgt)
        cross_keys, cross_values = self.cross_key_values(memory)
        empty = self.empty_cache(tgt.shape[0], tgt.device)
        return self.decode_step(tgt, positions, tgt_mask, empty, empty, cross_keys, cross_values, src_mask)

    def forward(
        self, src: torch.Tensor, tgt: torch.Tensor, src_mask: torch.Tensor, tgt_mask: torch.Tensor
    ) -> torch.Tensor:
        """Logits (B, T, V) for next-token prediction at every target position."""
        encoded = self.encode(src, src_mask)
        return self.decode(tgt, encoded.memory, src_mask, tgt_mask).logits
