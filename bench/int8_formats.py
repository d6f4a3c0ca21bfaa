"""The int8 formats a model's graphs can take, side by side in one process: which one onnxruntime's (or
OpenVINO's) kernels run fastest on this CPU, and how far each strays from fp32.

`python -m bench.int8_formats [--model-dir DIR] [--rows 16] [--source-tokens 24] [--steps 24] [--reps 8]
[--threads 1] [--calibration-rows 32] [--cache runs/bench]`. Without `--model-dir` it measures the base-size
model of `python -m bench` (random weights, built and cached by bench.models). It writes a trial directory next
to the cache (the model's own files linked, the trial graphs beside them; built once per model) with:

- `int8`: the model's own int8 variant (dynamic: u8 activations quantized on every call, s8 weights per output
  channel, the tied output projection folded; `python -m export` writes it), decoder format 3 and format 2;
- `int8_tensor`: the same with one weight scale per tensor;
- `qdq`: static int8 (QDQ), activation scales calibrated on greedy decoding of `--calibration-rows` random
  sources, on onnxruntime and (where installed) OpenVINO, whose CPU plugin runs QDQ graphs as int8; decoder
  format 2 only (format 3's surgery reads the fp32 pattern that QDQ nodes break);
- `nbits4_b32`, `nbits4_b128`, `nbits8_b128`: MatMulNBits weights of 4 or 8 bits in blocks of 32 or 128,
  accuracy level 4 (int8 activations, integer dot products).

Each way runs the graphs alone (one encoder call, then greedy decoder steps of one token a row; no engine),
every way on the same batch in turn, a new batch each repetition; it prints tokens a second (wall time,
median), the ratio to `int8` (median of per-repetition ratios), the encoder call and a decoder step, the share
of rows whose greedy tokens equal fp32's, and the largest logit difference from fp32 at the first step.
Issue 23 used it to choose the int8 format by measurement (BENCHMARKS.md).
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from bench import runtimes
from bench.graphs import Runner, greedy_steps
from bench.report import machine
from export.gqa import gqa_decoder
from export.model_dir import sha256_file
from export.onnx_decoding import OnnxSeq2Seq, onnx_greedy
from export.quantize import quantize_int8, quantize_static_int8, quantize_weights_nbits
from model.config import ModelConfig
from service.engine.kv_cache import EncoderBatch
from service.engine.model_dir import load_model_directory
from service.engine.runner import OnnxRunner
from service.engine.settings import RuntimeSettings

logger = logging.getLogger(__name__)

SHIPPED = "int8"  # the ratios' baseline: the int8 variant `python -m export` writes
CALIBRATION_SOURCE_TOKENS = 24
NBITS = {"nbits4_b32": (4, 32), "nbits4_b128": (4, 128), "nbits8_b128": (8, 128)}


@dataclass(frozen=True)
class Way:
    """One format on one runtime."""

    label: str
    variant: str
    backend: str = "onnxruntime"
    gqa_decoder: bool = True  # decoder format 3 where the variant has it


REFERENCE = Way("fp32", "fp32")  # what every way's outputs are compared with
BASELINE = Way("int8 dynamic, per channel (shipped)", SHIPPED)  # what every way's speed is compared with
WAYS = (
    REFERENCE,
    BASELINE,
    Way("int8 dynamic, per channel, format 2", SHIPPED, gqa_decoder=False),
    Way("int8 dynamic, per tensor", "int8_tensor"),
    Way("int8 static (QDQ), format 2", "qdq", gqa_decoder=False),
    Way("int8 static (QDQ) on OpenVINO", "qdq", backend="openvino"),
    *(Way(f"MatMulNBits {bits}-bit, block {block}", name) for name, (bits, block) in NBITS.items()),
)


class RecordingSession:
    """An onnxruntime session that keeps a copy of every feed it runs (the calibration data)."""

    def __init__(self, session: ort.InferenceSession) -> None:
        self.session = session
        self.feeds: list[dict[str, np.ndarray]] = []

    def get_outputs(self) -> list[Any]:
        return self.session.get_outputs()

    def run(self, names: Sequence[str] | None, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        self.feeds.append({name: np.array(value) for name, value in feeds.items()})
        return self.session.run(names, dict(feeds))


def calibration_feeds(
    model_dir: Path, manifest: Mapping[str, Any], *, rows: int, source_tokens: int, steps: int
) -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    """The fp32 graphs' feeds (encoder, decoder format 2) while they decode `rows` random sources greedily."""
    fp32 = manifest["variants"]["fp32"]
    config = ModelConfig.from_dict(manifest["config"])
    seq2seq = OnnxSeq2Seq(model_dir / fp32["encoder"], model_dir / fp32["decoder"], config)
    encoder, decoder = RecordingSession(seq2seq.encoder), RecordingSession(seq2seq.decoder)
    seq2seq.encoder, seq2seq.decoder = encoder, decoder  # type: ignore[assignment]
    sources = random_sources(rows, source_tokens, vocab_size=config.vocab_size, seed=1)
    for start in range(0, rows, 8):
        onnx_greedy(seq2seq, sources[start : start + 8], max_new_tokens=steps)
    return encoder.feeds, decoder.feeds


