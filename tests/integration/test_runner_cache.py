"""OnnxRunner's KV cache buffers: each step writes its new column in place, the buffers grow when the
spare columns run out, and a cache stepped twice never has its successor overwritten."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from service.engine.model_dir import load_model_directory
from service.engine.runner import EncoderBatch, KvCache, OnnxRunner
from service.engine.settings import RuntimeSettings

pytestmark = pytest.mark.slow  # uses the session's tiny model


@pytest.fixture(scope="module")
def runner(tiny_model_dir: Path) -> OnnxRunner:
    return OnnxRunner(load_model_directory(tiny_model_dir), runtime=RuntimeSettings(intra_op_threads=1))


def encoded(runner: OnnxRunner) -> KvCache:
    batch = EncoderBatch.from_sources([[5, 6, 7, 8, 9, 2], [10, 11, 2]], pad_id=0)
    return runner.encode(batch, attention=False).cache


def test_steps_in_place_match_steps_from_fresh_copies_past_the_spare_columns(runner: OnnxRunner) -> None:
    in_place = from_copies = encoded(runner)
    tokens = np.array([[1], [1]], dtype=np.int64)
    for step in range(40):  # more steps than a buffer has spare columns: it is regrown twice
        dead_row = np.array([[True], [step < 30]])  # the second row leaves the batch at step 30
        out = runner.decode(tokens, in_place, attention=True, tgt_mask=dead_row)
        reference = runner.decode(tokens, from_copies.filter([0, 1]), attention=True, tgt_mask=dead_row)
        np.testing.assert_allclose(out.logits, reference.logits, atol=1e-5)
        assert out.self_attention is not None and reference.self_attention is not None
        assert out.self_attention.shape[-1] == out.cache.past_length  # the cached columns, then the new one
        np.testing.assert_allclose(
            out.self_attention, reference.self_attention[..., -out.cache.past_length :], atol=1e-6
        )
        assert out.cache.buffers is not None and out.cache.keys.base is out.cache.buffers[0]
        np.testing.assert_array_equal(out.cache.self_mask[:, -1], dead_row[:, 0])
        in_place, from_copies = out.cache, reference.cache
        tokens = out.logits[:, -1].argmax(axis=-1)[:, None].astype(np.int64)
    np.testing.assert_allclose(
        in_place.keys[:, :, :, -in_place.past_length :], from_copies.keys[:, :, :, -in_place.past_length :], atol=1e-5
    )


def test_a_cache_stepped_twice_leaves_the_first_successor_intact(runner: OnnxRunner) -> None:
    cache = encoded(runner)
    tokens = np.array([[1], [1]], dtype=np.int64)
    cache = runner.decode(tokens, cache, attention=False).cache
    first = runner.decode(tokens + 4, cache, attention=False)
    kept = first.cache.keys.copy()
    second = runner.decode(tokens + 7, cache, attention=False)  # the same cache, another token
    np.testing.assert_array_equal(first.cache.keys, kept)
    assert not np.array_equal(second.cache.keys[:, :, :, -1], first.cache.keys[:, :, :, -1])
    again = runner.decode(tokens + 4, cache, attention=False)
    np.testing.assert_allclose(again.logits, first.logits, atol=1e-6)


def test_the_io_binding_path_gives_the_same_steps(tiny_model_dir: Path, runner: OnnxRunner) -> None:
    """The CUDA path's binding (cross keys/values bound once per batch composition), run on the CPU."""
    bound = OnnxRunner(load_model_directory(tiny_model_dir), runtime=RuntimeSettings(intra_op_threads=1))
    bound._bind, bound._bind_device = True, "cpu"
    plain_cache, bound_cache = encoded(runner), encoded(runner)
    tokens = np.array([[1], [1]], dtype=np.int64)
    for _ in range(20):
        plain = runner.decode(tokens, plain_cache, attention=True)
        out = bound.decode(tokens, bound_cache, attention=True)
        np.testing.assert_allclose(out.logits, plain.logits, atol=1e-6)
        np.testing.assert_allclose(out.self_attention, plain.self_attention, atol=1e-6)  # type: ignore[arg-type]
        assert "cross_keys.0" in out.cache.device
        plain_cache, bound_cache = plain.cache, out.cache
        tokens = plain.logits[:, -1].argmax(axis=-1)[:, None].astype(np.int64)


