"""Benchmark 2: atento's engine against peers on the same weights, greedy, batch sizes 1 to 64:
the PyTorch reference (model/decoding.py greedy_decode), CTranslate2, and - to tell the engine's
overhead from the graphs' cost - a plain loop over the engine's own OnnxRunner without the scheduler.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import torch

from bench.ct2 import Ct2Seq2Seq
from bench.hardware import flops_per_token
from bench.models import BenchModel
from bench.report import Figure
from bench.workload import Alternated, alternate, make_engine, serve_concurrently, share_of_equal_outputs, timed
from model.decoding import greedy_decode
from service.engine import Engine, GenerationParams
from service.engine.model_dir import load_model_directory
from service.engine.runner import EncoderBatch, OnnxRunner

CT2_TYPES = {"fp32": "float32", "int8": "int8", "fp16": "float16"}  # atento variant -> CTranslate2 type


def runner_greedy(
    runner: OnnxRunner,
    sources: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    bos: int,
    eos: int,
    pad: int,
    exact: bool,
) -> list[list[int]]:
    """Greedy decoding straight over OnnxRunner: every row steps until all are done (no scheduler)."""
    cache = runner.encode(EncoderBatch.from_sources(sources, pad_id=pad), attention=False).cache
    tokens = np.full((len(sources), 1), bos, dtype=np.int64)
    generated: list[list[int]] = [[] for _ in sources]
    done = np.zeros(len(sources), dtype=bool)
    for _ in range(max_new_tokens):
        out = runner.decode(tokens, cache, attention=False)
        cache = out.cache
        best = out.logits[:, -1].argmax(axis=-1)
        for row, token in enumerate(best.tolist()):
            if done[row]:
                continue
            if token == eos and not exact:
                done[row] = True
            else:
                generated[row].append(token)
        if done.all():
            break
        tokens = best[:, None].astype(np.int64)
    return generated


async def compare(
    model: BenchModel,
    engine: Engine,
    texts: Sequence[str],
    *,
    batch_sizes: Sequence[int],
    max_new_tokens: int,
    exact: bool,
    rounds: int,
    variant: str = "fp32",
) -> list[Figure]:
    """Alternate atento / CTranslate2 / (fp32: PyTorch) / the plain runner loop at each batch size."""
    # As /generate without details and CTranslate2's return_scores=False: no per-token softmax.
    params = GenerationParams(max_new_tokens=max_new_tokens, token_logprobs=False)
    compute_type = CT2_TYPES[variant]
    ct2 = Ct2Seq2Seq(
        model.ct2_dirs.get(compute_type, model.ct2_dirs["float32"]),
        model.vocabulary,
        compute_type=compute_type,
        device=engine.device,
    )
    files = load_model_directory(model.model_dir, variant=variant)
    runner = OnnxRunner(files, runtime=engine.runtime, device=engine.device)
    label = f"{model.name} {variant}" + ("" if engine.device == "cpu" else f" {engine.device}")
    figures: list[Figure] = []
    for batch in batch_sizes:
        batch_texts = list(texts[:batch])
        sources = [engine.tokenize(t)[0] for t in batch_texts]
        atento_out = [r.token_ids for r in await serve_concurrently(engine, batch_texts, params)]
        if exact and any(len(o) != max_new_tokens for o in atento_out):
            raise RuntimeError(f"{label}: atento did not generate exactly {max_new_tokens} tokens")
        decoders = _decoders(
            model,
            ct2,
            runner,
            files.special_tokens,
            sources,
            max_new_tokens=max_new_tokens,
            exact=exact,
            with_torch=variant == "fp32" and engine.device == "cpu",
        )
        same = {name: share_of_equal_outputs(atento_out, decode()) for name, decode in decoders.items()}
        reps = max(1, 8 // batch)  # small batches: several per round, so a round lasts long enough
        contenders = {"atento": _atento(engine, batch_texts, params, reps)}
        contenders.update({name: timed(_repeated(decode, reps)) for name, decode in decoders.items()})
        result = await alternate(contenders, rounds=rounds)
        # FLOPs per counted token: the EOS step costs a decoder step but is not a generated token.
        steps = statistics.mean(len(o) + (not exact) for o in atento_out)
        work = (
            flops_per_token(files.config, source_len=statistics.mean(map(len, sources)), new_tokens=steps)
            * steps
            / statistics.mean(map(len, atento_out))
        )
        figures += _figures(result, label=label, batch=batch, same=same, work=work)
    return figures


def _decoders(
    model: BenchModel,
    ct2: Ct2Seq2Seq,
    runner: OnnxRunner,
    special: dict[str, int],
    sources: list[list[int]],
    *,
    max_new_tokens: int,
    exact: bool,
    with_torch: bool,
) -> dict[str, Callable[[], list[list[int]]]]:
    """The peers, each decoding `sources` greedily and returning the generated ids."""
    decoders: dict[str, Callable[[], list[list[int]]]] = {
        "ctranslate2": lambda: ct2.greedy(sources, max_new_tokens=max_new_tokens, exact=exact),
        "runner loop": lambda: runner_greedy(
            runner,
            sources,
            max_new_tokens=max_new_tokens,
            bos=special["bos"],
            eos=special["eos"],
            pad=special["pad"],
            exact=exact,
        ),
    }
    if with_torch:  # exact needs no special case: the base model cannot emit EOS (bench/models.py)
        decoders["pytorch"] = lambda: [
            list(h.tokens) for h in greedy_decode(model.torch_model, sources, max_new_tokens=max_new_tokens)
        ]
    return decoders


def _repeated(decode: Callable[[], list[list[int]]], reps: int) -> Callable[[], int]:
    return lambda: sum(sum(map(len, decode())) for _ in range(reps))


def _atento(engine: Engine, texts: list[str], params: GenerationParams, reps: int) -> Callable[[], Awaitable[float]]:
    async def run() -> float:
        tokens = 0
        started = time.perf_counter()
        for _ in range(reps):
            tokens += sum(len(r.token_ids) for r in await serve_concurrently(engine, texts, params))
        return tokens / (time.perf_counter() - started)

    return run


def _figures(result: Alternated, *, label: str, batch: int, same: dict[str, float], work: float) -> list[Figure]:
    rates = ", ".join(f"{name} {result.median(name):,.0f}" for name in result.rates)
    figures = []
    for peer in ("ctranslate2", "pytorch"):
        if peer not in result.rates:
            continue
        low, high = result.spread("atento", peer)
        bar = ">= 0.9x" if (peer == "ctranslate2" and batch == 32 and label.startswith("base fp32")) else ""
        value = result.ratio("atento", peer)
        figures.append(
            Figure(
                "peers",
                f"{label}: atento / {peer}, batch {batch}",
                value,
                "x",
                detail=f"rounds {low:.2f}-{high:.2f}; same greedy outputs {same[peer]:.0%}; tok/s: {rates}",
                target=bar,
                passed=(value >= 0.9) if bar else None,
                rates={n: result.median(n) for n in result.rates},
                flops_per_token=work,
            )
        )
    low, high = result.spread("runner loop", "ctranslate2")
    figures.append(
        Figure(
            "peers",
            f"{label}: plain OnnxRunner loop / ctranslate2, batch {batch}",
            result.ratio("runner loop", "ctranslate2"),
            "x",
            detail=f"rounds {low:.2f}-{high:.2f}",
        )
    )
    return figures


async def run(
    models: Sequence[tuple[BenchModel, list[str], int, bool]],
    *,
    batch_sizes: Sequence[int],
    rounds: int,
    decoder_spinning: bool | None = None,
    int8_batch: int = 32,
) -> list[Figure]:
    """Every model at every batch size in fp32, then int8 (against CTranslate2 int8) at `int8_batch`."""
    torch.set_num_threads(2)
    figures: list[Figure] = []
    for model, texts, max_new_tokens, exact in models:
        for variant, sizes in (("fp32", batch_sizes), ("int8", [int8_batch])):
            engine = make_engine(
                model.model_dir, max_batch_size=max(sizes), variant=variant, decoder_spinning=decoder_spinning
            )
            await engine.start()
            try:
                figures += await compare(
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
    return figures
