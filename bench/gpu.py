"""`python -m bench.gpu`: the GPU table, prepared to run unattended on a machine with a CUDA device.

Runs the fp32 and fp16 engines on CUDA (against CTranslate2 on CUDA at batch sizes 1 to 64, base-size
and bundled models), the HTTP server on CUDA against the engine alone, and the attention cost, then
prints the same table as `python -m bench`. Without a GPU (no CUDAExecutionProvider in onnxruntime)
it says so and exits 0.
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import onnxruntime as ort

from bench import engine_variants, http_path, peers
from bench.models import BASE_NEW_TOKENS, base_sources, ensure_fp16, load_base_model, load_bundled_model
from bench.report import Figure, markdown, write_json
from bench.workload import bundled_texts, make_engine


def gpu_available() -> bool:
    return "CUDAExecutionProvider" in ort.get_available_providers()


async def run(args: argparse.Namespace) -> list[Figure]:
    rounds = 2 if args.quick else 5
    sizes = (1, 32) if args.quick else (1, 8, 32, 64)
    models = [(load_base_model(), base_sources(64), BASE_NEW_TOKENS, True)]
    if (args.model_dir / "manifest.json").exists() and (args.checkpoint / "config.json").exists():
        models.append((load_bundled_model(args.model_dir, args.checkpoint), bundled_texts(64), 64, False))
    figures: list[Figure] = []
    for model, texts, max_new_tokens, exact in models:
        ensure_fp16(model.model_dir)
        for variant in ("fp32", "fp16"):
            engine = make_engine(model.model_dir, max_batch_size=max(sizes), variant=variant, device="cuda")
            await engine.start()
            try:
                figures += await peers.compare(
                    model,
                    engine,
                    texts,
                    batch_sizes=sizes,
                    max_new_tokens=max_new_tokens,
                    exact=exact,
                    rounds=rounds,
                    variant=variant,
                )
            finally:
                await engine.stop(timeout_s=30)
        for variant in ("fp32", "fp16"):
            texts = bundled_texts(64 * 12) if not exact else base_sources(64 * 12)
            figures += await http_path.run(
                model.model_dir,
                texts,
                clients=64,
                max_batch_size=32,
                rounds=rounds,
                device="cuda",
                variant=variant,
                max_new_tokens=max_new_tokens,
            )
    figures += await engine_variants.attention_cost(
        args.model_dir, bundled_texts(192), concurrency=32, rounds=rounds, label="bundled cuda", device="cuda"
    )
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.gpu", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument("--checkpoint", type=Path, default=Path("runs/normalize"))
    parser.add_argument("--out", type=Path, default=Path("runs/bench/gpu-report.json"))
    args = parser.parse_args(argv)
    if not gpu_available():
        print(
            f"no GPU: onnxruntime offers {ort.get_available_providers()} (install onnxruntime-gpu on a "
            "machine with a CUDA device); nothing to measure"
        )
        return 0
    figures = asyncio.run(run(args))
    print(markdown(figures))
    write_json(args.out, figures, command="python -m bench.gpu " + " ".join(sys.argv[1:] if argv is None else argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
