"""`python -m bench` (`make bench`): every benchmark of issue 8, measured A/B-alternating in one run,
printed as a Markdown table and written as JSON. `--quick` for fewer rounds and sizes; select
benchmarks with --batching, --peers, --http (with memory), --attention, --int8, --hardware, --marian
(an imported Hugging Face Marian against CTranslate2's converter of the same directory), --openvino
(the OpenVINO backend at f32, and bf16 where the CPU has it, against onnxruntime fp32), --fastest
(issue 23's bars: every way atento runs the base model at batch 32 against CTranslate2's compute types).
A figure whose prerequisite is missing (the training checkpoint, a GPU) is skipped with one line
saying what to run to get it; everything else still runs.
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from bench import batching, engine_variants, fastest, hardware, http_path, marian, peers, runtimes
from bench.models import BASE_NEW_TOKENS, base_sources, load_base_model, load_bundled_model
from bench.report import Figure, machine, markdown, write_json
from bench.workload import THREADS, bundled_texts

BENCHMARKS = ("batching", "peers", "http", "attention", "int8", "hardware", "marian", "openvino", "fastest")
DEFAULT_CHECKPOINT = Path("runs/normalize")


@dataclass(frozen=True)
class Skipped:
    """A figure not measured because something it needs is missing, and what to run to get it."""

    figure: str
    needs: str
    run: str

    def line(self) -> str:
        return f"skipped {self.figure}: needs {self.needs} — run `{self.run}`"


def has_checkpoint(checkpoint: Path) -> bool:
    return (checkpoint / "config.json").exists()


def skipped_figures(chosen: Sequence[str], args: argparse.Namespace) -> list[Skipped]:
    """The figures of `chosen` that this machine cannot measure, each with its remedy."""
    skipped = []
    if "bundled" in args.models and not has_checkpoint(args.checkpoint):
        train = (
            "make train" if args.checkpoint == DEFAULT_CHECKPOINT else f"python -m model.train --out {args.checkpoint}"
        )
        needs = f"{args.checkpoint} (the bundled model's training checkpoint)"
        if "peers" in chosen:
            figure = "the bundled model against PyTorch and CTranslate2 (--peers)"
            skipped.append(Skipped(figure, needs, train))
        if "hardware" in chosen:
            figure = "the bundled model's share of the sgemm rate (--hardware)"
            skipped.append(Skipped(figure, needs, train))
    if "int8" in chosen:
        skipped.append(
            Skipped("fp16 / fp32 on a GPU (--int8)", "a CUDA device and its own tool", "python -m bench.gpu")
        )
    # A CPU without bf16 is not something to install: the OpenVINO f32 figures say bf16 was not measured.
    if "openvino" in chosen and not runtimes.openvino_installed():
        figure = "the OpenVINO backend against onnxruntime (--openvino)"
        skipped.append(Skipped(figure, "the openvino package", "pip install 'atento[openvino]'"))
    return skipped


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for name in BENCHMARKS:
        parser.add_argument(f"--{name}", action="store_true", help=f"run the {name} benchmark (default: all)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, batch sizes and requests")
    parser.add_argument("--rounds", type=int, default=0, help="A/B rounds per comparison (0 = 5, quick: 2)")
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=DEFAULT_CHECKPOINT,
        help="the bundled model's checkpoint (PyTorch and CTranslate2 need the weights)",
    )
    parser.add_argument("--models", default="bundled,base", help="--peers and --openvino models: bundled, base or both")
    parser.add_argument(
        "--decoder-spinning",
        choices=("default", "on", "off"),
        default="default",
        help="on/off: a thread pool per onnxruntime session, the decoder's spinning on or off "
        "(default: the sessions share one pool, as `python -m service` runs them)",
    )
    parser.add_argument(
        "--texts-per-client",
        type=int,
        default=8,
        help="--batching: requests each closed-loop client sends; few make the ramp-down weigh",
    )
    parser.add_argument(
        "--marian-size",
        choices=sorted(marian.SIZES),
        default="base",
        help="--marian: the imported Marian's size (tiny: a trial run of the benchmark's code)",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/bench/report.json"))
    return parser.parse_args(argv)


def chosen_benchmarks(args: argparse.Namespace) -> list[str]:
    return [n for n in BENCHMARKS if getattr(args, n)] or list(BENCHMARKS)


async def run(args: argparse.Namespace) -> list[Figure]:
    chosen = chosen_benchmarks(args)
    rounds = args.rounds or (2 if args.quick else 5)
    concurrencies = (1, 32) if args.quick else (1, 8, 32, 64)
    batch_sizes = (1, 32) if args.quick else (1, 8, 32, 64)
    saturation = 32
    texts = bundled_texts(96 if args.quick else 192)
    spin = {"default": None, "on": True, "off": False}[args.decoder_spinning]
    figures: list[Figure] = []
    if "batching" in chosen:
        figures += await batching.run(
            args.model_dir,
            concurrencies=concurrencies,
            rounds=rounds,
            texts_per_client=args.texts_per_client,
            decoder_spinning=spin,
        )
    if "peers" in chosen or "hardware" in chosen:
        models = []
        if "bundled" in args.models and has_checkpoint(args.checkpoint):  # else skipped_figures says so
            bundled = load_bundled_model(args.model_dir, args.checkpoint)
            models.append((bundled, bundled_texts(64), _max_new_tokens(args.model_dir), False))
        if "base" in args.models:
            models.append((load_base_model(), base_sources(64), BASE_NEW_TOKENS, True))
        sizes = batch_sizes if "peers" in chosen else (1, 32)
        figures += await peers.run(models, batch_sizes=sizes, rounds=rounds, decoder_spinning=spin)
    if "http" in chosen:
        # The bar's figure at saturation (twice as many clients as batch rows), then the same batch
        # with one client per row, where each request's HTTP round trip also leaves its row empty.
        per_client = 6 if args.quick else 12
        for clients, memory in ((2 * saturation, True), (saturation, False)):
            figures += await http_path.run(
                args.model_dir,
                bundled_texts(clients * per_client),
                clients=clients,
                max_batch_size=saturation,
                rounds=rounds,
                decoder_spinning=spin,
                memory=memory,
            )
    if "attention" in chosen:
        figures += await engine_variants.attention_cost(
            args.model_dir, texts, concurrency=saturation, rounds=rounds, decoder_spinning=spin
        )
    if "int8" in chosen:
        figures += await engine_variants.int8_speedup(
            args.model_dir, texts, concurrency=saturation, rounds=rounds, decoder_spinning=spin
        )
    if "marian" in chosen:
        with tempfile.TemporaryDirectory(prefix="atento-bench-marian-") as root:
            sizes = (1, 32) if args.quick else (1, 8, 32)
            figures += await marian.run(Path(root), size=args.marian_size, batch_sizes=sizes, rounds=rounds)
    if "openvino" in chosen and runtimes.openvino_installed():  # else skipped_figures says so
        if "bundled" in args.models:  # the model directory alone: no checkpoint needed
            figures += await runtimes.run(
                args.model_dir,
                runtimes.closed_loop_workload(texts, concurrency=saturation, max_new_tokens=64),
                label=f"bundled, {saturation} concurrent",
                max_batch_size=saturation,
                rounds=rounds,
                decoder_spinning=spin,
            )
        if "base" in args.models:
            figures += await runtimes.run(
                load_base_model().model_dir,
                runtimes.batch_workload(base_sources(saturation), max_new_tokens=BASE_NEW_TOKENS),
                label=f"base, batch {saturation}",
                max_batch_size=saturation,
                rounds=rounds,
                exact_tokens=BASE_NEW_TOKENS,
                decoder_spinning=spin,
            )
    if "fastest" in chosen:
        figures += await fastest.run(load_base_model(), rounds=rounds)
    if "hardware" in chosen:
        peak = hardware.sgemm_gflops(threads=THREADS)
        achieved = [
            (f"{f.label.split(':')[0]} {name}, batch {f.label.rsplit(' ', 1)[1]}", rate, f.flops_per_token)
            for f in figures
            if f.flops_per_token and "/ ctranslate2" in f.label
            for name, rate in f.rates.items()
            if name in ("atento", "ctranslate2", "pytorch")
        ]
        figures += hardware.figures(peak, achieved)
    return figures


def _max_new_tokens(model_dir: Path) -> int:
    return int(json.loads((model_dir / "manifest.json").read_text())["max_target_tokens"]) - 1


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    logging.getLogger("bench").setLevel(logging.INFO)
    torch.set_num_threads(THREADS)
    skipped = [s.line() for s in skipped_figures(chosen_benchmarks(args), args)]
    figures = asyncio.run(run(args))
    info = machine()
    print(
        f"\nMachine: {info['cpu']} ({info['cpu_flags']}), {info['cores']} cores; onnxruntime "
        f"{info['onnxruntime']}, openvino {info['openvino']}, ctranslate2 {info['ctranslate2']}, "
        f"torch {info['torch']}\n"
    )
    print(markdown(figures))
    if skipped:
        print("\n" + "\n".join(skipped))
    command = "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv)
    write_json(args.out, figures, command=command, skipped=skipped)
    print(f"\nwrote {args.out}")
    return 0 if all(f.passed is not False for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
