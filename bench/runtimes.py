"""Issue 23's runtimes: the same model directory and requests on onnxruntime fp32, OpenVINO f32 and, on a
CPU with bf16 (AVX512-BF16 or AMX), OpenVINO bf16: every engine loaded, alternating, in one run.

The bundled model runs the short mix at saturation (a closed loop of 32 clients, as `--int8`); the base-size
model a batch of 32 sources and exactly 24 tokens (as `--peers`), where the MatMuls are large enough for
bf16 to matter. Each figure says how many greedy outputs equal onnxruntime fp32's.
"""

from __future__ import annotations

import importlib.util
import logging
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from bench.report import Figure
from bench.workload import alternate, closed_loop, make_engine, serve_concurrently, share_of_equal_outputs
from service.engine import Engine, GenerationParams, GenerationResult

logger = logging.getLogger(__name__)
BASELINE = "onnxruntime fp32"


def openvino_installed() -> bool:
    return importlib.util.find_spec("openvino") is not None


def openvino_capabilities() -> list[str]:
    """What OpenVINO's CPU plugin says this CPU can do ("FP32", "BF16", "INT8", ...)."""
    import openvino  # the optional extra: callers check openvino_installed() first

    return list(openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))


def precisions() -> list[str]:
    """The OpenVINO inference precisions this CPU runs: f32, and bf16 where OpenVINO lists BF16."""
    return ["f32", "bf16"] if "BF16" in openvino_capabilities() else ["f32"]


Workload = Callable[[Engine], Awaitable[list[GenerationResult]]]


async def run(
    model_dir: Path,
    workload: Workload,
    *,
    label: str,
    max_batch_size: int,
    rounds: int,
    exact_tokens: int | None = None,
    decoder_spinning: bool | None = None,
) -> list[Figure]:
    """onnxruntime fp32 against each OpenVINO precision on `workload`, all loaded, alternating; a figure per
    precision: its tokens/s over onnxruntime's, and how many outputs equal onnxruntime's."""
    engines = {BASELINE: make_engine(model_dir, max_batch_size=max_batch_size, decoder_spinning=decoder_spinning)}
    available = precisions()
    if "bf16" not in available:
        logger.info("%s: OpenVINO bf16 not measured: %s", label, no_bf16())
    for precision in available:
        engines[f"openvino {precision}"] = make_engine(
            model_dir,
            max_batch_size=max_batch_size,
            runtime={"backend": "openvino", "inference_precision": precision},
        )
    for engine in engines.values():
        await engine.start()
    outputs: dict[str, list[list[int]]] = {}
    # Tokens per second of the process's CPU time too (the warm-up's left out): on a shared machine wall time
    # measures the neighbours as well. onnxruntime's spinning pool threads count in it (--decoder-spinning off).
    cpu_rates: dict[str, list[float]] = {name: [] for name in engines}
    try:

        def contender(name: str) -> Callable[[], Awaitable[float]]:
            async def measure() -> float:
                started, cpu_started = time.perf_counter(), time.process_time()
                results = await workload(engines[name])
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
                if exact_tokens is not None and any(len(r.token_ids) != exact_tokens for r in results):
                    raise RuntimeError(f"{label} {name}: did not generate exactly {exact_tokens} tokens")
                outputs.setdefault(name, [r.token_ids for r in results])  # the warm-up's, the same requests
                tokens = sum(len(r.token_ids) for r in results)
                cpu_rates[name].append(tokens / cpu)
                return tokens / elapsed

            return measure

        result = await alternate({name: contender(name) for name in engines}, rounds=rounds)
    finally:
        for engine in engines.values():
            await engine.stop(timeout_s=30)
    unmeasured = "" if "bf16" in available else f"; bf16 not measured: {no_bf16()}"
    figures = []
    for name in engines:
        if name == BASELINE:
            continue
        low, high = result.spread(name, BASELINE)
        same = share_of_equal_outputs(outputs[name], outputs[BASELINE])
        figures.append(
            Figure(
                "openvino",
                f"{label}: {name} / {BASELINE}",
                result.ratio(name, BASELINE),
                "x",
                detail=f"rounds {low:.2f}-{high:.2f}; same greedy outputs {same:.0%}; tok/s: {name} "
                f"{result.median(name):,.0f}, {BASELINE} {result.median(BASELINE):,.0f}; tok per process CPU s: "
                f"{name} {statistics.median(cpu_rates[name][1:]):,.0f}, {BASELINE} "
                f"{statistics.median(cpu_rates[BASELINE][1:]):,.0f}" + ("" if name == "openvino bf16" else unmeasured),
                rates={n: result.median(n) for n in result.rates},
            )
        )
    return figures


def no_bf16() -> str:
    """Why bf16 is not measured on this CPU, in OpenVINO's words."""
    return f"OpenVINO lists {', '.join(openvino_capabilities())} for this CPU, no BF16 (needs AVX512-BF16 or AMX)"


def closed_loop_workload(texts: Sequence[str], *, concurrency: int, max_new_tokens: int) -> Workload:
    params = GenerationParams(max_new_tokens=max_new_tokens)

    async def workload(engine: Engine) -> list[GenerationResult]:
        return (await closed_loop(engine, texts, params, concurrency=concurrency)).results

    return workload


def batch_workload(texts: Sequence[str], *, max_new_tokens: int) -> Workload:
    params = GenerationParams(max_new_tokens=max_new_tokens)

    async def workload(engine: Engine) -> list[GenerationResult]:
        return await serve_concurrently(engine, texts, params)

    return workload
