"""Does the decoder graph's stacked KV cache cost time? The bundled checkpoint's decoder exported a second
time with one cache input and output per layer (no Split/Squeeze/Unsqueeze/stacking Concat), timed
against the shipped decoder.onnx on the same inputs, at batch 1 and at the running batch's shapes at 32
concurrent (28 rows, 31 cached positions, 44 source positions), alternating.

    PYTHONPATH=. python bench/kv_layout.py --checkpoint runs/normalize --model-dir models/normalize/1
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import contextlib
import logging
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from torch import nn

from model.checkpoint import load_checkpoint
from model.transformer import Transformer

SHAPES = ((1, 10, 21), (28, 31, 44))  # (rows, cached positions, source positions)


class PerLayerDecoder(nn.Module):
    """`Transformer.decode_step` with each layer's past keys/values and cross keys/values as separate tensors."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model
        self.layers = model.config.n_decoder_layers

    def forward(self, tgt: torch.Tensor, positions: torch.Tensor, self_mask: torch.Tensor, src_mask: torch.Tensor,
                *caches: torch.Tensor) -> tuple[torch.Tensor, ...]:
        n = self.layers
        past_k, past_v, cross_k, cross_v = (list(caches[i * n:(i + 1) * n]) for i in range(4))
        out = self.model.decode_step(tgt, positions, self_mask, past_k, past_v, cross_k, cross_v, src_mask)
        return (out.logits, *out.present_keys.unbind(0), *out.present_values.unbind(0))


def cache_names(prefix: str, layers: int) -> list[str]:
    return [f"{prefix}.{i}" for i in range(layers)]


def export_per_layer(model: Transformer, path: Path) -> None:
    c = model.config
    batch, src, past, new = 3, 7, 4, 2
    heads, head_dim, layers = c.n_heads, c.head_dim, c.n_decoder_layers
    positions = torch.arange(past, past + new).expand(batch, new).contiguous()
    args = (torch.randint(5, c.vocab_size, (batch, new)), positions,
            torch.ones(batch, past + new, dtype=torch.bool), torch.ones(batch, src, dtype=torch.bool),
            *[torch.randn(batch, heads, past, head_dim) for _ in range(2 * layers)],
            *[torch.randn(batch, heads, src, head_dim) for _ in range(2 * layers)])
    dim = torch.export.Dim
    b, s, t, p = dim("batch", min=1), dim("src_len", min=1), dim("tgt_len", min=1), dim("past_len", min=0)
    shapes = {"tgt": {0: b, 1: t}, "positions": {0: b, 1: t}, "self_mask": {0: b, 1: dim.AUTO},
              "src_mask": {0: b, 1: s}, "caches": tuple([{0: b, 2: p}] * (2 * layers) + [{0: b, 2: s}] * (2 * layers))}
    prefixes = ("past_keys", "past_values", "cross_keys", "cross_values")
    inputs = ["tgt", "tgt_positions", "self_mask", "src_mask"]
    inputs += [name for prefix in prefixes for name in cache_names(prefix, layers)]
    outputs = ["logits", *cache_names("present_keys", layers), *cache_names("present_values", layers)]
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        logging.getLogger("torch.onnx").setLevel(logging.ERROR)
        program = torch.onnx.export(PerLayerDecoder(model).eval(), args, dynamo=True, opset_version=18,
                                    input_names=inputs, output_names=outputs, dynamic_shapes=shapes, optimize=True)
    program.save(str(path))


def session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@contextlib.contextmanager
def shipped_and_exported(args: argparse.Namespace, export: Callable[[Transformer, Path], None]
                         ) -> Iterator[tuple[Transformer, ort.InferenceSession, ort.InferenceSession]]:
    """The checkpoint's model, a session of the shipped decoder.onnx and one of the decoder `export` writes."""
    model = load_checkpoint(Path(args.checkpoint)).model.eval()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decoder_variant.onnx"
        export(model, path)
        yield model, session(Path(args.model_dir) / "decoder.onnx", args.threads), session(path, args.threads)


def random_caches(rng: np.random.Generator, model: Transformer, rows: int, past: int, source: int
                  ) -> dict[str, np.ndarray]:
    """Stacked (L, B, H, length, Dh) past and cross keys and values, as the shipped decoder takes them."""
    c = model.config
    return {name: rng.standard_normal((c.n_decoder_layers, rows, c.n_heads, length, c.head_dim)).astype(np.float32)
            for name, length in (("past_keys", past), ("past_values", past),
                                 ("cross_keys", source), ("cross_values", source))}


def main(args: argparse.Namespace) -> None:
    with shipped_and_exported(args, export_per_layer) as (model, stacked, per_layer):
        c = model.config
        layers = c.n_decoder_layers
        rng = np.random.default_rng(0)
        for rows, past, source in SHAPES:
            common = {"tgt": rng.integers(5, c.vocab_size, (rows, 1)), "tgt_positions": np.full((rows, 1), past),
                      "self_mask": np.ones((rows, past + 1), bool), "src_mask": np.ones((rows, source), bool)}
            caches = random_caches(rng, model, rows, past, source)
            stacked_feeds = {**common, **caches}
            split_feeds = dict(common)
            for name, array in caches.items():
                split_feeds.update({f"{name}.{i}": np.ascontiguousarray(array[i]) for i in range(layers)})
            a = stacked.run(["logits", "present_keys"], stacked_feeds)
            b = per_layer.run(["logits", "present_keys.0"], split_feeds)
            assert np.abs(a[0] - b[0]).max() < 1e-4 and np.abs(a[1][0] - b[1]).max() < 1e-5
            times: dict[str, list[float]] = {"stacked": [], "per layer": []}
            for _ in range(args.rounds):
                contenders = (("stacked", stacked, stacked_feeds, ["logits", "present_keys", "present_values"]),
                              ("per layer", per_layer, split_feeds, None))
                for name, sess, feeds, wanted in contenders:
                    started = time.perf_counter()
                    for _ in range(args.steps):
                        sess.run(wanted, feeds)
                    times[name].append((time.perf_counter() - started) / args.steps * 1e3)
            ratio = statistics.median(s / p for s, p in zip(times["stacked"], times["per layer"], strict=True))
            stacked_ms, per_layer_ms = statistics.median(times["stacked"]), statistics.median(times["per layer"])
            print(f"{rows} rows, {past} cached, {source} source: stacked {stacked_ms:.3f} ms, "
                  f"per layer {per_layer_ms:.3f} ms per step; stacked / per layer {ratio:.2f}x")


def parse_args(description: str | None) -> argparse.Namespace:
    """The options of the decoder-graph benchmarks (this one and bench/kv_in_place.py)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default="runs/normalize")
    parser.add_argument("--model-dir", default="models/normalize/1")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args(__doc__))
