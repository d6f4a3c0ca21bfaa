"""Benchmark `--marian`: an imported Hugging Face model served by atento against CTranslate2 on the same
checkpoint. A base-size Marian (OPUS-MT's shape: d_model 512, 6 + 6 layers, 8 heads, feed-forward 2048, a
58,101-entry vocabulary) with random weights is built offline from MarianConfig, imported by
`python -m export --from-transformers` and converted by CTranslate2's own TransformersConverter from the
same directory; both decode the same sources greedily (checked equal), fp32 and int8, at batch 1, 8, 32, in
tokens per wall second and per CPU second of the process (the figure that holds on a shared machine).
"""

from __future__ import annotations

import io
import json
import logging
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.report import Figure
from bench.workload import THREADS, alternate, make_engine, serve_concurrently
from service.engine import GenerationParams

logger = logging.getLogger(__name__)

OPUS_MT_VOCAB = 58_101  # Helsinki-NLP/opus-mt-en-de's vocab_size
SENTENCES = Path(__file__).resolve().parents[1] / "model" / "sentences"
NEW_TOKENS = 32


@dataclass(frozen=True)
class MarianSize:
    d_model: int
    layers: int
    heads: int
    ffn: int
    vocab_size: int


SIZES = {"base": MarianSize(512, 6, 8, 2048, OPUS_MT_VOCAB), "tiny": MarianSize(32, 2, 4, 64, 600)}


def corpus() -> list[str]:
    lines = []
    for name in ("plain_en", "plain_es", "number_en", "date_en"):
        lines += [line.strip() for line in (SENTENCES / f"{name}.txt").read_text().splitlines() if line.strip()]
    return lines


def build_marian(directory: Path, size: MarianSize, *, seed: int = 0) -> Path:
    """A random Marian in OPUS-MT's layout: a SentencePiece model trained here as source.spm and target.spm,
    vocab.json (</s>, <unk>, the pieces, unused fillers up to the vocabulary size, <pad> last). EOS and <pad>
    are kept out of reach (final_logits_bias), so both runtimes generate exactly NEW_TOKENS tokens."""
    import sentencepiece as spm
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    directory.mkdir(parents=True, exist_ok=True)
    model_bytes = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus()),
        model_writer=model_bytes,
        vocab_size=min(500, size.vocab_size // 2),
        model_type="unigram",
        character_coverage=1.0,
        minloglevel=2,
        num_threads=1,
    )
    for name in ("source.spm", "target.spm"):
        (directory / name).write_bytes(model_bytes.getvalue())
    processor = spm.SentencePieceProcessor(model_proto=model_bytes.getvalue())
    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1}
    for i in range(processor.get_piece_size()):
        if not processor.is_control(i) and processor.id_to_piece(i) not in vocab:
            vocab[processor.id_to_piece(i)] = len(vocab)
    while len(vocab) < size.vocab_size - 1:
        vocab[f"\u2581unused{len(vocab)}"] = len(vocab)
    pad = vocab["<pad>"] = len(vocab)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (directory / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "MarianTokenizer"}))
    torch.manual_seed(seed)
    config = MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        d_model=size.d_model,
        encoder_layers=size.layers,
        decoder_layers=size.layers,
        encoder_attention_heads=size.heads,
        decoder_attention_heads=size.heads,
        encoder_ffn_dim=size.ffn,
        decoder_ffn_dim=size.ffn,
        max_position_embeddings=512,
        activation_function="swish",
        scale_embedding=True,
        pad_token_id=pad,
        eos_token_id=0,
        decoder_start_token_id=pad,
        forced_eos_token_id=None,
    )
    model = MarianMTModel(config).eval()
    with torch.no_grad():
        model.final_logits_bias[0, 0] = -1e4  # EOS
        model.final_logits_bias[0, pad] = -1e4
    model.generation_config = GenerationConfig(decoder_start_token_id=pad, pad_token_id=pad, eos_token_id=0)
    model.save_pretrained(directory)
    return directory


def prepare(root: Path, size: MarianSize) -> tuple[Path, dict[str, Path], list[str]]:
    """The Hugging Face directory, atento's model directory (fp32 + int8) and CTranslate2's (by compute type)."""
    import ctranslate2
    from transformers import MarianTokenizer

    from export.__main__ import main as export_main

    source = build_marian(root / "hf", size)
    model_dir = root / "models" / "marian" / "1"
    # int8 is kept whatever its agreement with fp32 (random weights: logits close together); the figure says it.
    args = ["--from-transformers", str(source), "--out", str(model_dir), "--force", "--parity-inputs", "32"]
    if export_main([*args, "--int8-max-exact-match-drop", "1.0"]) != 0:
        raise RuntimeError("python -m export --from-transformers failed on the bench's Marian")
    converter = ctranslate2.converters.TransformersConverter(str(source))
    ct2 = {
        "float32": Path(converter.convert(str(root / "ct2-float32"), force=True)),
        "int8": Path(converter.convert(str(root / "ct2-int8"), quantization="int8", force=True)),
    }
    tokenizer = MarianTokenizer.from_pretrained(str(source))
    texts = [t for t in corpus() if 8 <= len(tokenizer(t).input_ids) <= 40]
    return model_dir, ct2, texts