def test_format_3_steps_match_format_2_steps_on_the_same_caches(tiny_model_dir: Path) -> None:
    """Rows of different lengths, a dead row, steps with attention weights (format 2 on the cache format 3
    wrote) and two-token steps between one-token ones, past the spare columns: the same logits and caches."""
    files = load_model_directory(tiny_model_dir)
    assert files.decoder_gqa is not None  # the export adds it
    gqa = OnnxRunner(files, runtime=RuntimeSettings(intra_op_threads=1))
    plain = OnnxRunner(files, runtime=RuntimeSettings(intra_op_threads=1, gqa_decoder=False))
    assert gqa._decoder_gqa is not None and plain._decoder_gqa is None
    batch = EncoderBatch.from_sources([[5, 6, 7, 8, 9, 2], [10, 11, 2], [12, 2]], pad_id=0)
    with_gqa = with_format_2 = gqa.encode(batch, attention=False).cache
    tokens = np.array([[1], [1], [1]], dtype=np.int64)
    for step in range(40):
        live = np.array([[True], [step < 25], [True]])
        attention = step % 7 == 3
        if step % 9 == 5:  # a drafting step's shape: two tokens a row, the second of the first row masked
            wide = np.concatenate([tokens, tokens + 1], axis=1)
            mask = np.concatenate([live, live & np.array([[False], [True], [True]])], axis=1)
            a = gqa.decode(wide, with_gqa, attention=attention, tgt_mask=mask)
            b = plain.decode(wide, with_format_2, attention=attention, tgt_mask=mask)
        else:
            a = gqa.decode(tokens, with_gqa, attention=attention, tgt_mask=live)
            b = plain.decode(tokens, with_format_2, attention=attention, tgt_mask=live)
        np.testing.assert_allclose(a.logits[live[:, 0]], b.logits[live[:, 0]], atol=1e-4)
        if attention:
            assert a.self_attention is not None and b.self_attention is not None
            np.testing.assert_allclose(a.self_attention, b.self_attention, atol=1e-5)
        with_gqa, with_format_2 = a.cache, b.cache
        np.testing.assert_array_equal(with_gqa.self_mask, with_format_2.self_mask)
        for row, length in enumerate(with_gqa.positions()):
            assert with_gqa.self_mask[row].tolist() == [True] * length + [False] * (with_gqa.past_length - length)
            np.testing.assert_allclose(
                with_gqa.keys[:, row, :, :length], with_format_2.keys[:, row, :, :length], atol=1e-5
            )
            np.testing.assert_allclose(
                with_gqa.values[:, row, :, :length], with_format_2.values[:, row, :, :length], atol=1e-5
            )
        tokens = a.logits[:, -1].argmax(axis=-1)[:, None].astype(np.int64)
    assert with_gqa.past_length > 16 + 6  # the buffers were regrown on the way


def test_format_3_keeps_its_binding_while_the_buffers_stay_and_reads_a_joiner_written_in_place(
    tiny_model_dir: Path,
) -> None:
    """Format 3 binds a batch's buffers once and reuses the binding while they stay the same arrays; the
    executor writes a joiner over a dead row in place (its source and its length change, the arrays do not),
    and the next steps must read the joiner's source length, as format 2 does through its mask."""
    files = load_model_directory(tiny_model_dir)
    gqa = OnnxRunner(files, runtime=RuntimeSettings(intra_op_threads=1))
    plain = OnnxRunner(files, runtime=RuntimeSettings(intra_op_threads=1, gqa_decoder=False))
    batch = EncoderBatch.from_sources([[5, 6, 7, 8, 9, 2], [10, 11, 2]], pad_id=0)
    with_gqa = gqa.encode(batch, attention=False).cache
    with_format_2 = plain.encode(batch, attention=False).cache
    joiner = gqa.encode(EncoderBatch.from_sources([[13, 14, 15, 16, 2]], pad_id=0), attention=False).cache
    tokens = np.array([[1], [1]], dtype=np.int64)
    bindings = set()
    for step in range(12):
        if step == 5:  # row 1 finished; the joiner takes its place in both caches, as _reuse_dead_rows does
            for cache in (with_gqa, with_format_2):
                for name in ("cross_keys", "cross_values"):
                    getattr(cache, name)[:, 1] = 0.0
                    getattr(cache, name)[:, 1, :, :5] = getattr(joiner, name)[:, 0]
                cache.src_mask[1] = False
                cache.src_mask[1, :5] = True
                cache.self_mask[1] = False
            tokens[1, 0] = 1
        a = gqa.decode(tokens, with_gqa, attention=False)
        b = plain.decode(tokens, with_format_2, attention=False)
        np.testing.assert_allclose(a.logits, b.logits, atol=1e-4)
        with_gqa, with_format_2 = a.cache, b.cache
        assert with_gqa.binding is not None
        bindings.add(id(with_gqa.binding))
        tokens = a.logits[:, -1].argmax(axis=-1)[:, None].astype(np.int64)
    assert len(bindings) == 1  # 12 steps fit the first buffers' spare columns: bound once
