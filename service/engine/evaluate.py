"""`python -m service.engine.evaluate`: exact match per category of a served model directory, with its
edit guard off (the model alone) and on (what users get), greedy decoding through the engine, on
onnxruntime or OpenVINO (`--backend`, `--inference-precision`: a runtime's figures beside onnxruntime fp32's).

The test set is a JSON-lines file of {"source", "target", "category"} (`python -m model.evaluate
--write-test-set`). Imports only the engine: no torch, no HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from service.engine.engine import Engine
from service.engine.errors import ModelLoadError, ServingError
from service.engine.settings import BatchingSettings, RuntimeSettings
from service.engine.types import GenerationParams

# Requests in flight at once: enough to fill the batch, well under the engine's queue.
IN_FLIGHT = 64


@dataclass(frozen=True)
class Case:
    source: str
    target: str
    category: str


def read_cases(path: Path) -> list[Case]:
    cases = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        record = json.loads(line)
        if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in ("source", "target")):
            raise ValueError(f"{path}:{lineno}: expected an object with string source and target")
        cases.append(Case(record["source"], record["target"], str(record.get("category", "jsonl"))))
    return cases


async def generate_all(engine: Engine, cases: Sequence[Case], max_new_tokens: int) -> list[str]:
    """Every case's output (greedy), IN_FLIGHT at a time; an input the engine refuses gets its error."""
    params = GenerationParams(max_new_tokens=max_new_tokens)
    outputs: list[str] = [""] * len(cases)
    slots = asyncio.Semaphore(IN_FLIGHT)

    async def one(index: int) -> None:
        async with slots:
            try:
                result = await engine.submit(cases[index].source, params, stream=False).result()
                outputs[index] = result.text
            except ServingError as exc:
                outputs[index] = f"<{type(exc).__name__}: {exc}>"

    await asyncio.gather(*(one(i) for i in range(len(cases))))
    return outputs


async def evaluate(
    model_dir: Path,
    cases: Sequence[Case],
    *,
    edit_guard: bool,
    variant: str | None,
    runtime: RuntimeSettings | None = None,
) -> list[str]:
    engine = Engine(
        model_dir,
        variant=variant,
        runtime=runtime,
        batching=BatchingSettings(max_queue=4 * IN_FLIGHT),
        edit_guard=edit_guard,
    )
    await engine.start()
    try:
        return await generate_all(engine, cases, engine.info.max_target_tokens - 1)
    finally:
        await engine.stop(drain=False, timeout_s=5.0)


def exact_match(cases: Sequence[Case], outputs: Sequence[str]) -> dict[str, float]:
    by_category: dict[str, list[bool]] = defaultdict(list)
    for case, output in zip(cases, outputs, strict=True):
        by_category[case.category].append(output == case.target)
    return {c: round(sum(v) / len(v), 4) for c, v in sorted(by_category.items())}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.engine.evaluate", description=__doc__)
    parser.add_argument("--model-dir", default="models/normalize/1", help="model directory (default: %(default)s)")
    parser.add_argument(
        "--data", required=True, help="test set as JSON lines (python -m model.evaluate --write-test-set)"
    )
    parser.add_argument("--variant", default=None, help="fp32 | int8 | fp16 | auto (default: the manifest's default)")
    parser.add_argument(
        "--backend",
        choices=("onnxruntime", "openvino"),
        default="onnxruntime",
        help="the library that runs the graphs, as ATENTO_RUNTIME__BACKEND (default: %(default)s)",
    )
    parser.add_argument(
        "--inference-precision",
        choices=("f32", "bf16"),
        default="f32",
        help="f32, or bf16 (openvino on a CPU with bf16): ATENTO_RUNTIME__INFERENCE_PRECISION (default: %(default)s)",
    )
    parser.add_argument(
        "--format2-only",
        action="store_true",
        help="every step on decoder format 2, as ATENTO_RUNTIME__GQA_DECODER=false (default: format 3 where it runs)",
    )
    parser.add_argument("--errors", type=int, default=3, help="wrong outputs to show per category (default: 3)")
    parser.add_argument(
        "--update-manifest",
        action="store_true",
        help="write the figures into the model directory's manifest.json as served_evaluation (default: off)",
    )
    args = parser.parse_args(argv)
    model_dir = Path(args.model_dir)
    cases = read_cases(Path(args.data))
    try:
        runtime = RuntimeSettings(
            backend=args.backend, inference_precision=args.inference_precision, gqa_decoder=not args.format2_only
        )
    except ValueError as error:  # pydantic's ValidationError: bf16 asked of onnxruntime
        parser.error(str(error))
    started = time.perf_counter()
    try:
        raw = asyncio.run(evaluate(model_dir, cases, edit_guard=False, variant=args.variant, runtime=runtime))
        guarded = asyncio.run(evaluate(model_dir, cases, edit_guard=True, variant=args.variant, runtime=runtime))
    except ModelLoadError as error:  # a variant, backend or precision this machine cannot load: say which
        sys.stderr.write(f"{parser.prog}: cannot load {model_dir}: {error}\n")
        return 2
    report = {
        "test_set": str(args.data),
        "variant": args.variant,
        "backend": runtime.backend,
        "inference_precision": runtime.inference_precision,
        "gqa_decoder": runtime.gqa_decoder,
        "decoding": "greedy",
        "exact_match_guard_off": exact_match(cases, raw),
        "exact_match_guard_on": exact_match(cases, guarded),
        "overall_guard_off": round(sum(o == c.target for o, c in zip(raw, cases, strict=True)) / len(cases), 4),
        "overall_guard_on": round(sum(o == c.target for o, c in zip(guarded, cases, strict=True)) / len(cases), 4),
        "examples": len(cases),
        "seconds": round(time.perf_counter() - started, 1),
    }
    shown: dict[str, int] = defaultdict(int)
    for case, output, kept in zip(cases, raw, guarded, strict=True):
        # Wrong with the guard on only is shown too: a right answer the guard reverted, which it must never do.
        wrong = case.target != output or case.target != kept
        if wrong and shown[case.category] < args.errors:
            shown[case.category] += 1
            sys.stderr.write(
                f"[{case.category}] {case.source!r}\n  want    {case.target!r}\n  model   {output!r}\n"
                f"  guarded {kept!r}\n"
            )
    sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    if args.update_manifest:
        manifest_path = model_dir / "manifest.json"
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        manifest["served_evaluation"] = report
        manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
