"""atento's encoder and decoder-step graphs around the BART-style families (Marian, BART, mBART,
M2M100/NLLB): transformers' own submodules (embeddings, projections, layer norms, feed-forwards) in
atento's cache layout. What differs between the families is a `BartStyle`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from export.hf.attention import attend, merge_heads, source_allowed, split_heads, step_allowed

Attention = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]  # hidden -> (output, probabilities)


@dataclass(frozen=True)
class BartStyle:
    positions: str  # "sinusoidal" (Marian: a fixed table), "learned" (BART/mBART: offset 2), "m2m100" (pad-aware)
    pre_norm: bool  # layer norm before each block (mBART, M2M100) or after the residual (Marian, BART)
    layernorm_embedding: bool  # a layer norm on the embeddings (BART, mBART)
    final_layer_norm: bool  # a layer norm after the last layer of each stack (mBART, M2M100)


def model_core(model: Any) -> Any:
    """The encoder-decoder inside the *ForConditionalGeneration (`model.model`)."""
    return model.model


def embed(stack: Any, ids: torch.Tensor, positions: torch.Tensor, style: BartStyle) -> torch.Tensor:
    """Token embeddings (scaled as the stack scales them) plus position embeddings at `positions`."""
    x: torch.Tensor = stack.embed_tokens(ids) * getattr(
        stack, "embed_scale", 1.0
    )  # Marian scales in the stack, BART in the module
    table = stack.embed_positions
    if style.positions == "sinusoidal":
        x = x + table.weight[positions]
    elif style.positions == "learned":
        x = x + table.weight[positions + table.offset]
    else:  # M2M100's table is a buffer; a real token's row is padding_idx + 1 + its position
        x = x + table.weights[positions + table.padding_idx + 1].detach()
    if style.layernorm_embedding:
        x = stack.layernorm_embedding(x)
    return x


def _residual(
    x: torch.Tensor, norm: nn.Module, style: BartStyle, body: Callable[[torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """Residual around `body` with the layer norm before (pre-norm) or after it (post-norm)."""
    y = x + body(norm(x) if style.pre_norm else x)
    return y if style.pre_norm else norm(y)


def _attention_residual(
    x: torch.Tensor, norm: nn.Module, style: BartStyle, body: Attention
) -> tuple[torch.Tensor, torch.Tensor]:
    """`_residual` around an attention block, which also returns its probabilities."""
    probs: list[torch.Tensor] = []

    def keep(h: torch.Tensor) -> torch.Tensor:
        out, p = body(h)
        probs.append(p)
        return out

    return _residual(x, norm, style, keep), probs[0]


def _feed_forward(layer: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    def feed_forward(x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = layer.fc2(layer.activation_fn(layer.fc1(x)))
        return out

    return feed_forward


class BartEncoderGraph(nn.Module):
    """src, src_mask -> memory, cross_keys, cross_values, encoder_attention (the contract's encoder.onnx)."""

    def __init__(self, model: Any, style: BartStyle) -> None:
        super().__init__()
        self.model = model
        self.style = style

    def forward(
        self, src: torch.Tensor, src_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        core = model_core(self.model)
        encoder = core.encoder
        positions = torch.arange(src.shape[1], device=src.device)[None, :].expand_as(src)
        x = embed(encoder, src, positions, self.style)
        allowed = source_allowed(src_mask)
        attentions: list[torch.Tensor] = []
        for layer in encoder.layers:
            attn = layer.self_attn

            def self_attention(h: torch.Tensor, attn: Any = attn) -> tuple[torch.Tensor, torch.Tensor]:
                q, k, v = (split_heads(p(h), attn.num_heads) for p in (attn.q_proj, attn.k_proj, attn.v_proj))
                out, probs = attend(q, k, v, allowed, scaling=attn.scaling)
                return attn.out_proj(merge_heads(out)), probs

            x, probs = _attention_residual(x, layer.self_attn_layer_norm, self.style, self_attention)
            x = _residual(x, layer.final_layer_norm, self.style, _feed_forward(layer))
            attentions.append(probs)
        if self.style.final_layer_norm:
            x = encoder.layer_norm(x)
        keys, values = [], []
        for layer in core.decoder.layers:
            cross = layer.encoder_attn
            keys.append(split_heads(cross.k_proj(x), cross.num_heads))  # (B, H, S, Dh)
            values.append(split_heads(cross.v_proj(x), cross.num_heads))
        return x, torch.stack(keys), torch.stack(values), torch.stack(attentions)


class BartDecoderGraph(nn.Module):
    """One step or a prefix beside per-layer caches (the contract's decoder.onnx)."""

    def __init__(self, model: Any, style: BartStyle) -> None:
        super().__init__()
        self.model = model
        self.style = style
        self.layers = len(model_core(model).decoder.layers)

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
        decoder = model_core(self.model).decoder
        x = embed(decoder, tgt, tgt_positions, self.style)
        allowed_self = step_allowed(self_mask, tgt.shape[1])
        allowed_cross = source_allowed(src_mask)
        new_keys: list[torch.Tensor] = []
        new_values: list[torch.Tensor] = []
        self_probs: list[torch.Tensor] = []
        cross_probs: list[torch.Tensor] = []
        for index, layer in enumerate(decoder.layers):
            attn, cross = layer.self_attn, layer.encoder_attn

            def self_attention(
                h: torch.Tensor, attn: Any = attn, index: int = index
            ) -> tuple[torch.Tensor, torch.Tensor]:
                q, k, v = (split_heads(p(h), attn.num_heads) for p in (attn.q_proj, attn.k_proj, attn.v_proj))
                new_keys.append(k)
                new_values.append(v)
                keys = torch.cat([past_keys[index], k], dim=2)  # (B, H, P+T, Dh)
                values = torch.cat([past_values[index], v], dim=2)
                out, probs = attend(q, keys, values, allowed_self, scaling=attn.scaling)
                return attn.out_proj(merge_heads(out)), probs

            def cross_attention(
                h: torch.Tensor, cross: Any = cross, index: int = index
            ) -> tuple[torch.Tensor, torch.Tensor]:
                q = split_heads(cross.q_proj(h), cross.num_heads)
                out, probs = attend(q, cross_keys[index], cross_values[index], allowed_cross, scaling=cross.scaling)
                return cross.out_proj(merge_heads(out)), probs

            x, probs = _attention_residual(x, layer.self_attn_layer_norm, self.style, self_attention)
            self_probs.append(probs)
            x, probs = _attention_residual(x, layer.encoder_attn_layer_norm, self.style, cross_attention)
            cross_probs.append(probs)
            x = _residual(x, layer.final_layer_norm, self.style, _feed_forward(layer))
        if self.style.final_layer_norm:
            x = decoder.layer_norm(x)
        logits = self.model.lm_head(x)
        bias = getattr(self.model, "final_logits_bias", None)
        if bias is not None:
            logits = logits + bias
        return (
            logits,
            torch.stack(new_keys),
            torch.stack(new_values),
            torch.stack(self_probs),
            torch.stack(cross_probs),
        )
