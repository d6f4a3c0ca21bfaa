"""The transformer's contracts: the attention formula, masks, causality, padding, cached decoding."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model.attention import scaled_dot_product_attention
from model.config import ModelConfig
from model.decoding import beam_search, greedy_decode
from model.transformer import Transformer

TINY = ModelConfig(vocab_size=50, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0)


@pytest.fixture(params=[True, False], ids=["pre_norm", "post_norm"])
def model(request: pytest.FixtureRequest) -> Transformer:
    torch.manual_seed(0)
    config = ModelConfig(**{**TINY.to_dict(), "pre_norm": request.param})
    return Transformer(config).eval()


def numpy_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights


def test_attention_matches_numpy_formula() -> None:
    generator = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 5, 8, generator=generator, dtype=torch.float64) for _ in range(3))
    mask = torch.rand(2, 1, 5, 5, generator=generator) > 0.3
    mask[..., 0] = True  # every query sees at least one key
    out, probs = scaled_dot_product_attention(q, k, v, mask)
    expected_out, expected_probs = numpy_attention(q.numpy(), k.numpy(), v.numpy(), mask.numpy())
    np.testing.assert_allclose(probs.numpy(), expected_probs, atol=1e-12)
    np.testing.assert_allclose(out.numpy(), expected_out, atol=1e-12)
    assert torch.all(probs[~mask.expand_as(probs)] == 0)


def test_attention_rows_sum_to_one(model: Transformer) -> None:
    src = torch.randint(5, 50, (3, 7))
    src_mask = torch.ones(3, 7, dtype=torch.bool)
    src_mask[0, 4:] = False
    tgt = torch.randint(5, 50, (3, 6))
    encoded = model.encode(src, src_mask)
    decoded = model.decode(tgt, encoded.memory, src_mask, torch.ones(3, 6, dtype=torch.bool))
    for probs in (encoded.attention, decoded.self_attention, decoded.cross_attention):
        torch.testing.assert_close(probs.sum(-1), torch.ones(probs.shape[:-1]))
    assert encoded.attention.shape == (2, 3, 4, 7, 7)
    assert decoded.self_attention.shape == (2, 3, 4, 6, 6)
    assert decoded.cross_attention.shape == (2, 3, 4, 6, 7)
    assert torch.all(decoded.cross_attention[:, 0, :, :, 4:] == 0)  # padding gets no attention
    assert torch.all(decoded.self_attention.triu(diagonal=1) == 0)  # nor does the future


def test_future_tokens_never_change_earlier_outputs(model: Transformer) -> None:
    src = torch.randint(5, 50, (1, 6))
    src_mask = torch.ones(1, 6, dtype=torch.bool)
    memory = model.encode(src, src_mask).memory
    tgt = torch.randint(5, 50, (1, 8))
    changed = tgt.clone()
    changed[0, 5:] = torch.randint(5, 50, (3,))
    full_mask = torch.ones(1, 8, dtype=torch.bool)
    a = model.decode(tgt, memory, src_mask, full_mask).logits
    b = model.decode(changed, memory, src_mask, full_mask).logits
    torch.testing.assert_close(a[:, :5], b[:, :5], rtol=0, atol=1e-6)
    assert not torch.allclose(a[:, 5:], b[:, 5:])


def test_padding_never_changes_real_outputs(model: Transformer) -> None:
    src = torch.randint(5, 50, (1, 5))
    tgt = torch.randint(5, 50, (1, 4))
    alone_memory = model.encode(src, torch.ones(1, 5, dtype=torch.bool)).memory
    alone = model.decode(tgt, alone_memory, torch.ones(1, 5, dtype=torch.bool), torch.ones(1, 4, dtype=torch.bool))
    padded_src = torch.cat([src, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    padded_tgt = torch.cat([tgt, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    src_mask = padded_src != 0
    src_mask[0, :5] = True
    tgt_mask = torch.zeros(1, 7, dtype=torch.bool)
    tgt_mask[0, :4] = True
    padded_memory = model.encode(padded_src, src_mask).memory
    padded = model.decode(padded_tgt, padded_memory, src_mask, tgt_mask)
    torch.testing.assert_close(padded_memory[:, :5], alone_memory, rtol=0, atol=1e-5)
    torch.testing.assert_close(padded.logits[:, :4], alone.logits, rtol=0, atol=1e-5)


def test_cached_steps_equal_teacher_forcing(model: Transformer) -> None:
    src = torch.randint(5, 50, (2, 6))
    src_mask = torch.ones(2, 6, dtype=torch.bool)
    memory = model.encode(src, src_mask).memory
    tgt = torch.randint(5, 50, (2, 5))
    full = model.decode(tgt, memory, src_mask, torch.ones(2, 5, dtype=torch.bool))
    cross_keys, cross_values = model.cross_key_values(memory)
    keys = values = model.empty_cache(2)
    for step in range(5):
        out = model.decode_step(
            tgt[:, step : step + 1],
            torch.full((2, 1), step),
            torch.ones(2, step + 1, dtype=torch.bool),
            keys,
            values,
            cross_keys,
            cross_values,
            src_mask,
        )
        keys, values = out.present_keys, out.present_values
        torch.testing.assert_close(out.logits[:, 0], full.logits[:, step], rtol=0, atol=1e-5)
        torch.testing.assert_close(
            out.cross_attention[:, :, :, 0], full.cross_attention[:, :, :, step], rtol=0, atol=1e-6
        )


def test_decoding_beside_a_buffered_cache_equals_concatenating_it(model: Transformer) -> None:
    """The serving graph's path: per-layer buffers with masked spare columns, only new keys returned."""
    batch, past, spare, new, source = 3, 4, 3, 2, 6
    c = model.config
    shape = (c.n_decoder_layers, batch, c.n_heads)
    keys, values = torch.randn(*shape, past, c.head_dim), torch.randn(*shape, past, c.head_dim)
    cross_keys, cross_values = torch.randn(*shape, source, c.head_dim), torch.randn(*shape, source, c.head_dim)
    tgt, positions = torch.randint(5, 50, (batch, new)), torch.arange(past, past + new).expand(batch, new)
    self_mask = torch.ones(batch, past + new, dtype=torch.bool)
    self_mask[0, :2] = False  # left padding
    src_mask = torch.ones(batch, source, dtype=torch.bool)
    reference = model.decode_step(tgt, positions, self_mask, keys, values, cross_keys, cross_values, src_mask)
    buffers = [torch.cat([cache, torch.randn(*shape, spare, c.head_dim)], dim=3) for cache in (keys, values)]
    buffer_mask = torch.cat([self_mask[:, :past], torch.zeros(batch, spare, dtype=torch.bool), self_mask[:, past:]], 1)
    out = model.decode_step(
        tgt,
        positions,
        buffer_mask,
        list(buffers[0]),
        list(buffers[1]),
        list(cross_keys),
        list(cross_values),
        src_mask,
        beside_cache=True,
    )
    torch.testing.assert_close(out.logits, reference.logits, rtol=0, atol=1e-5)
    torch.testing.assert_close(out.present_keys, reference.present_keys[:, :, :, past:], rtol=0, atol=1e-6)
    torch.testing.assert_close(out.present_values, reference.present_values[:, :, :, past:], rtol=0, atol=1e-6)
    real = torch.cat([out.self_attention[..., :past], out.self_attention[..., past + spare :]], dim=-1)
    torch.testing.assert_close(real, reference.self_attention, rtol=0, atol=1e-6)
    assert out.self_attention[..., past : past + spare].abs().max() == 0  # the spare columns get nothing


