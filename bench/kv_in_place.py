"""Would a decoder that reads its cache in place be faster? The shipped decoder.onnx concatenates every
layer's cached keys and values with the new column and returns the whole cache each step. This exports
the bundled checkpoint's decoder a second time, as a prototype that reads a cache buffer with spare
columns (masked) and returns only the new column, which the runner would write into the buffer; both
are timed on the same inputs, alternating, at batch 1 and at the running batch's shape at 32
concurrent (28 rows, 31 cached positions, 44 source positions), the column write included.

    PYTHONPATH=. python bench/kv_in_place.py --checkpoint runs/normalize --model-dir models/normalize/1
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import logging
import math
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from bench.kv_layout import SHAPES, parse_args, random_caches, shipped_and_exported
from bench.workload import alternate, timed
from model.transformer import Transformer

SPARE = 8  # buffer columns beyond the cached ones: the runner would grow the buffer by this many at a time


class InPlaceDecoder(nn.Module):
    """`Transformer.decode_step` for one new token, attending to the buffer's columns and to the new
    key separately (no concatenation of the cache), returning only the new keys and values."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, tgt: torch.Tensor, positions: torch.Tensor, buffer_mask: torch.Tensor,
                past_keys: torch.Tensor, past_values: torch.Tensor, cross_keys: torch.Tensor,
                cross_values: torch.Tensor, src_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        model = self.model
        x = model.embed(tgt, positions)
        may_attend = buffer_mask[:, None, None, :]  # (B, 1, 1, C)
        cross_mask = src_mask[:, None, None, :]
        new_keys, new_values = [], []
        for index, layer in enumerate(model.decoder_layers):
            attention = layer.self_attention

            def self_attend(h: torch.Tensor, index: int = index, attention: nn.Module = attention) -> tuple:
                q, k, v = (attention.split_heads(p) for p in attention.query_key_value(h).chunk(3, dim=-1))
                scale = math.sqrt(q.shape[-1])
                past = (q @ past_keys[index].transpose(-2, -1)) / scale  # (B, H, 1, C)
                past = past.masked_fill(~may_attend, torch.finfo(past.dtype).min)
                new = (q * k).sum(-1, keepdim=True) / scale  # (B, H, 1, 1)
                probs = torch.cat([past, new], dim=-1).softmax(dim=-1)
                columns = past_keys.shape[3]
                out = probs[..., :columns] @ past_values[index] + probs[..., columns:] * v
                new_keys.append(k)
                new_values.append(v)
                return attention.output(attention.merge_heads(out)), None

            x, _ = layer.self_attention_block(x, self_attend)
            x, _ = layer.cross_attention_block(
                x, lambda h, i=index, a=layer.cross_attention: a.cross_attend(h, (cross_keys[i], cross_values[i]),
                                                                                cross_mask))
            x = layer.feed_forward_step(x)
        logits = model.output_projection(model.decoder_norm(x))
        return logits, torch.stack(new_keys), torch.stack(new_values)


def export_in_place(model: Transformer, path: Path) -> None:
    c = model.config
    batch, src, columns = 3, 7, 6
    layers, heads, head_dim = c.n_decoder_layers, c.n_heads, c.head_dim
    args = (torch.randint(5, c.vocab_size, (batch, 1)), torch.full((batch, 1), 4),
            torch.ones(batch, columns, dtype=torch.bool),
            torch.randn(layers, batch, heads, columns, head_dim), torch.randn(layers, batch, heads, columns, head_dim),
            torch.randn(layers, batch, heads, src, head_dim), torch.randn(layers, batch, heads, src, head_dim),
            torch.ones(batch, src, dtype=torch.bool))
    dim = torch.export.Dim
    b, s, p = dim("batch", min=1), dim("src_len", min=1), dim("columns", min=1)
    shapes = {"tgt": {0: b}, "positions": {0: b}, "buffer_mask": {0: b, 1: p},
              "past_keys": {1: b, 3: p}, "past_values": {1: b, 3: p},
              "cross_keys": {1: b, 3: s}, "cross_values": {1: b, 3: s}, "src_mask": {0: b, 1: s}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        logging.getLogger("torch.onnx").setLevel(logging.ERROR)
        program = torch.onnx.export(
            InPlaceDecoder(model).eval(), args, dynamo=True, opset_version=18, dynamic_shapes=shapes, optimize=True,
            input_names=["tgt", "tgt_positions", "buffer_mask", "past_keys", "past_values", "cross_keys",
                         "cross_values", "src_mask"],
            output_names=["logits", "new_keys", "new_values"])
    program.save(str(path))


def main(args: argparse.Namespace) -> None:
    with shipped_and_exported(args, export_in_place) as (model, shipped, in_place):
        c = model.config
        layers, heads, head_dim = c.n_decoder_layers, c.n_heads, c.head_dim
        rng = np.random.default_rng(0)
        for rows, past, source in SHAPES:
            tgt, positions = rng.integers(5, c.vocab_size, (rows, 1)), np.full((rows, 1), past)
            cache = random_caches(rng, model, rows, past, source)
            src_mask = np.ones((rows, source), bool)
            shipped_feeds = {"tgt": tgt, "tgt_positions": positions, "self_mask": np.ones((rows, past + 1), bool),
                             "src_mask": src_mask, **cache}
            buffers = {name: np.zeros((layers, rows, heads, past + SPARE, head_dim), np.float32)
                       for name in ("past_keys", "past_values")}
            for name, buffer in buffers.items():
                buffer[:, :, :, :past] = cache[name]
            buffer_mask = np.zeros((rows, past + SPARE), bool)
            buffer_mask[:, :past] = True
            in_place_feeds = {"tgt": tgt, "tgt_positions": positions, "buffer_mask": buffer_mask,
                              "cross_keys": cache["cross_keys"], "cross_values": cache["cross_values"],
                              "src_mask": src_mask, **buffers}
            reference = shipped.run(["logits", "present_keys"], shipped_feeds)
            logits, new_keys, _ = in_place.run(None, in_place_feeds)
            assert np.abs(reference[0] - logits).max() < 1e-4, np.abs(reference[0] - logits).max()
            assert np.abs(reference[1][:, :, :, past:] - new_keys).max() < 1e-5

            def in_place_steps(feeds: dict[str, np.ndarray] = in_place_feeds, at: int = past) -> int:
                for _ in range(args.steps):
                    _, keys, values = in_place.run(None, feeds)
                    feeds["past_keys"][:, :, :, at] = keys[:, :, :, 0]  # the runner's share: write the new column
                    feeds["past_values"][:, :, :, at] = values[:, :, :, 0]
                return args.steps

            def shipped_steps(feeds: dict[str, np.ndarray] = shipped_feeds) -> int:
                for _ in range(args.steps):
                    shipped.run(["logits", "present_keys", "present_values"], feeds)
                return args.steps

            result = asyncio.run(alternate({"shipped": timed(shipped_steps), "in place": timed(in_place_steps)},
                                           rounds=args.rounds))
            print(f"{rows} rows, {past} cached (+{SPARE} spare), {source} source: shipped "
                  f"{1e3 / result.median('shipped'):.3f} ms, in place {1e3 / result.median('in place'):.3f} ms "
                  f"per step; shipped / in place {result.ratio('in place', 'shipped'):.2f}x")


if __name__ == "__main__":
    main(parse_args(__doc__))
