"""atento's encoder and decoder-step graphs around T5 (T5, mT5, Flan-T5 / v1.1): transformers' own
submodules in atento's cache layout. T5 differs from the BART family in every block: RMSNorm before each
block, no attention scaling, a relative position bias computed by the first layer and added in every
layer's self-attention (bucketed, bidirectional in the encoder, causal in the decoder), no bias in
cross-attention, and the decoder output scaled by d_model ** -0.5 when the embeddings are tied.

In the decoder step the bias needs each key's position: a cached column's is its count of real columns
before it (`key_positions`), which holds for left padding and spare columns because masked columns are
never attended; the queries' are `tgt_positions`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from export.hf.attention import attend, key_positions, merge_heads, source_allowed, split_heads, step_allowed


def relative_bias(attention: Any, relative: torch.Tensor, *, bidirectional: bool) -> torch.Tensor:
    """(..., T, K) key position - query position -> (..., H, T, K) bias from `attention`'s bucket table."""
    buckets = type(attention)._relative_position_bucket(
        relative,
        bidirectional=bidirectional,
        num_buckets=attention.relative_attention_num_buckets,
        max_distance=attention.relative_attention_max_distance,
    )
    values: torch.Tensor = attention.relative_attention_bias(buckets)  # (..., T, K, H)
    return values.movedim(-1, -3)


def _self_attention(
    layer: Any,
    x: torch.Tensor,
    allowed: torch.Tensor,
    bias: torch.Tensor,
    past: tuple[torch.Tensor, torch.Tensor] | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pre-norm self-attention with the shared position bias; returns x, probabilities, new keys, new values."""
    attn = layer.SelfAttention
    h = layer.layer_norm(x)
    q, k, v = (split_heads(p(h), attn.n_heads) for p in (attn.q, attn.k, attn.v))
    keys, values = (k, v) if past is None else (torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2))
    out, probs = attend(q, keys, values, allowed, scaling=float(getattr(attn, "scaling", 1.0)), bias=bias)
    return x + attn.o(merge_heads(out)), probs, k, v


def _feed_forward(layer: Any, x: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = layer.DenseReluDense(layer.layer_norm(x))  # gated-gelu (v1.1, Flan) or relu, as configured
    return x + out


class T5EncoderGraph(nn.Module):
    """src, src_mask -> memory, cross_keys, cross_values, encoder_attention."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(
        self, src: torch.Tensor, src_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        encoder, decoder = self.model.encoder, self.model.decoder
        x: torch.Tensor = encoder.embed_tokens(src)
        positions = torch.arange(src.shape[1], device=src.device)
        relative = positions[None, :] - positions[:, None]  # (S, S) key - query
        bias = relative_bias(encoder.block[0].layer[0].SelfAttention, relative, bidirectional=True)[None]
        allowed = source_allowed(src_mask)
        attentions = []
        for block in encoder.block:
            x, probs, _, _ = _self_attention(block.layer[0], x, allowed, bias, None)
            x = _feed_forward(block.layer[-1], x)
            attentions.append(probs)
        x = encoder.final_layer_norm(x)
        keys, values = [], []
        for block in decoder.block:
            cross = block.layer[1].EncDecAttention
            keys.append(split_heads(cross.k(x), cross.n_heads))  # (B, H, S, Dh)
            values.append(split_heads(cross.v(x), cross.n_heads))
        return x, torch.stack(keys), torch.stack(values), torch.stack(attentions)


class T5DecoderGraph(nn.Module):
    """One step or a prefix beside per-layer caches (the contract's decoder.onnx)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model
        self.layers = len(model.decoder.block)

    def forward(
        self,
        tgt: torch.Tensor,
        tgt_positions: torch.Tensor,
        self_mask: torch.Tensor,
        src_mask: torch.Tensor,
        *caches: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        n = self.layers
        past_keys, past_values, cross_keys, cross_values = (caches[i * n : (i + 1) * n] for i in range(4))
        decoder = self.model.decoder
        x: torch.Tensor = decoder.embed_tokens(tgt)
        relative = key_positions(self_mask)[:, None, :] - tgt_positions[:, :, None]  # (B, T, P+T)
        bias = relative_bias(decoder.block[0].layer[0].SelfAttention, relative, bidirectional=False)  # (B, H, T, P+T)
        allowed_self = step_allowed(self_mask, tgt.shape[1])
        allowed_cross = source_allowed(src_mask)
        new_keys, new_values, self_probs, cross_probs = [], [], [], []
        for index, block in enumerate(decoder.block):
            x, probs, k, v = _self_attention(
                block.layer[0], x, allowed_self, bias, (past_keys[index], past_values[index])
            )
            new_keys.append(k)
            new_values.append(v)
            self_probs.append(probs)
            layer = block.layer[1]
            cross = layer.EncDecAttention
            q = split_heads(cross.q(layer.layer_norm(x)), cross.n_heads)
            out, probs = attend(
                q, cross_keys[index], cross_values[index], allowed_cross, scaling=float(getattr(cross, "scaling", 1.0))
            )
            x = x + cross.o(merge_heads(out))
            cross_probs.append(probs)
            x = _feed_forward(block.layer[-1], x)
        x = decoder.final_layer_norm(x)
        if getattr(self.model.config, "scale_decoder_outputs", self.model.config.tie_word_embeddings):
            x = x * (self.model.model_dim**-0.5)  # tied embeddings: T5 rescales before the LM head
        logits: torch.Tensor = self.model.lm_head(x)
        return (
            logits,
            torch.stack(new_keys),
            torch.stack(new_values),
            torch.stack(self_probs),
            torch.stack(cross_probs),
        )
