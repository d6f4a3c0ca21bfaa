"""What one engine step's two graph calls cost, by shape: the decoder at the running batch's size with
more or fewer cached and source positions (what the rectangular KV cache's padding costs), fetching
the caches or only the logits (what handing the outputs over costs), and the encoder by rows.

    PYTHONPATH=. python bench/step_costs.py --model-dir models/normalize/1
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort

from service.repository import load_model_directory

# (rows, cached positions, source positions, outputs fetched)
DECODER_SHAPES = (
    (28, 1, 44, "all"), (28, 31, 44, "all"), (28, 60, 44, "all"), (28, 31, 22, "all"), (28, 12, 22, "all"),
    (28, 31, 44, "logits"), (1, 10, 21, "all"), (1, 10, 21, "logits"),
)
ENCODER_SHAPES = ((1, 24), (2, 24), (3, 24), (4, 24), (8, 24), (16, 24), (32, 24), (3, 12), (3, 48))


def session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def median_ms(calls: dict[str, Callable[[], object]], rounds: int, repeats: int) -> dict[str, float]:
    """Each call timed `repeats` times per round, the calls taking turns; the median round in ms per call."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            for _ in range(repeats // 10):
                call()
            started = time.perf_counter()
            for _ in range(repeats):
                call()
            times[name].append((time.perf_counter() - started) / repeats * 1e3)
    return {name: statistics.median(values) for name, values in times.items()}


def main(args: argparse.Namespace) -> None:
    model = load_model_directory(Path(args.model_dir))
    layers, heads, head_dim, vocab = model.n_layers, model.n_heads, model.head_dim, model.vocab_size
    rng = np.random.default_rng(0)
    decoder = session(model.decoder, args.threads)
    decoder_calls = {}
    for rows, past, source, fetched in DECODER_SHAPES:
        feeds = {
            "tgt": rng.integers(5, vocab, (rows, 1)), "tgt_positions": np.full((rows, 1), past),
            "self_mask": np.ones((rows, past + 1), bool), "src_mask": np.ones((rows, source), bool),
            **{f"{name}.{layer}": rng.standard_normal((rows, heads, length, head_dim)).astype(np.float32)
               for name, length in (("past_keys", past), ("past_values", past), ("cross_keys", source),
                                    ("cross_values", source)) for layer in range(layers)},
        }
        names = ["logits", "new_keys", "new_values"] if fetched == "all" else ["logits"]
        label = f"decoder: {rows} rows, {past} cached, {source} source, fetching {fetched}"
        decoder_calls[label] = lambda names=names, feeds=feeds: decoder.run(names, feeds)
    encoder = session(model.encoder, args.threads)
    encoder_calls = {}
    for rows, length in ENCODER_SHAPES:
        feeds = {"src": rng.integers(5, vocab, (rows, length)), "src_mask": np.ones((rows, length), bool)}
        encoder_calls[f"encoder: {rows} rows of {length} tokens"] = (
            lambda feeds=feeds: encoder.run(["cross_keys", "cross_values"], feeds)
        )
    for calls, repeats in ((decoder_calls, args.repeats), (encoder_calls, args.repeats // 4)):
        for label, ms in median_ms(calls, args.rounds, repeats).items():
            print(f"{label:>56}: {ms:.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default="models/normalize/1")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=200)
    main(parser.parse_args())
