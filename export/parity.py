"""ONNX Runtime vs the PyTorch reference: a minimal numpy greedy loop and beam search over the
exported graphs, and `check_parity`, used by both the export CLI and the tests. Progress goes to
this module's logger and, on a terminal, to a tqdm bar.

Imports model/ (the reference decoders) and onnxruntime; never service/.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
from tqdm import tqdm

from export.config import ExportConfig
from export.graphs import CACHE_INPUTS
from model.config import ModelConfig
from model.decoding import beam_search, greedy_decode
from model.transformer import Transformer

logger = logging.getLogger(__name__)

STATE_OUTPUTS = ("memory", "cross_keys", "cross_values", "present_keys", "present_values")
ATTENTION_OUTPUTS = ("encoder_attention", "decoder_attention", "cross_attention")


class OnnxSeq2Seq:
    """The encoder and decoder graphs in ONNX Runtime sessions (CPU)."""

    def __init__(self, encoder: Path, decoder: Path, config: ModelConfig, *, threads: int = 1) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        providers = ["CPUExecutionProvider"]
        self.encoder = ort.InferenceSession(str(encoder), options, providers=providers)
        self.decoder = ort.InferenceSession(str(decoder), options, providers=providers)
        self.config = config
        self.name = decoder.name  # the graph a progress bar is checking

    def encode(self, src: np.ndarray, src_mask: np.ndarray) -> dict[str, np.ndarray]:
        names = [o.name for o in self.encoder.get_outputs()]
        return dict(zip(names, self.encoder.run(None, {"src": src, "src_mask": src_mask}), strict=True))

    def decode(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """`Transformer.decode_step`'s stacked feeds in, its present (whole) caches out: the graph takes
        one cache tensor per layer and returns only the new keys/values, appended here."""
        graph_feeds = {name: feeds[name] for name in ("tgt", "tgt_positions", "self_mask", "src_mask")}
        for name in CACHE_INPUTS:
            graph_feeds.update(
                {f"{name}.{layer}": np.ascontiguousarray(cache) for layer, cache in enumerate(feeds[name])}
            )
        names = [o.name for o in self.decoder.get_outputs()]
        out = dict(zip(names, self.decoder.run(None, graph_feeds), strict=True))
        out["present_keys"] = np.concatenate([feeds["past_keys"], out.pop("new_keys")], axis=3)
        out["present_values"] = np.concatenate([feeds["past_values"], out.pop("new_values")], axis=3)
        return out

    def empty_cache(self, batch: int) -> np.ndarray:
        c = self.config
        return np.zeros((c.n_decoder_layers, batch, c.n_heads, 0, c.head_dim), dtype=np.float32)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """float32 log-softmax over the last axis, as the reference computes it."""
    logits = logits.astype(np.float32)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    result: np.ndarray = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return result


def pad_sources(sources: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad token lists into (B, S) int64 ids and their bool real-token mask."""
    width = max(len(s) for s in sources)
    ids = np.full((len(sources), width), pad_id, dtype=np.int64)
    for row, tokens in enumerate(sources):
        ids[row, : len(tokens)] = tokens
    return ids, ids != pad_id


@dataclass
class Differences:
    """Largest absolute ONNX Runtime - PyTorch difference seen per kind of output."""

    logits: float = 0.0
    states: float = 0.0  # encoder memory, cross and self-attention keys/values
    attention: float = 0.0

    def update(self, onnx_outputs: dict[str, np.ndarray], torch_outputs: dict[str, torch.Tensor]) -> None:
        for name, reference in torch_outputs.items():
            difference = float(np.abs(onnx_outputs[name] - reference.numpy()).max(initial=0.0))
            if name == "logits":
                self.logits = max(self.logits, difference)
            elif name in ATTENTION_OUTPUTS:
                self.attention = max(self.attention, difference)
            else:
                self.states = max(self.states, difference)


def _torch_encode(model: Transformer, src: np.ndarray, src_mask: np.ndarray) -> dict[str, torch.Tensor]:
    encoded = model.encode(torch.from_numpy(src), torch.from_numpy(src_mask))
    cross_keys, cross_values = model.cross_key_values(encoded.memory)
    return {
        "memory": encoded.memory,
        "cross_keys": cross_keys,
        "cross_values": cross_values,
        "encoder_attention": encoded.attention,
    }


