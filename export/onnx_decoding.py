"""The exported graphs run with numpy and onnxruntime: `OnnxSeq2Seq` (the two sessions), a minimal greedy
loop and beam search with the rules of model/decoding.py, and `Differences`, which records how far each
output strays from the PyTorch reference while they run. check_parity (parity.py) drives them.

Imports model/ (the reference) and onnxruntime; never service/.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

from export.graphs import CACHE_INPUTS
from model.config import ModelConfig
from model.transformer import Transformer

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


def torch_encode(model: Transformer, src: np.ndarray, src_mask: np.ndarray) -> dict[str, torch.Tensor]:
    encoded = model.encode(torch.from_numpy(src), torch.from_numpy(src_mask))
    cross_keys, cross_values = model.cross_key_values(encoded.memory)
    return {
        "memory": encoded.memory,
        "cross_keys": cross_keys,
        "cross_values": cross_values,
        "encoder_attention": encoded.attention,
    }


def torch_decode(model: Transformer, feeds: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
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
        differences.update(encoded, torch_encode(reference, src, src_mask))
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
            differences.update(out, torch_decode(reference, feeds))
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
