"""Issue 23's two CPU bars in one alternating run (`python -m bench --fastest`): the base-size model at
batch 32, exactly 24 greedy tokens, every way atento can run it on this CPU against CTranslate2's compute
types, all loaded at once.

atento's ways: onnxruntime fp32 and int8, each also in two engine processes of one thread each (the batch
shared out between them, as CTranslate2's two replicas share it), and on OpenVINO bf16 (where OpenVINO lists
BF16 for this CPU) and the int8 graphs. A way counts for the "fastest" bar only when its greedy outputs equal
onnxruntime fp32's on at least 99% of the batch (the issue's rule), and its parity with fp32 is printed beside it;
the fp32 bar takes the faster of fp32's two ways, as it takes CTranslate2 float32's faster one.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bench import runtimes
from bench.ct2 import Ct2Seq2Seq
from bench.models import BASE_NEW_TOKENS, BenchModel, base_sources
from bench.report import Figure
from bench.workload import THREADS, alternate, make_engine, process_cpu_s, serve_concurrently, share_of_equal_outputs
from service.engine import EngineClient, GenerationParams

logger = logging.getLogger(__name__)
BATCH = 32
FP32 = "atento onnxruntime fp32"
FP32_PROCESSES = "atento onnxruntime fp32, 2 engine processes"
SAME_OUTPUTS_BAR = 0.99
FASTEST_BAR = 1.5  # atento's fastest matching way / CTranslate2's fastest CPU compute type
FP32_BAR = 1.2  # atento fp32 / CTranslate2 float32
# One batch lasts 0.3-1.5 s here: alone, a round's ratio swung 1.05x-2.45x between rounds of one run
# (2026-12-03, Zen 4). Each contender decodes the batch this many times a round.
BATCHES_PER_ROUND = 6


@dataclass(frozen=True)
class Way:
    """One way atento runs the model: a variant of the directory on a runtime at a precision."""

    name: str
    variant: str
    runtime: dict[str, object]
    processes: int = 1  # engine processes (BatchingSettings.processes), the cores shared out among them


def atento_ways() -> list[Way]:
    ways = [Way(FP32, "fp32", {}), Way("atento onnxruntime int8", "int8", {})]
    ways += [
        Way(FP32_PROCESSES, "fp32", {}, processes=2),
        Way("atento onnxruntime int8, 2 engine processes", "int8", {}, processes=2),
    ]
    if runtimes.openvino_installed():
        if "bf16" in runtimes.precisions():
            ways.append(Way("atento openvino bf16", "fp32", {"backend": "openvino", "inference_precision": "bf16"}))
        else:
            logger.info("OpenVINO bf16 not measured: %s", runtimes.no_bf16())
        ways.append(Way("atento openvino int8", "int8", {"backend": "openvino"}))
    return ways


async def run(model: BenchModel, *, rounds: int) -> list[Figure]:
    texts = base_sources(BATCH)
    params = GenerationParams(max_new_tokens=BASE_NEW_TOKENS, token_logprobs=False)
    engines: dict[str, EngineClient] = {}
    for way in atento_ways():
        engine = make_engine(
            model.model_dir,
            max_batch_size=BATCH,
            variant=way.variant,
            runtime=way.runtime,
            processes=way.processes,
            threads=THREADS // way.processes,
        )
        try:
            await engine.start()
        except Exception as error:  # a runtime that cannot load this variant is reported, not fatal
            logger.warning("%s not measured: %s", way.name, error)
            continue
        engines[way.name] = engine
    sources = [next(iter(engines.values())).tokenize(t)[0] for t in texts]
    # CTranslate2 both ways it uses two cores: one replica on two threads, and two replicas of one thread
    # each, the batch cut in two (inter_threads; 1.9x the first for int8 at batch 32 on a 2-core Zen 4).
    peers = {
        f"ctranslate2 {kind}{'' if replicas == 1 else ', 2 replicas'}": Ct2Seq2Seq(
            model.ct2_dirs[kind], model.vocabulary, compute_type=kind, replicas=replicas
        )
        for kind in ("float32", "int8")
        for replicas in (1, 2)
    }
    outputs: dict[str, list[list[int]]] = {}
    cpu_rates: dict[str, list[float]] = {name: [] for name in [*engines, *peers]}

    def measured(name: str, decode: Callable[[], Awaitable[list[list[int]]]]) -> Callable[[], Awaitable[float]]:
        async def measure() -> float:
            started, cpu_started = time.perf_counter(), process_cpu_s()
            tokens = 0
            for _ in range(BATCHES_PER_ROUND):
                generated = await decode()
                if any(len(g) != BASE_NEW_TOKENS for g in generated):
                    raise RuntimeError(f"{name} did not generate exactly {BASE_NEW_TOKENS} tokens")
                outputs.setdefault(name, generated)
                tokens += sum(map(len, generated))
            elapsed, cpu = time.perf_counter() - started, process_cpu_s() - cpu_started
            cpu_rates[name].append(tokens / cpu)
            return tokens / elapsed

        return measure

    def atento(engine: EngineClient) -> Callable[[], Awaitable[list[list[int]]]]:
        async def decode() -> list[list[int]]:
            return [r.token_ids for r in await serve_concurrently(engine, texts, params)]

        return decode

    def peer(translator: Ct2Seq2Seq) -> Callable[[], Awaitable[list[list[int]]]]:
        async def decode() -> list[list[int]]:
            return translator.greedy(sources, max_new_tokens=BASE_NEW_TOKENS, exact=True)

        return decode

    contenders = {name: measured(name, atento(engine)) for name, engine in engines.items()}
    contenders.update({name: measured(name, peer(translator)) for name, translator in peers.items()})
    try:
        result = await alternate(contenders, rounds=rounds)
    finally:
        for engine in engines.values():
            await engine.stop(timeout_s=30)
    same = {name: share_of_equal_outputs(outputs[name], outputs[FP32]) for name in contenders}
    fastest, fastest_peer = pick_fastest(result.median, same, atento=list(engines), peers=list(peers))

    def detail(name: str, baseline: str) -> str:
        low, high = result.spread(name, baseline)
        return (
            f"rounds {low:.2f}-{high:.2f}; same greedy outputs as fp32 {same[name]:.0%}; "
            f"tok/s {result.median(name):,.0f} vs {result.median(baseline):,.0f}; "
            f"tok per process CPU s {_cpu(cpu_rates, name):,.0f} vs {_cpu(cpu_rates, baseline):,.0f}"
        )

    rates = {name: result.median(name) for name in result.rates}
    figures = []
    fastest_ratio = result.ratio(fastest, fastest_peer)
    figures.append(
        Figure(
            "fastest",
            f"base, batch {BATCH}: atento's fastest way with >= 99% fp32 outputs ({fastest}) / {fastest_peer}",
            fastest_ratio,
            "x",
            detail=detail(fastest, fastest_peer),
            target=f">= {FASTEST_BAR}x",
            passed=fastest_ratio >= FASTEST_BAR,
            rates=rates,
        )
    )
    fp32_peer = max((name for name, peer in peers.items() if peer.compute_type == "float32"), key=result.median)
    fp32 = max((name for name in (FP32, FP32_PROCESSES) if name in engines), key=result.median)
    fp32_ratio = result.ratio(fp32, fp32_peer)
    figures.append(
        Figure(
            "fastest",
            f"base, batch {BATCH}: {fp32} / {fp32_peer}",
            fp32_ratio,
            "x",
            detail=detail(fp32, fp32_peer),
            target=f">= {FP32_BAR}x",
            passed=fp32_ratio >= FP32_BAR,
            rates=rates,
        )
    )
    for name in engines:
        if name not in (fastest, fp32):
            figures.append(
                Figure(
                    "fastest",
                    f"base, batch {BATCH}: {name} / {fastest_peer}",
                    result.ratio(name, fastest_peer),
                    "x",
                    detail=detail(name, fastest_peer),
                )
            )
    return figures


def pick_fastest(
    median: Callable[[str], float], same: dict[str, float], *, atento: Sequence[str], peers: Sequence[str]
) -> tuple[str, str]:
    """atento's fastest way whose outputs equal fp32's on at least 99% of the batch, and the fastest peer."""
    matching = [name for name in atento if same[name] >= SAME_OUTPUTS_BAR]
    return max(matching, key=median), max(peers, key=median)


def _cpu(cpu_rates: dict[str, list[float]], name: str) -> float:
    return statistics.median(cpu_rates[name][1:] or cpu_rates[name])  # the warm-up's left out