def _torch_decode(model: Transformer, feeds: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    out = model.decode_step(**{name: torch.from_numpy(value) for name, value in feeds.items()})
    return {
        "logits": out.logits,
        "present_keys": out.present_keys,
        "present_values": out.present_values,
        "decoder_attention": out.self_attention,
        "cross_attention": out.cross_attention,
    }


def onnx_greedy(
    runner: OnnxSeq2Seq,
    sources: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    reference: Transformer | None = None,
    differences: Differences | None = None,
) -> list[tuple[int, ...]]:
    """Greedy decoding with the rules of `model.decoding.greedy_decode`; returns ids without BOS/EOS.

    With `reference` and `differences`, every graph call is repeated in PyTorch on the same inputs
    and the largest differences are recorded.
    """
    c = runner.config
    src, src_mask = pad_sources(sources, c.pad_id)
    batch = src.shape[0]
    encoded = runner.encode(src, src_mask)
    if reference is not None and differences is not None:
        differences.update(encoded, _torch_encode(reference, src, src_mask))
    past_keys = past_values = runner.empty_cache(batch)
    tokens = np.full((batch, 1), c.bos_id, dtype=np.int64)
    generated: list[list[int]] = [[] for _ in range(batch)]
    done = [False] * batch
    for step in range(max_new_tokens):
        feeds = {
            "tgt": tokens,
            "tgt_positions": np.full((batch, 1), step, dtype=np.int64),
            "self_mask": np.ones((batch, step + 1), dtype=bool),
            "past_keys": past_keys,
            "past_values": past_values,
            "cross_keys": encoded["cross_keys"],
            "cross_values": encoded["cross_values"],
            "src_mask": src_mask,
        }
        out = runner.decode(feeds)
        if reference is not None and differences is not None:
            differences.update(out, _torch_decode(reference, feeds))
        past_keys, past_values = out["present_keys"], out["present_values"]
        best = log_softmax(out["logits"][:, -1]).argmax(axis=-1)  # first maximum = lowest id
        for row in range(batch):
            if done[row]:
                continue
            token = int(best[row])
            if token == c.eos_id:
                done[row] = True
            else:
                generated[row].append(token)
        if all(done):
            break
        tokens = best[:, None].astype(np.int64)
    return [tuple(g) for g in generated]


def onnx_beam_search(
    runner: OnnxSeq2Seq,
    source: Sequence[int],
    *,
    num_beams: int,
    max_new_tokens: int,
    length_penalty: float,
) -> tuple[tuple[int, ...], float]:
    """Beam search for one source with the rules of `model.decoding.beam_search`.

    Returns:
        The winning ids (without BOS/EOS) and its length-normalized score.
    """
    c = runner.config
    src, src_mask = pad_sources([source], c.pad_id)
    encoded = runner.encode(src, src_mask)
    past_keys = past_values = runner.empty_cache(1)
    beams: list[tuple[tuple[int, ...], float]] = [((), 0.0)]
    finished: list[tuple[tuple[int, ...], float]] = []
    for step in range(max_new_tokens):
        width = len(beams)
        last = [b[0][-1] if b[0] else c.bos_id for b in beams]
        out = runner.decode(
            {
                "tgt": np.array(last, dtype=np.int64)[:, None],
                "tgt_positions": np.full((width, 1), step, dtype=np.int64),
                "self_mask": np.ones((width, step + 1), dtype=bool),
                "past_keys": past_keys,
                "past_values": past_values,
                "cross_keys": np.repeat(encoded["cross_keys"], width, axis=1),
                "cross_values": np.repeat(encoded["cross_values"], width, axis=1),
                "src_mask": np.repeat(src_mask, width, axis=0),
            }
        )
        # float32 running sums, as the reference adds them in a float32 tensor.
        sums = np.array([b[1] for b in beams], dtype=np.float32)[:, None]
        totals = log_softmax(out["logits"][:, -1]) + sums
        vocab = totals.shape[1]
        # A stable sort of the negated scores keeps ties in (beam, token) order.
        order = np.argsort(-totals.ravel(), kind="stable")[: 2 * num_beams]
        next_beams: list[tuple[tuple[int, ...], float]] = []
        parents: list[int] = []
        for flat in order.tolist():
            parent, token = divmod(flat, vocab)
            total = float(totals[parent, token])
            tokens = beams[parent][0]
            if token == c.eos_id:
                finished.append((tokens, total / (len(tokens) + 1) ** length_penalty))
            else:
                next_beams.append((tokens + (token,), total))
                parents.append(parent)
            if len(next_beams) == num_beams:
                break
        if len(finished) >= num_beams:
            break
        beams = next_beams
        past_keys = out["present_keys"][:, parents]
        past_values = out["present_values"][:, parents]
    else:
        finished.extend((t, s / max(len(t), 1) ** length_penalty) for t, s in beams)
    best = max(range(len(finished)), key=lambda i: (finished[i][1], -i))
    return finished[best]


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
        differences.update(out, _torch_decode(model, feeds))
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