def random_sources(rows: int, tokens: int, *, vocab_size: int, seed: int) -> list[list[int]]:
    """Token ids past the special ones (pad, bos, eos, unk, mask)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(5, vocab_size, tokens).tolist() for _ in range(rows)]


def trial_directory(model_dir: Path, cache: Path, *, calibration_rows: int, steps: int) -> Path:
    """The model's files linked and every trial format's graphs beside them, built once (keyed by the fp32
    decoder's sha256 and the calibration's size); returns the directory, whose manifest lists every format as a
    variant."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    fp32 = manifest["variants"]["fp32"]
    fingerprint = f"{manifest['files'][fp32['decoder']][:16]}-calibrated-{calibration_rows}x{steps}"
    root = cache / f"{manifest['name']}-int8-formats-{fingerprint}"
    if (root / "manifest.json").is_file():
        return root
    root.mkdir(parents=True, exist_ok=True)
    for name in manifest["files"]:
        link = root / name
        link.unlink(missing_ok=True)
        link.symlink_to((model_dir / name).resolve())
    source = {role: model_dir / fp32[role] for role in ("encoder", "decoder", "decoder_gqa") if role in fp32}
    variants: dict[str, dict[str, str]] = {}

    def written(role: str, variant: str) -> Path:
        return root / f"{source[role].name.removesuffix('.onnx')}.{variant}.onnx"

    logger.info("int8 per tensor")
    for role in ("encoder", "decoder"):
        quantize_int8(source[role], written(role, "int8_tensor"), per_channel=False)
    variants["int8_tensor"] = {role: written(role, "int8_tensor").name for role in ("encoder", "decoder")}
    if "decoder_gqa" in source:  # format 3 from the quantized format 2, as `python -m export.gqa` makes int8's
        config = manifest["config"]
        quantized = onnx.load(str(written("decoder", "int8_tensor")))
        gqa = gqa_decoder(quantized, n_layers=int(config["n_decoder_layers"]), n_heads=int(config["n_heads"]))
        onnx.save(gqa, str(written("decoder_gqa", "int8_tensor")))
        variants["int8_tensor"]["decoder_gqa"] = written("decoder_gqa", "int8_tensor").name
    for name, (bits, block) in NBITS.items():
        logger.info("MatMulNBits %d-bit, block %d", bits, block)
        for role in source:  # format 3 quantized from fp32's: the surgery reads MatMuls, not MatMulNBits
            quantize_weights_nbits(source[role], written(role, name), bits=bits, block_size=block)
        variants[name] = {role: written(role, name).name for role in source}
    logger.info("static int8: calibrating on %d sources", calibration_rows)
    encoder_feeds, decoder_feeds = calibration_feeds(
        model_dir, manifest, rows=calibration_rows, source_tokens=CALIBRATION_SOURCE_TOKENS, steps=steps
    )
    for role, feeds in (("encoder", encoder_feeds), ("decoder", decoder_feeds)):
        quantize_static_int8(source[role], written(role, "qdq"), feeds)
    variants["qdq"] = {role: written(role, "qdq").name for role in ("encoder", "decoder")}
    for name, files in variants.items():
        manifest["variants"][name] = {**files, "device": "cpu", "checked": False}
        manifest["files"].update({file: sha256_file(root / file) for file in files.values()})
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")  # last: the directory is whole
    return root


def runner_for(way: Way, directory: Path, threads: int) -> Runner:
    runtime = RuntimeSettings(intra_op_threads=threads, gqa_decoder=way.gqa_decoder, backend=way.backend)
    model = load_model_directory(directory, variant=way.variant)
    if way.backend == "openvino":
        from service.engine.openvino_runner import OpenVinoRunner

        return OpenVinoRunner(model, runtime=runtime)
    return OnnxRunner(model, runtime=runtime)


