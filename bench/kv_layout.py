"""What the decoder graph's cache layout costs. Model directories before format 2 had a decoder that took
every layer's cache stacked in one tensor and returned the whole cache with the new column appended, so
each step copied the cache three times (split per layer, concatenated with the new column, stacked
again). The shipped decoder (format 2) reads one buffer per layer with spare columns and returns only
the new column, which the runner writes into the buffer. This exports the bundled checkpoint's decoder
the old way a second time and times both on the same inputs, alternating, the column write included,
at batch 1 and at the running batch's shape at 32 concurrent (28 rows, 31 cached positions, 44 source).

    PYTHONPATH=. python bench/kv_layout.py --checkpoint runs/normalize --model-dir models/normalize/1
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from torch import nn

from bench.workload import alternate, timed
from model.checkpoint import load_checkpoint
from model.transformer import Transformer

SHAPES = ((1, 10, 21), (28, 31, 44))  # (rows, cached positions, source positions)
SPARE = 16  # the buffer's spare columns, as service/runner.py allocates them


class StackedDecoder(nn.Module):
    """The format-1 decoder: stacked (L, B, H, P, Dh) caches in, the whole cache with the new column out."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, tgt: torch.Tensor, positions: torch.Tensor, self_mask: torch.Tensor, past_keys: torch.Tensor,
                past_values: torch.Tensor, cross_keys: torch.Tensor, cross_values: torch.Tensor,
                src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        out = self.model.decode_step(tgt, positions, self_mask, past_keys, past_values, cross_keys, cross_values,
                                     src_mask)
        return out.logits, out.present_keys, out.present_values


def export_stacked(model: Transformer, path: Path) -> None:
    c = model.config
    batch, src, past, new = 3, 7, 4, 2
    cache = (c.n_decoder_layers, batch, c.n_heads)
    positions = torch.arange(past, past + new).expand(batch, new).contiguous()
    args = (torch.randint(5, c.vocab_size, (batch, new)), positions,
            torch.ones(batch, past + new, dtype=torch.bool), torch.randn(*cache, past, c.head_dim),
            torch.randn(*cache, past, c.head_dim), torch.randn(*cache, src, c.head_dim),
            torch.randn(*cache, src, c.head_dim), torch.ones(batch, src, dtype=torch.bool))
    dim = torch.export.Dim
    b, s, t, p = dim("batch", min=1), dim("src_len", min=1), dim("tgt_len", min=1), dim("past_len", min=0)
    shapes = {"tgt": {0: b, 1: t}, "positions": {0: b, 1: t}, "self_mask": {0: b, 1: dim.AUTO},
              "past_keys": {1: b, 3: p}, "past_values": {1: b, 3: p}, "cross_keys": {1: b, 3: s},
              "cross_values": {1: b, 3: s}, "src_mask": {0: b, 1: s}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        logging.getLogger("torch.onnx").setLevel(logging.ERROR)
        program = torch.onnx.export(
            StackedDecoder(model).eval(), args, dynamo=True, opset_version=18, dynamic_shapes=shapes, optimize=True,
            input_names=["tgt", "tgt_positions", "self_mask", "past_keys", "past_values", "cross_keys",
                         "cross_values", "src_mask"],
            output_names=["logits", "present_keys", "present_values"])
    program.save(str(path))


def session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Two sessions alternate here: a spinning pool of the idle one would take a core from the busy one.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def main(args: argparse.Namespace) -> None:
    model = load_checkpoint(Path(args.checkpoint)).model.eval()
    c = model.config
    layers, heads, head_dim = c.n_decoder_layers, c.n_heads, c.head_dim
    shipped = session(Path(args.model_dir) / "decoder.onnx", args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        export_stacked(model, Path(tmp) / "stacked.onnx")
        stacked = session(Path(tmp) / "stacked.onnx", args.threads)
    rng = np.random.default_rng(0)
    for rows, past, source in SHAPES:
        cache = {name: rng.standard_normal((layers, rows, heads, length, head_dim)).astype(np.float32)
                 for name, length in (("past_keys", past), ("past_values", past), ("cross_keys", source),
                                      ("cross_values", source))}
        common = {"tgt": rng.integers(5, c.vocab_size, (rows, 1)), "tgt_positions": np.full((rows, 1), past),
                  "src_mask": np.ones((rows, source), bool)}
        stacked_feeds = {**common, "self_mask": np.ones((rows, past + 1), bool), **cache}
        buffers = {name: np.zeros((layers, rows, heads, past + SPARE, head_dim), np.float32)
                   for name in ("past_keys", "past_values")}
        buffer_mask = np.zeros((rows, past + SPARE + 1), bool)
        buffer_mask[:, :past] = buffer_mask[:, -1] = True
        shipped_feeds = {**common, "self_mask": buffer_mask}
        for name in cache:
            source_array = cache[name]
            if name in buffers:
                buffers[name][:, :, :, :past] = source_array
                source_array = buffers[name]
            shipped_feeds.update({f"{name}.{layer}": source_array[layer] for layer in range(layers)})
        reference = stacked.run(["logits", "present_keys"], stacked_feeds)
        logits, new_keys = shipped.run(["logits", "new_keys"], shipped_feeds)
        assert np.abs(reference[0] - logits).max() < 1e-4, np.abs(reference[0] - logits).max()
        assert np.abs(reference[1][:, :, :, past:] - new_keys).max() < 1e-5

        def shipped_steps(feeds: dict[str, np.ndarray] = shipped_feeds, at: int = past,
                          buffers: dict[str, np.ndarray] = buffers) -> int:
            for _ in range(args.steps):
                _, keys, values = shipped.run(["logits", "new_keys", "new_values"], feeds)
                buffers["past_keys"][:, :, :, at : at + 1] = keys  # the runner's share: write the new column
                buffers["past_values"][:, :, :, at : at + 1] = values
            return args.steps

        def stacked_steps(feeds: dict[str, np.ndarray] = stacked_feeds) -> int:
            for _ in range(args.steps):
                stacked.run(["logits", "present_keys", "present_values"], feeds)
            return args.steps

        result = asyncio.run(alternate({"stacked": timed(stacked_steps), "shipped": timed(shipped_steps)},
                                       rounds=args.rounds))
        print(f"{rows} rows, {past} cached (+{SPARE} spare), {source} source: stacked and concatenating "
              f"{1e3 / result.median('stacked'):.3f} ms, shipped {1e3 / result.median('shipped'):.3f} ms per step; "
              f"stacked / shipped {result.ratio('shipped', 'stacked'):.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default="runs/normalize")
    parser.add_argument("--model-dir", default="models/normalize/1")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    main(parser.parse_args())
