"""The graphs alone, through the service's own runner: one encoder call and greedy decoder steps of one token a
row, no engine around them, several model directories (or variants of one) alternating in one process, so that a
drifting machine moves them all alike.

`python -m bench.graphs --model DIR[:VARIANT] [--model DIR[:VARIANT] ...] [--rows 16] [--source-tokens 20]
[--steps 20] [--reps 40] [--threads 1]` prints, for each, the encoder call's thread CPU time, a decoder step's,
the part of a step inside onnxruntime's run and the part outside it (the runner's Python: the cache's buffers, the
binding, the arg-max), medians over the repetitions, and each one's ratio to the first, median of the per-repetition
ratios; and whether their greedy tokens are the same. To compare two code trees, run it in each (a `git worktree`).
Issue 23 used it to measure decoder format 3's surgery and binding (BENCHMARKS.md).
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import onnxruntime as ort

from bench.report import machine
from service.engine.kv_cache import DecoderOutput, EncoderBatch, EncoderOutput, KvCache
from service.engine.model_dir import ModelFiles, load_model_directory
from service.engine.runner import OnnxRunner
from service.engine.settings import RuntimeSettings


@dataclass
class Timings:
    """One model's thread CPU seconds per repetition."""

    encoder: list[float] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)  # all of a repetition's decoder steps
    runs: list[float] = field(default_factory=list)  # the part of them inside onnxruntime's run
    tokens: list[list[int]] = field(default_factory=list)


class RunClock:
    """Thread CPU time spent inside onnxruntime's run calls (both kinds), while installed."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._originals: dict[str, Any] = {}

    def __enter__(self) -> RunClock:
        for name in ("run", "run_with_iobinding"):
            original = getattr(ort.InferenceSession, name)
            self._originals[name] = original

            def timed(session: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                started = time.thread_time()
                try:
                    return _original(session, *args, **kwargs)
                finally:
                    self.spent += time.thread_time() - started

            setattr(ort.InferenceSession, name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, original in self._originals.items():
            setattr(ort.InferenceSession, name, original)


def parse_model(spec: str) -> tuple[Path, str | None]:
    directory, _, variant = spec.partition(":")
    return Path(directory), variant or None


class Runner(Protocol):
    """What these loops need of the service's runners (OnnxRunner, OpenVinoRunner)."""

    model: ModelFiles

    def encode(self, batch: EncoderBatch, *, attention: bool) -> EncoderOutput: ...

    def decode(self, tgt: np.ndarray, cache: KvCache, *, attention: bool) -> DecoderOutput: ...


def measure(
    runners: Sequence[Runner], *, rows: int, source_tokens: int, steps: int, reps: int, seed: int = 0
) -> list[Timings]:
    vocab = min(r.model.vocab_size for r in runners)
    rng = np.random.default_rng(seed)
    sources = [rng.integers(4, vocab, source_tokens).tolist() for _ in range(rows)]
    batch = EncoderBatch.from_sources(sources, pad_id=0)
    timings = [Timings() for _ in runners]
    with RunClock() as clock:
        for rep in range(reps + 1):  # the first repetition warms up and is not counted
            for runner, timing in zip(runners, timings, strict=True):
                started = time.thread_time()
                cache = runner.encode(batch, attention=False).cache
                encoder = time.thread_time() - started
                clock.spent = 0.0
                started = time.thread_time()
                chosen, _ = greedy_steps(runner, cache, steps=steps)
                if rep:
                    timing.encoder.append(encoder)
                    timing.steps.append(time.thread_time() - started)
                    timing.runs.append(clock.spent)
                    timing.tokens.append(chosen.T.ravel().tolist())  # step by step, each step's rows in order
    return timings


def greedy_steps(runner: Runner, cache: KvCache, *, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """`steps` greedy decoder steps of one token a row from the encoder's `cache` (BOS first): the tokens chosen,
    (rows, steps), and the first step's logits, (rows, vocab)."""
    rows = cache.batch
    tokens = np.full((rows, 1), 1, dtype=np.int64)
    chosen = np.empty((rows, steps), dtype=np.int64)
    first_logits = np.empty((rows, 0), dtype=np.float32)
    for step in range(steps):
        out = runner.decode(tokens, cache, attention=False)
        cache = out.cache
        if step == 0:
            first_logits = out.logits[:, -1]  # each step's logits are a fresh array: kept without a copy
        tokens = out.logits[:, -1].argmax(axis=-1).reshape(rows, 1)
        chosen[:, step] = tokens[:, 0]
    return chosen, first_logits


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.graphs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True, help="DIR or DIR:VARIANT; give several")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--source-tokens", type=int, default=20)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    parser.add_argument("--format2-only", action="store_true", help="no decoder format 3 (gqa_decoder false)")
    args = parser.parse_args(argv)
    runtime = RuntimeSettings(intra_op_threads=args.threads, gqa_decoder=not args.format2_only)
    runners = []
    for spec in args.model:
        directory, variant = parse_model(spec)
        runners.append(OnnxRunner(load_model_directory(directory, variant=variant), runtime=runtime))
    timings = measure(runners, rows=args.rows, source_tokens=args.source_tokens, steps=args.steps, reps=args.reps)
    host = machine()
    print(f"Machine: {host['cpu']} ({host['cpu_flags']}), {host['cores']} cores; onnxruntime {ort.__version__}")
    print(
        f"{args.rows} rows of {args.source_tokens} source tokens, {args.steps} steps, {args.reps} repetitions, "
        f"{args.threads} thread(s); thread CPU time, medians"
    )
    first = timings[0]
    for spec, timing in zip(args.model, timings, strict=True):
        step_us = 1e6 * statistics.median(timing.steps) / args.steps
        run_us = 1e6 * statistics.median(timing.runs) / args.steps
        outside_us = 1e6 * statistics.median(s - r for s, r in zip(timing.steps, timing.runs, strict=True)) / args.steps
        encoder_ratio = statistics.median(a / b for a, b in zip(timing.encoder, first.encoder, strict=True))
        step_ratio = statistics.median(a / b for a, b in zip(timing.steps, first.steps, strict=True))
        same = sum(a == b for a, b in zip(timing.tokens[0], first.tokens[0], strict=True)) / len(first.tokens[0])
        print(
            f"{spec}: encoder {1e3 * statistics.median(timing.encoder):.2f} ms ({encoder_ratio:.2f}x the first), "
            f"decoder step {step_us:.0f} us ({step_ratio:.2f}x; run {run_us:.0f}, outside run {outside_us:.0f}), "
            f"same greedy tokens as the first {same:.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
