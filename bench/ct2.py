"""CTranslate2 conversion of an atento `Transformer`, and a translator speaking token ids.

CTranslate2's TransformerSpec mirrors our layers: self-attention takes the fused QKV linear as is,
cross-attention a query linear plus the fused key/value linear; embeddings are scaled by
sqrt(d_model) and the model's own (interleaved sin/cos, from position 0) table is passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import ctranslate2
import numpy as np
import tokenizers
import torch
from ctranslate2.specs import common_spec, transformer_spec

from model.transformer import Transformer


def _array(tensor: torch.Tensor) -> np.ndarray:
    # A copy: CTranslate2's optimize() rewrites spec arrays in place, which would corrupt the model.
    return tensor.detach().to(torch.float32).numpy().copy()


def _linear(spec: common_spec.LinearSpec, layer: torch.nn.Linear) -> None:
    spec.weight = _array(layer.weight)
    if layer.bias is not None:
        spec.bias = _array(layer.bias)


def _norm(spec: common_spec.LayerNormSpec, norm: torch.nn.LayerNorm) -> None:
    spec.gamma = _array(norm.weight)
    spec.beta = _array(norm.bias)


def build_spec(model: Transformer, vocabulary: Sequence[str]) -> transformer_spec.TransformerSpec:
    """A TransformerSpec with the model's weights; `vocabulary[i]` is the token string of id i.

    Raises:
        ValueError: the vocabulary does not have exactly vocab_size distinct entries.
    """
    c = model.config
    if len(vocabulary) != c.vocab_size or len(set(vocabulary)) != c.vocab_size:
        raise ValueError(f"need {c.vocab_size} distinct token strings, got {len(vocabulary)}")
    spec = transformer_spec.TransformerSpec.from_config(
        (c.n_encoder_layers, c.n_decoder_layers),
        c.n_heads,
        pre_norm=c.pre_norm,
        activation=common_spec.Activation.RELU,
    )
    table = _array(model.positions.table)  # (max_positions, D), position 0 first
    embedding = _array(model.embedding.weight)
    for stack in (spec.encoder, spec.decoder):
        stack.scale_embeddings = True  # embed() multiplies by sqrt(d_model)
        stack.position_encodings.encodings = table
    spec.encoder.embeddings[0].weight = embedding
    spec.decoder.embeddings.weight = embedding
    spec.decoder.projection.weight = _array(model.output_projection.weight)
    if c.pre_norm:
        _norm(spec.encoder.layer_norm, model.encoder_norm)
        _norm(spec.decoder.layer_norm, model.decoder_norm)
    for layer_spec, layer in zip(spec.encoder.layer, model.encoder_layers, strict=True):
        _linear(layer_spec.self_attention.linear[0], layer.self_attention.query_key_value)
        _linear(layer_spec.self_attention.linear[1], layer.self_attention.output)
        _norm(layer_spec.self_attention.layer_norm, layer.self_attention_block.norm)
        _feed_forward(layer_spec.ffn, layer)
    for layer_spec, layer in zip(spec.decoder.layer, model.decoder_layers, strict=True):
        _linear(layer_spec.self_attention.linear[0], layer.self_attention.query_key_value)
        _linear(layer_spec.self_attention.linear[1], layer.self_attention.output)
        _norm(layer_spec.self_attention.layer_norm, layer.self_attention_block.norm)
        _linear(layer_spec.attention.linear[0], layer.cross_attention.query)
        _linear(layer_spec.attention.linear[1], layer.cross_attention.key_value)
        _linear(layer_spec.attention.linear[2], layer.cross_attention.output)
        _norm(layer_spec.attention.layer_norm, layer.cross_attention_block.norm)
        _feed_forward(layer_spec.ffn, layer)
    spec.config.layer_norm_epsilon = c.layer_norm_eps
    spec.config.bos_token = spec.config.decoder_start_token = vocabulary[c.bos_id]
    spec.config.eos_token = vocabulary[c.eos_id]
    spec.config.unk_token = vocabulary[3]  # model/tokenizer.py UNK_ID
    spec.register_source_vocabulary(list(vocabulary))
    spec.register_target_vocabulary(list(vocabulary))
    return spec


def _feed_forward(spec: transformer_spec.FeedForwardSpec, layer: torch.nn.Module) -> None:
    _linear(spec.linear_0, layer.feed_forward.inner)
    _linear(spec.linear_1, layer.feed_forward.outer)
    _norm(spec.layer_norm, layer.feed_forward_block.norm)


def convert(model: Transformer, vocabulary: Sequence[str], out: Path, *, quantization: str | None = None) -> Path:
    """Write a CTranslate2 model directory (weights quantized when asked: "int8", "float32")."""
    spec = build_spec(model, vocabulary)
    spec.validate()
    spec.optimize(quantization=quantization)
    out.mkdir(parents=True, exist_ok=True)
    spec.save(str(out))
    return out


def vocabulary_of(tokenizer_json: Path, vocab_size: int) -> list[str]:
    """Token strings by id from a `tokenizers` file, padded with unique names up to vocab_size."""
    tok = tokenizers.Tokenizer.from_file(str(tokenizer_json))
    names = [tok.id_to_token(i) or f"<unused{i}>" for i in range(vocab_size)]
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            names[i] = f"<dup{i}>"
        seen.add(names[i])
    return names


class Ct2Seq2Seq:
    """A CTranslate2 Translator taking and returning token ids (source ids include EOS)."""

    def __init__(
        self,
        model_dir: Path,
        vocabulary: Sequence[str],
        *,
        compute_type: str = "float32",
        threads: int = 2,
        device: str = "cpu",
        replicas: int = 1,
    ) -> None:
        """`replicas` > 1: CTranslate2's inter_threads, that many model replicas of threads / replicas intra-op
        threads each; a batch is then cut into one sub-batch per replica, translated side by side."""
        self.translator = ctranslate2.Translator(
            str(model_dir),
            device=device,
            compute_type=compute_type,
            inter_threads=replicas,
            intra_threads=max(1, threads // replicas),
        )
        self.compute_type = compute_type
        self.replicas = replicas
        self.vocabulary = list(vocabulary)
        self.ids = {token: i for i, token in enumerate(self.vocabulary)}

    def greedy(self, sources: Sequence[Sequence[int]], *, max_new_tokens: int, exact: bool = False) -> list[list[int]]:
        """Greedy outputs without BOS/EOS; `exact` forces exactly max_new_tokens tokens (no EOS)."""
        batch = [[self.vocabulary[i] for i in source] for source in sources]
        results = self.translator.translate_batch(
            batch,
            beam_size=1,
            max_batch_size=0 if self.replicas == 1 else -(-len(batch) // self.replicas),
            max_decoding_length=max_new_tokens,
            min_decoding_length=max_new_tokens if exact else 0,
            return_scores=False,
        )
        return [[self.ids[t] for t in r.hypotheses[0]] for r in results]