@dataclass
class Timings:
    """One way's wall seconds per repetition, its greedy tokens (rows x steps) and its first step's logits."""

    encoder: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    tokens: list[np.ndarray] = field(default_factory=list)
    first_logits: np.ndarray | None = None


def measure(
    runners: Sequence[Runner], *, vocab_size: int, rows: int, source_tokens: int, steps: int, reps: int
) -> list[Timings]:
    timings = [Timings() for _ in runners]
    for rep in range(reps + 1):  # the first repetition warms up and is not timed
        sources = random_sources(rows, source_tokens, vocab_size=vocab_size, seed=100 + rep)
        batch = EncoderBatch.from_sources(sources, pad_id=0)
        for runner, timing in zip(runners, timings, strict=True):
            started = time.perf_counter()
            cache = runner.encode(batch, attention=False).cache
            encoded = time.perf_counter()
            chosen, first_logits = greedy_steps(runner, cache, steps=steps)
            finished = time.perf_counter()
            timing.tokens.append(chosen)
            if rep == 0:
                timing.first_logits = first_logits
            else:
                timing.encoder.append(encoded - started)
                timing.total.append(finished - started)
    return timings


def rows_as_reference(timing: Timings, reference: Timings) -> float:
    """The share of rows, over every repetition, whose greedy tokens all equal the reference's."""
    same = [
        bool((a == b).all())
        for mine, theirs in zip(timing.tokens, reference.tokens, strict=True)
        for a, b in zip(mine, theirs, strict=True)
    ]
    return sum(same) / len(same)


def report_lines(ways: Sequence[Way], timings: Sequence[Timings], *, rows: int, steps: int) -> list[str]:
    reference, baseline = (timings[list(ways).index(way)] for way in (REFERENCE, BASELINE))
    lines = [
        "| format | runtime | tok/s | / shipped int8 | encoder ms | decoder step ms | rows as fp32 | first-step "
        "max logit diff |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for way, timing in zip(ways, timings, strict=True):
        total, encoder = statistics.median(timing.total), statistics.median(timing.encoder)
        ratio = statistics.median(b / a for a, b in zip(timing.total, baseline.total, strict=True))
        assert timing.first_logits is not None and reference.first_logits is not None
        diff = float(np.abs(timing.first_logits - reference.first_logits).max())
        lines.append(
            f"| {way.label} | {way.backend} | {rows * steps / total:,.0f} | {ratio:.2f}x | {1e3 * encoder:.1f} | "
            f"{1e3 * (total - encoder) / steps:.2f} | {rows_as_reference(timing, reference):.1%} | {diff:.4f} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.int8_formats", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, help="a model directory; default: bench's base-size model")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--source-tokens", type=int, default=24)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1, help="each runtime's intra-op threads")
    parser.add_argument("--calibration-rows", type=int, default=32)
    parser.add_argument("--cache", type=Path, default=Path("runs/bench"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logger.setLevel(logging.INFO)  # this tool's progress, not every model load's
    model_dir = args.model_dir
    if model_dir is None:
        from bench.models import load_base_model

        model_dir = load_base_model(args.cache).model_dir
    directory = trial_directory(model_dir, args.cache, calibration_rows=args.calibration_rows, steps=args.steps)
    ways = [w for w in WAYS if w.backend == "onnxruntime" or runtimes.openvino_installed()]
    if len(ways) < len(WAYS):
        logger.info("OpenVINO is not installed (pip install 'atento[openvino]'): its way is not measured")
    runners = [runner_for(way, directory, args.threads) for way in ways]
    vocab_size = int(json.loads((directory / "manifest.json").read_text())["config"]["vocab_size"])
    timings = measure(
        runners,
        vocab_size=vocab_size,
        rows=args.rows,
        source_tokens=args.source_tokens,
        steps=args.steps,
        reps=args.reps,
    )
    host = machine()
    print(
        f"Machine: {host['cpu']} ({host['cpu_flags']}), {host['cores']} cores; onnxruntime {ort.__version__}, "
        f"openvino {host['openvino']}"
    )
    print(
        f"{directory}: {args.rows} rows of {args.source_tokens} source tokens, {args.steps} greedy steps, "
        f"{args.reps} repetitions, {args.threads} thread(s) a runtime; wall time, medians"
    )
    for line in report_lines(ways, timings, rows=args.rows, steps=args.steps):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
