"""Eager attention in atento's cache layout, as transformers' `eager_attention_forward` computes it:
softmax(QK^T * scaling + bias, masked) V, returning the probabilities. Shared by every family's graphs.
"""

from __future__ import annotations

import torch


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    batch, length, _ = x.shape
    return x.view(batch, length, heads, -1).transpose(1, 2)  # (B, H, T, Dh)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    batch, heads, length, head_dim = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * head_dim)  # (B, T, H*Dh)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    allowed: torch.Tensor,
    *,
    scaling: float,
    bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """q (B, H, T, Dh), k/v (B, H, K, Dh), allowed (B, 1 or H, T or 1, K) bool -> (B, H, T, Dh), probs (B, H, T, K).

    Masked scores get the dtype's minimum, as transformers' additive masks do (a row with nothing
    allowed, e.g. a dead batch row, then averages instead of producing NaN).
    """
    scores = torch.matmul(q, k.transpose(2, 3))  # (B, H, T, K)
    if scaling != 1.0:
        scores = scores * scaling
    if bias is not None:
        scores = scores + bias
    scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores, dim=-1)
    return torch.matmul(probs, v), probs


def source_allowed(src_mask: torch.Tensor) -> torch.Tensor:
    """(B, S) True = real -> (B, 1, 1, S): every query may attend to every real source token."""
    return src_mask[:, None, None, :]


def step_allowed(self_mask: torch.Tensor, new: int) -> torch.Tensor:
    """(B, P+T) -> (B, 1, T, P+T): new token t sees cached column p when self_mask[b, p] and new column
    P+u when self_mask[b, P+u] and u <= t (docs/model-directory.md)."""
    total = self_mask.shape[1]
    past = total - new
    columns = torch.arange(total, device=self_mask.device)[None, :]  # (1, P+T)
    rows = torch.arange(new, device=self_mask.device)[:, None] + past  # (T, 1)
    return self_mask[:, None, None, :] & (columns <= rows)[None, None]  # (B, 1, T, P+T)


def key_positions(self_mask: torch.Tensor) -> torch.Tensor:
    """(B, P+T) -> (B, P+T) int64: each real column's absolute target position (its count of real
    columns before it); masked columns get whatever, they are never attended."""
    return torch.cumsum(self_mask.to(torch.int64), dim=1) - 1
