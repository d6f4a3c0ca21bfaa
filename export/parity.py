"""ONNX Runtime vs the PyTorch reference: `check_parity` (greedy and beam search over held-out inputs, each
output against the reference) and `exact_match`, used by both the export CLI and the tests; the ONNX-side
decoding they run is export/onnx_decoding.py. Progress goes to
this module's logger and, on a terminal, to a tqdm bar.

Imports model/ (the reference decoders) and onnxruntime; never service/.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from export.config import ExportConfig
from export.onnx_decoding import Differences, OnnxSeq2Seq, onnx_beam_search, onnx_greedy, pad_sources, torch_decode
from model.decoding import beam_search, greedy_decode
from model.transformer import Transformer

logger = logging.getLogger(__name__)

__all__ = ["OnnxSeq2Seq", "ParityReport", "check_parity", "exact_match", "onnx_greedy"]


def _check_prefix(
    runner: OnnxSeq2Seq,
    model: Transformer,
    sources: Sequence[Sequence[int]],
    prefixes: Sequence[Sequence[int]],
    differences: Differences,
) -> None:
    """Teacher-force whole target prefixes, left-padded, in two calls: the first half against an
    empty cache, the rest against the cache the first call returned (T > 1 and P > 0)."""
    c = runner.config
    src, src_mask = pad_sources(sources, c.pad_id)
    encoded = runner.encode(src, src_mask)
    rows = [[c.bos_id, *prefix] for prefix in prefixes]
    width = max(len(r) for r in rows)
    batch = len(rows)
    tgt = np.full((batch, width), c.pad_id, dtype=np.int64)
    positions = np.zeros((batch, width), dtype=np.int64)
    for row, tokens in enumerate(rows):
        tgt[row, width - len(tokens) :] = tokens
        positions[row, width - len(tokens) :] = np.arange(len(tokens))
    self_mask = np.zeros((batch, width), dtype=bool)
    for row, tokens in enumerate(rows):
        self_mask[row, width - len(tokens) :] = True
    split = max(1, width // 2)
    past_keys = past_values = runner.empty_cache(batch)
    for start, stop in ((0, split), (split, width)):
        if start == stop:
            continue
        feeds = {
            "tgt": tgt[:, start:stop],
            "tgt_positions": positions[:, start:stop],
            "self_mask": self_mask[:, :stop],
            "past_keys": past_keys,
            "past_values": past_values,
            "cross_keys": encoded["cross_keys"],
            "cross_values": encoded["cross_values"],
            "src_mask": src_mask,
        }
        feeds = {name: np.ascontiguousarray(value) for name, value in feeds.items()}
        out = runner.decode(feeds)
        differences.update(out, torch_decode(model, feeds))
        past_keys, past_values = out["present_keys"], out["present_values"]


@dataclass
class ParityReport:
    inputs: int
    batch_sizes: tuple[int, ...]
    beam_inputs: int
    num_beams: int
    max_new_tokens: int
    logits_max_abs: float
    states_max_abs: float
    attention_max_abs: float
    greedy_equal: bool
    beam_equal: bool
    greedy_mismatches: int
    beam_mismatches: int
    atol_logits: float
    atol_attention: float
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_manifest(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "batch_sizes": list(self.batch_sizes),
            "beam_inputs": self.beam_inputs,
            "num_beams": self.num_beams,
            "max_new_tokens": self.max_new_tokens,
            "logits_max_abs": self.logits_max_abs,
            "states_max_abs": self.states_max_abs,
            "attention_max_abs": self.attention_max_abs,
            "greedy_equal": self.greedy_equal,
            "beam_equal": self.beam_equal,
            "atol_logits": self.atol_logits,
            "atol_attention": self.atol_attention,
        }


def _batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


@torch.no_grad()
def check_parity(
    model: Transformer,
    runner: OnnxSeq2Seq,
    sources: Sequence[Sequence[int]],
    references: Sequence[Sequence[int]],
    config: ExportConfig,
    *,
    max_new_tokens: int,
) -> ParityReport:
    """Hold the fp32 graphs to the PyTorch model.

    Greedy decoding of every source at each of `config.parity_batch_sizes` (the batches mix
    lengths, so they carry padding) and beam search of the first `config.beam_inputs` sources must
    give the reference's token ids; every graph output of every call must be within
    `config.atol_logits` (logits, states) or `config.atol_attention` (probabilities) of PyTorch run
    on the same inputs. Prefix calls (T > 1, left-padded, with and without a cache) are checked too.

    Args:
        model: the PyTorch reference, in eval mode.
        runner: sessions over the exported graphs.
        sources: token ids, EOS included, at most the manifest's source length.
        references: the expected target ids per source, teacher-forced in the prefix check.
        config: the tolerances and sizes.
        max_new_tokens: the decoding cap for both implementations.

    Returns:
        A `ParityReport`; `failures` names every violated requirement.
    """
    differences = Differences()
    greedy_mismatches = 0
    beam_sources = sources[: config.beam_inputs]
    logger.info(
        "parity: greedy decoding of %d inputs at batch sizes %s, their prefixes, %d beam searches "
        "(fewer: --quick-parity, --parity-inputs, --beam-inputs)",
        len(sources),
        ", ".join(map(str, config.parity_batch_sizes)),
        len(beam_sources),
    )
    total = len(sources) * (len(config.parity_batch_sizes) + 1) + len(beam_sources)
    with tqdm(total=total, desc="parity", unit="input", disable=None) as progress:  # disable=None: off a TTY
        for size in config.parity_batch_sizes:
            progress.set_description(f"parity: greedy, batch {size}")
            for chunk in _batches(sources, size):
                expected = greedy_decode(model, [list(s) for s in chunk], max_new_tokens=max_new_tokens)
                got = onnx_greedy(
                    runner, chunk, max_new_tokens=max_new_tokens, reference=model, differences=differences
                )
                greedy_mismatches += sum(e.tokens != g for e, g in zip(expected, got, strict=True))
                progress.update(len(chunk))
        progress.set_description("parity: prefixes")
        for chunk_sources, chunk_references in zip(_batches(sources, 16), _batches(references, 16), strict=True):
            prefixes = [list(r)[: max_new_tokens - 1] for r in chunk_references]
            _check_prefix(runner, model, chunk_sources, prefixes, differences)
            progress.update(len(chunk_sources))
        progress.set_description(f"parity: beam search, {config.num_beams} beams")
        beam_mismatches = 0
        for source in beam_sources:
            expected_beam = beam_search(
                model,
                list(source),
                num_beams=config.num_beams,
                max_new_tokens=max_new_tokens,
                length_penalty=config.length_penalty,
            )
            tokens, _ = onnx_beam_search(
                runner,
                source,
                num_beams=config.num_beams,
                max_new_tokens=max_new_tokens,
                length_penalty=config.length_penalty,
            )
            beam_mismatches += expected_beam.tokens != tokens
            progress.update()
    failures = []
    if differences.logits > config.atol_logits:
        failures.append(f"logits differ by {differences.logits:.3g} > {config.atol_logits:g}")
    if differences.states > config.atol_logits:
        failures.append(f"hidden states differ by {differences.states:.3g} > {config.atol_logits:g}")
    if differences.attention > config.atol_attention:
        failures.append(f"attention differs by {differences.attention:.3g} > {config.atol_attention:g}")
    if greedy_mismatches:
        failures.append(f"greedy decoding differs on {greedy_mismatches} decodes")
    if beam_mismatches:
        failures.append(f"beam search differs on {beam_mismatches} of {len(beam_sources)} sources")
    return ParityReport(
        inputs=len(sources),
        batch_sizes=tuple(config.parity_batch_sizes),
        beam_inputs=len(beam_sources),
        num_beams=config.num_beams,
        max_new_tokens=max_new_tokens,
        logits_max_abs=differences.logits,
        states_max_abs=differences.states,
        attention_max_abs=differences.attention,
        greedy_equal=not greedy_mismatches,
        beam_equal=not beam_mismatches,
        greedy_mismatches=greedy_mismatches,
        beam_mismatches=beam_mismatches,
        atol_logits=config.atol_logits,
        atol_attention=config.atol_attention,
        failures=failures,
    )


def exact_match(
    runner: OnnxSeq2Seq,
    sources: Sequence[Sequence[int]],
    references: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    batch_size: int = 16,
) -> float:
    """Share of sources whose greedy ONNX decoding equals the reference target exactly."""
    hits = 0
    chunks = zip(_batches(sources, batch_size), _batches(references, batch_size), strict=True)
    with tqdm(total=len(sources), desc=f"exact match: {runner.name}", unit="input", disable=None) as progress:
        for chunk_sources, chunk_references in chunks:
            got = onnx_greedy(runner, chunk_sources, max_new_tokens=max_new_tokens)
            hits += sum(tuple(r) == g for r, g in zip(chunk_references, got, strict=True))
            progress.update(len(chunk_sources))
    return hits / max(len(sources), 1)
