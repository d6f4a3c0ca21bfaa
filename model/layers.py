"""The building blocks around attention: feed-forward, residual + layer norm, encoder and decoder
layers, positional encodings. Imports nothing from this repository outside model/.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import torch
from torch import nn

from model.attention import MultiHeadAttention

Aux = TypeVar("Aux")


class FeedForward(nn.Module):
    """Position-wise FFN(x) = max(0, x W1 + b1) W2 + b2."""

    def __init__(self, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.inner = nn.Linear(d_model, d_ff)
        self.outer = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.outer(self.dropout(torch.relu(self.inner(x))))


class Residual(nn.Module):
    """x + Sublayer(x) with layer norm before (pre-norm) or after (post-norm, as in the paper)."""

    def __init__(self, d_model: int, dropout: float, *, pre_norm: bool, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)
        self.pre_norm = pre_norm

    def forward(
        self, x: torch.Tensor, sublayer: Callable[[torch.Tensor], tuple[torch.Tensor, Aux]]
    ) -> tuple[torch.Tensor, Aux]:
        if self.pre_norm:
            y, aux = sublayer(self.norm(x))
            return x + self.dropout(y), aux
        y, aux = sublayer(x)
        return self.norm(x + self.dropout(y)), aux


class EncoderLayer(nn.Module):
    """Self-attention, then feed-forward, each inside a residual block."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float, *, pre_norm: bool, eps: float) -> None:
        super().__init__()
        self.self_attention = MultiHeadAttention(d_model, n_heads, dropout, is_cross=False)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.self_attention_block = Residual(d_model, dropout, pre_norm=pre_norm, eps=eps)
        self.feed_forward_block = Residual(d_model, dropout, pre_norm=pre_norm, eps=eps)

    def feed_forward_step(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.feed_forward_block(x, lambda h: (self.feed_forward(h), None))
        return out

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, S, D), mask (B, 1, 1, S) -> new x and self-attention probabilities (B, H, S, S)."""
        x, (probs, _) = self.self_attention_block(x, lambda h: self._self_attention_with_aux(h, mask))
        return self.feed_forward_step(x), probs

    def _self_attention_with_aux(
        self,
        h: torch.Tensor,
        mask: torch.Tensor,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
        *,
        beside_cache: bool = False,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]]:
        if beside_cache and past is not None:
            out, probs, key_value = self.self_attention.self_attend_beside_cache(h, mask, past)
        else:
            out, probs, key_value = self.self_attention.self_attend(h, mask, past)
        return out, (probs, key_value)


class DecoderLayer(EncoderLayer):
    """An encoder layer with cross-attention over the encoder output between its two blocks."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float, *, pre_norm: bool, eps: float) -> None:
        super().__init__(d_model, n_heads, d_ff, dropout, pre_norm=pre_norm, eps=eps)
        self.cross_attention = MultiHeadAttention(d_model, n_heads, dropout, is_cross=True)
        self.cross_attention_block = Residual(d_model, dropout, pre_norm=pre_norm, eps=eps)

    def forward(  # type: ignore[override]  # the decoder needs the encoder's keys/values and a cache
        self,
        x: torch.Tensor,
        self_mask: torch.Tensor,
        cross_key_value: tuple[torch.Tensor, torch.Tensor],
        cross_mask: torch.Tensor,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
        *,
        beside_cache: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Returns new x (B, T, D), masked self-attention probabilities (B, H, T, P+T),
        cross-attention probabilities (B, H, T, S) and the self-attention keys/values (B, H, P+T, Dh),
        or with `beside_cache` only the new ones (B, H, T, Dh), the cache read but not copied.
        """
        x, (self_probs, present) = self.self_attention_block(
            x, lambda h: self._self_attention_with_aux(h, self_mask, past, beside_cache=beside_cache)
        )
        x, cross_probs = self.cross_attention_block(
            x, lambda h: self.cross_attention.cross_attend(h, cross_key_value, cross_mask)
        )
        return self.feed_forward_step(x), self_probs, cross_probs, present


def sinusoidal_table(max_positions: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""
    position = torch.arange(max_positions, dtype=torch.float32)[:, None]  # (P, 1)
    inverse_frequency = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model)
    )  # (D/2,)
    table = torch.zeros(max_positions, d_model)
    table[:, 0::2] = torch.sin(position * inverse_frequency)
    table[:, 1::2] = torch.cos(position * inverse_frequency)
    return table


class PositionalEncoding(nn.Module):
    """Adds position information to the embeddings: the fixed sinusoids, or a learned table."""

    def __init__(self, max_positions: int, d_model: int, *, learned: bool) -> None:
        super().__init__()
        self.learned = learned
        if learned:
            self.table = nn.Parameter(torch.randn(max_positions, d_model) * 0.02)
        else:
            self.register_buffer("table", sinusoidal_table(max_positions, d_model), persistent=False)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        """positions (B, T) int64 -> (B, T, D)."""
        return self.table[positions]
