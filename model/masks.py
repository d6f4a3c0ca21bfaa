"""Attention masks as pure functions. Convention everywhere: True = may attend / is a real token."""

from __future__ import annotations

import torch


def padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, T) ids -> (B, T) bool, True for real tokens."""
    return ids != pad_id


def causal_mask(length: int, device: torch.device | None = None) -> torch.Tensor:
    """(T, T) bool, True where query t may attend to key u, i.e. u <= t."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


def decoder_self_mask(tgt_mask: torch.Tensor) -> torch.Tensor:
    """(B, T) real-token mask -> (B, 1, T, T): causal and padding combined, broadcast over heads."""
    length = tgt_mask.shape[1]
    return causal_mask(length, tgt_mask.device)[None, None] & tgt_mask[:, None, None, :]
