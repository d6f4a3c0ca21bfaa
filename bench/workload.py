"""Driving an Engine the way clients do: a closed loop of N concurrent clients, static batches, and
A/B alternation with medians of per-round ratios. Also the bundled task's input mix.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.engine import AttentionSpec, Engine, EngineClient, GenerationParams, GenerationResult
from service.engine.settings import BatchingSettings, RuntimeSettings

INPUTS = Path(__file__).resolve().parent.parent / "deploy" / "loadtest" / "inputs.tsv"
THREADS = 2  # onnxruntime intra-op, CTranslate2 intra and torch threads alike: the machine's cores


def bundled_texts(count: int, *, path: Path = INPUTS) -> list[str]:
    """`count` sources from the bundled task's mix (deploy/loadtest/inputs.tsv), cycling."""
    sources = [line.split("\t", 1)[0] for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [sources[i % len(sources)] for i in range(count)]


@dataclass
class Run:
    """One measured run: generated tokens (EOS excluded) and requests over wall time."""

    tokens: int
    requests: int
    elapsed_s: float
    results: list[GenerationResult] = field(default_factory=list, repr=False)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.elapsed_s


def make_engine(
    model_dir: Path,
    *,
    max_batch_size: int,
    variant: str | None = None,
    device: str = "cpu",
    threads: int = THREADS,
    max_wait_ms: float = 0.0,
    decoder_spinning: bool | None = None,
    runtime: dict[str, object] | None = None,
    lanes: int = 1,
    draft_tokens: int = 0,
    processes: int = 1,
    service_gc: bool = True,
) -> EngineClient:
    """An engine configured as `python -m service` runs one, except the batch limits: its sessions share
    the process's thread pool. `decoder_spinning` True or False gives each session a pool of its own,
    the decoder's spinning as said (in a process where the shared pool exists, onnxruntime refuses);
    `runtime` overrides any other RuntimeSettings field; `lanes` batches of max_batch_size / lanes rows each;
    `draft_tokens` as BatchingSettings.draft_tokens; `processes` engine processes (BatchingSettings.processes),
    each with `threads` onnxruntime threads; `service_gc` this process's garbage collection as `python -m service`
    schedules it (collect_as_the_service_does), False: CPython's."""
    settings = RuntimeSettings(intra_op_threads=threads, shared_thread_pool=True)
    if decoder_spinning is not None:
        settings = settings.model_copy(update={"shared_thread_pool": False, "decoder_allow_spinning": decoder_spinning})
    if runtime:
        settings = RuntimeSettings.model_validate({**settings.model_dump(), **runtime})
    if service_gc:
        collect_as_the_service_does()
    kind: Any = Engine
    if processes != 1:  # imported only then: bench.trees runs this module against older trees too
        from service.engine.replicas import ReplicatedEngine

        kind = ReplicatedEngine
    return kind(
        model_dir,
        variant=variant,
        device=device,
        runtime=settings,
        batching=BatchingSettings(
            max_batch_size=max_batch_size,
            max_queue=4096,
            max_wait_ms=max_wait_ms,
            max_tokens_in_flight=10**9,
            # Only when asked: bench.trees runs this module against older trees' settings, without lanes.
            **({"lanes": lanes} if lanes != 1 else {}),
            **({"draft_tokens": draft_tokens} if draft_tokens else {}),
            **({"processes": processes} if processes != 1 else {}),
        ),
    )


def collect_as_the_service_does() -> bool:
    """`python -m service`'s garbage collection schedule in this process (service.engine.collector; its engine
    processes set their own), where the tree measured has one; False for an older tree: CPython's, as its service."""
    try:
        from service.engine.collector import collect_less_often
    except ImportError:
        return False
    collect_less_often()
    return True


def process_cpu_s() -> float:
    """CPU seconds of this process and of its running children (engine processes), every thread of each."""
    total = 0.0
    for pid in ["self", *(str(child.pid) for child in multiprocessing.active_children())]:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    return total


def generate_request(params_type: Any, *, token_logprobs: bool) -> Any:
    """The request `POST /generate` makes by default: greedy, max_new_tokens 64 here, and no per-token
    log-probabilities unless asked (`details`). A tree whose GenerationParams has no `token_logprobs` (845a98d,
    before issue 21) computed them for every request whatever was asked."""
    if "token_logprobs" in {f.name for f in dataclasses.fields(params_type)}:
        return params_type(max_new_tokens=64, token_logprobs=token_logprobs)
    return params_type(max_new_tokens=64)


async def closed_loop(
    engine: EngineClient,
    texts: Sequence[str],
    params: GenerationParams,
    *,
    concurrency: int,
    attention: AttentionSpec | None = None,
) -> Run:
    """`concurrency` clients, each sending its next text as soon as its previous one finished
    (continuous batching lets it join the running batch at the next step)."""
    queue = list(reversed(range(len(texts))))
    results: list[GenerationResult | None] = [None] * len(texts)

    async def client() -> None:
        while queue:
            index = queue.pop()
            results[index] = await engine.submit(texts[index], params, attention=attention, stream=False).result()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return _run([r for r in results if r is not None], time.perf_counter() - started)  # in the texts' order


async def static_batches(
    engine: EngineClient, texts: Sequence[str], params: GenerationParams, *, batch_size: int
) -> Run:
    """Static batching: wait for a full batch, run it to completion, only then start the next one."""
    results: list[GenerationResult] = []
    started = time.perf_counter()
    for start in range(0, len(texts), batch_size):
        handles = [engine.submit(t, params, stream=False) for t in texts[start : start + batch_size]]
        results += await asyncio.gather(*(h.result() for h in handles))
    return _run(results, time.perf_counter() - started)


async def all_at_once(
    engine: EngineClient, texts: Sequence[str], params: GenerationParams, *, attention: AttentionSpec | None = None
) -> Run:
    """Every text submitted at once (a batch of len(texts) when max_batch_size allows it)."""
    started = time.perf_counter()
    handles = [engine.submit(t, params, attention=attention) for t in texts]
    results = list(await asyncio.gather(*(h.result() for h in handles)))
    return _run(results, time.perf_counter() - started)


async def serve_one_at_a_time(
    engine: EngineClient, inputs: Sequence[str], params: GenerationParams
) -> list[GenerationResult]:
    """Each input submitted once the previous one finished: the baseline continuous batching is measured against."""
    return [await engine.submit(text, params, stream=False).result() for text in inputs]


async def serve_concurrently(
    engine: EngineClient, inputs: Sequence[str], params: GenerationParams
) -> list[GenerationResult]:
    """Every input submitted at once; the results in the inputs' order."""
    handles = [engine.submit(text, params, stream=False) for text in inputs]
    return list(await asyncio.gather(*(h.result() for h in handles)))


def _run(results: list[GenerationResult], elapsed: float) -> Run:
    return Run(sum(len(r.token_ids) for r in results), len(results), elapsed, results)


@dataclass
class Alternated:
    """Per-round rates (tokens/s) of each contender, measured A, B, A, B, ... in one process."""

    rates: dict[str, list[float]]

    def median(self, name: str) -> float:
        return statistics.median(self.rates[name])

    def ratio(self, name: str, baseline: str) -> float:
        """Median over rounds of rate(name) / rate(baseline) in the same round."""
        return statistics.median(a / b for a, b in zip(self.rates[name], self.rates[baseline], strict=True))

    def spread(self, name: str, baseline: str) -> tuple[float, float]:
        ratios = [a / b for a, b in zip(self.rates[name], self.rates[baseline], strict=True)]
        return min(ratios), max(ratios)


async def alternate(contenders: dict[str, Callable[[], Awaitable[float]]], *, rounds: int) -> Alternated:
    """Run each contender once per round, in turn (the order flips every round), after one warm-up."""
    names = list(contenders)
    for name in names:
        await contenders[name]()
    rates: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(rounds):
        for name in names if round_index % 2 == 0 else reversed(names):
            rates[name].append(await contenders[name]())
    return Alternated(rates)


def share_of_equal_outputs(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> float:
    """The share of rows whose token ids are equal in `a` and `b` (the same inputs, two ways of decoding)."""
    return sum(list(x) == list(y) for x, y in zip(a, b, strict=True)) / len(a)


def timed(function: Callable[[], int]) -> Callable[[], Awaitable[float]]:
    """A synchronous tokens-producing call as an alternate() contender (tokens/s)."""

    async def run() -> float:
        started = time.perf_counter()
        tokens = function()
        return tokens / (time.perf_counter() - started)

    return run
