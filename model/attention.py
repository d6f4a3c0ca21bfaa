"""Scaled dot-product attention and multi-head attention, written so each step is visible.

Imports nothing from this repository except the config conventions (True = may attend).
"""

from __future__ import annotations

import math

import torch
from torch import nn


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q K^T / sqrt(d_k)) V.

    Args:
        q: (B, H, T, Dh) queries.
        k: (B, H, S, Dh) keys.
        v: (B, H, S, Dh) values.
        mask: bool, broadcastable to (B, H, T, S); True where query t may attend to key s.

    Returns:
        The attended values (B, H, T, Dh) and the attention probabilities (B, H, T, S).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, S)
    # The most negative finite number, not -inf: a fully masked row then stays finite (uniform)
    # instead of NaN; real rows always see at least one key, so they are unaffected.
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    probs = scores.softmax(dim=-1)
    return probs @ v, probs


class MultiHeadAttention(nn.Module):
    """H heads of attention in parallel, then the output projection W_O.

    Self-attention projects Q, K and V with one fused linear layer; cross-attention projects Q from
    the decoder and K, V (fused) from the encoder output, so K, V can be computed once per request.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float, *, is_cross: bool) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.is_cross = is_cross
        if is_cross:
            self.query = nn.Linear(d_model, d_model)
            self.key_value = nn.Linear(d_model, 2 * d_model)
        else:
            self.query_key_value = nn.Linear(d_model, 3 * d_model)
        self.output = nn.Linear(d_model, d_model)  # W_O
        self.dropout = nn.Dropout(dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.n_heads * self.head_dim)  # (B, T, D)

    def project_key_value(self, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Cross-attention keys and values of the encoder output, each (B, H, S, Dh)."""
        key, value = self.key_value(memory).chunk(2, dim=-1)  # 2 x (B, S, D)
        return self.split_heads(key), self.split_heads(value)

    def attend(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        attended, probs = scaled_dot_product_attention(q, k, v, mask)
        if self.training and self.dropout.p > 0:
            # Dropout on the weights as in the paper, after they are returned undropped.
            attended = self.dropout(probs) @ v
        return self.output(self.merge_heads(attended)), probs

    def self_attend(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Self-attention of x (B, T, D), optionally after cached keys/values (B, H, P, Dh).

        Returns the output (B, T, D), probabilities (B, H, T, P+T) and the keys/values (B, H, P+T, Dh).
        """
        q, k, v = (self.split_heads(part) for part in self.query_key_value(x).chunk(3, dim=-1))
        if past is not None:
            k = torch.cat([past[0], k], dim=2)  # (B, H, P+T, Dh)
            v = torch.cat([past[1], v], dim=2)
        out, probs = self.attend(q, k, v, mask)
        return out, probs, (k, v)

    def self_attend_beside_cache(
        self, x: torch.Tensor, mask: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """`self_attend` without concatenating the cache: the scores against the cached keys (B, H, P, Dh)
        and against the new ones are concatenated instead, and the output is the sum of both parts.

        The same attention (up to float rounding), but the cache is only read, so the serving graph
        can take it as a buffer with spare columns (masked) and return just the new keys/values.
        Returns the output (B, T, D), probabilities (B, H, T, P+T) and the new keys/values (B, H, T, Dh).
        """
        q, k, v = (self.split_heads(part) for part in self.query_key_value(x).chunk(3, dim=-1))
        scale = math.sqrt(q.shape[-1])  # applied to each product, where onnxruntime fuses it into the matmul
        scores = torch.cat([q @ past[0].transpose(-2, -1) / scale, q @ k.transpose(-2, -1) / scale], dim=-1)
        probs = scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(dim=-1)
        weights = self.dropout(probs) if self.training and self.dropout.p > 0 else probs
        cached = past[0].shape[2]
        attended = weights[..., :cached] @ past[1] + weights[..., cached:] @ v
        return self.output(self.merge_heads(attended)), probs, (k, v)

    def cross_attend(
        self, x: torch.Tensor, key_value: tuple[torch.Tensor, torch.Tensor], mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention of decoder states x (B, T, D) over precomputed encoder keys/values."""
        q = self.split_heads(self.query(x))  # (B, H, T, Dh)
        return self.attend(q, key_value[0], key_value[1], mask)