def test_shared_embeddings_and_learned_positions() -> None:
    shared = Transformer(TINY)
    assert shared.output_projection.weight is shared.embedding.weight
    separate = Transformer(ModelConfig(**{**TINY.to_dict(), "share_embeddings": False, "positional": "learned"}))
    assert separate.output_projection.weight is not separate.embedding.weight
    assert any(name.startswith("positions.") for name, _ in separate.named_parameters())


def test_config_rejects_bad_heads() -> None:
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)


def test_beam_of_one_equals_greedy(model: Transformer) -> None:
    torch.manual_seed(3)
    source = torch.randint(5, 50, (6,)).tolist() + [2]
    greedy = greedy_decode(model, [source], max_new_tokens=10)[0]
    beam = beam_search(model, source, num_beams=1, max_new_tokens=10)
    assert beam.tokens == greedy.tokens


def test_batched_greedy_equals_one_at_a_time(model: Transformer) -> None:
    torch.manual_seed(4)
    sources = [torch.randint(5, 50, (n,)).tolist() + [2] for n in (3, 9, 5)]
    batched = greedy_decode(model, sources, max_new_tokens=8)
    alone = [greedy_decode(model, [s], max_new_tokens=8)[0] for s in sources]
    assert [h.tokens for h in batched] == [h.tokens for h in alone]