class Ct2Marian:
    def __init__(self, directory: Path, vocabulary: list[str], *, compute_type: str) -> None:
        import ctranslate2

        self.translator = ctranslate2.Translator(
            str(directory), device="cpu", compute_type=compute_type, inter_threads=1, intra_threads=THREADS
        )
        self.vocabulary = vocabulary
        self.ids = {token: i for i, token in enumerate(vocabulary)}

    def greedy(self, sources: list[list[int]]) -> list[list[int]]:
        results = self.translator.translate_batch(
            [[self.vocabulary[i] for i in source] for source in sources],
            beam_size=1,
            max_batch_size=0,
            max_decoding_length=NEW_TOKENS,
            return_scores=False,
        )
        return [[self.ids[t] for t in r.hypotheses[0]] for r in results]


async def run(
    root: Path, *, size: str = "base", batch_sizes: tuple[int, ...] = (1, 8, 32), rounds: int = 3
) -> list[Figure]:
    model_dir, ct2_dirs, texts = prepare(root, SIZES[size])
    vocabulary = _vocabulary(model_dir)
    int8 = json.loads((model_dir / "manifest.json").read_text())["variants"]["int8"]
    figures = [
        Figure(
            "marian",
            f"{size} Marian int8: greedy outputs equal fp32's (the export's check)",
            100 * float(int8["exact_match_vs_fp32"]),
            "%",
            detail=f"{int8['inputs']} probe sources, {int8['max_new_tokens']} new tokens at most",
        )
    ]
    for variant, compute_type in (("fp32", "float32"), ("int8", "int8")):
        ct2 = Ct2Marian(ct2_dirs[compute_type], vocabulary, compute_type=compute_type)
        engine = make_engine(model_dir, max_batch_size=max(batch_sizes), variant=variant)
        await engine.start()
        try:
            for batch in batch_sizes:
                figures.extend(
                    await _compare(
                        engine, ct2, texts[:batch], label=f"{size} Marian {variant}", batch=batch, rounds=rounds
                    )
                )
        finally:
            await engine.stop(timeout_s=30)
    return figures


def _vocabulary(model_dir: Path) -> list[str]:
    from transformers import MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(str(model_dir.parents[2] / "hf"))
    return [str(t) for t in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer.encoder))))]


async def _compare(
    engine: Any, ct2: Ct2Marian, texts: list[str], *, label: str, batch: int, rounds: int
) -> list[Figure]:
    """atento / CTranslate2 in tokens per wall second and in tokens per CPU second, rounds alternated."""
    # As /generate without details and CTranslate2's return_scores=False: no per-token softmax.
    params = GenerationParams(max_new_tokens=NEW_TOKENS, token_logprobs=False)
    sources = [engine.tokenize(t)[0] for t in texts]
    ours = [r.token_ids for r in await serve_concurrently(engine, texts, params)]
    theirs = ct2.greedy(sources)
    same = sum(a == b for a, b in zip(ours, theirs, strict=True)) / len(ours)
    reps = max(1, 8 // batch)

    async def atento_tokens() -> int:
        tokens = 0
        for _ in range(reps):
            tokens += sum(len(r.token_ids) for r in await serve_concurrently(engine, texts, params))
        return tokens

    async def ct2_tokens() -> int:
        return sum(sum(map(len, ct2.greedy(sources))) for _ in range(reps))

    detail = f"same greedy outputs {same:.0%}; mean source {statistics.mean(map(len, sources)):.1f} tokens"
    figures = []
    for clock, unit_name in ((time.perf_counter, "tok/s"), (time.process_time, "tok per CPU s")):
        result = await alternate(
            {"atento": _rate(atento_tokens, clock), "ctranslate2": _rate(ct2_tokens, clock)}, rounds=rounds
        )
        value = result.ratio("atento", "ctranslate2")
        bar = ">= 1.0x" if batch == 32 and "base Marian fp32" in label and unit_name == "tok/s" else ""
        low, high = result.spread("atento", "ctranslate2")
        rates = {n: result.median(n) for n in result.rates}
        per = "" if unit_name == "tok/s" else " per CPU second"
        figures.append(
            Figure(
                "marian",
                f"{label}: atento / ctranslate2{per}, batch {batch}",
                value,
                "x",
                detail=f"rounds {low:.2f}-{high:.2f}; {unit_name}: "
                + ", ".join(f"{n} {r:,.0f}" for n, r in rates.items())
                + f"; {detail}",
                target=bar,
                passed=(value >= 1.0) if bar else None,
                rates=rates,
            )
        )
    return figures


def _rate(run: Callable[[], Awaitable[int]], clock: Callable[[], float]) -> Callable[[], Awaitable[float]]:
    """A tokens-producing call as an alternate() contender: tokens per second of `clock`. time.process_time
    is this process's CPU time over all its threads (onnxruntime's and CTranslate2's pools, the event loop):
    on a shared machine wall time also counts the neighbours' work, CPU time only ours."""

    async def rate() -> float:
        started = clock()
        tokens = await run()
        return tokens / (clock() - started)

    return rate
