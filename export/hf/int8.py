"""int8 for an imported model: export/quantize.py's dynamic quantization applied to the imported graphs, and
its exact match against the fp32 graphs (greedy outputs of the probe sources, token for token, decoded by
both in ONNX Runtime). An imported model has no held-out references of atento's task, so fp32 is the
reference; the variant is kept when the share of identical outputs is at least 1 - the allowed drop.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from export.graphs import check_graph, decoder_input_names
from export.quantize import quantize_int8

logger = logging.getLogger(__name__)


class GreedyOnnx:
    """Greedy decoding of one source at a time through an encoder and a decoder-step graph."""

    def __init__(self, encoder: Path, decoder: Path) -> None:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        self.encoder = ort.InferenceSession(str(encoder), options, providers=["CPUExecutionProvider"])
        self.decoder = ort.InferenceSession(str(decoder), options, providers=["CPUExecutionProvider"])

    def generate(self, source: Sequence[int], *, start: int, eos: int, max_new_tokens: int) -> list[int]:
        src = np.asarray([source], dtype=np.int64)
        mask = np.ones_like(src, dtype=bool)
        _, cross_keys, cross_values, _ = self.encoder.run(None, {"src": src, "src_mask": mask})
        layers, _, heads, _, head_dim = cross_keys.shape
        names = decoder_input_names(layers)[4:]
        keys = [np.zeros((1, heads, 0, head_dim), dtype=np.float32) for _ in range(layers)]
        values = [k.copy() for k in keys]
        token, out = start, []
        for position in range(max_new_tokens):
            feeds: dict[str, Any] = {
                "tgt": np.asarray([[token]], dtype=np.int64),
                "tgt_positions": np.asarray([[position]], dtype=np.int64),
                "self_mask": np.ones((1, position + 1), dtype=bool),
                "src_mask": mask,
            }
            arrays = [*keys, *values, *cross_keys, *cross_values]
            feeds.update({name: np.ascontiguousarray(a) for name, a in zip(names, arrays, strict=True)})
            logits, new_keys, new_values, _, _ = self.decoder.run(None, feeds)
            token = int(logits[0, -1].argmax())
            if token == eos:
                break
            out.append(token)
            keys = [np.concatenate([keys[i], new_keys[i]], axis=2) for i in range(layers)]
            values = [np.concatenate([values[i], new_values[i]], axis=2) for i in range(layers)]
        return out


def int8_variant(
    staging: Path,
    sources: Sequence[Sequence[int]],
    *,
    start: int,
    eos: int,
    max_new_tokens: int,
    max_drop: float,
) -> dict[str, dict[str, Any]]:
    """Quantize both graphs in `staging`; {"int8": manifest entry} when they agree with fp32 often enough,
    else {} (files removed). The agreement is logged and, when kept, recorded in the manifest."""
    encoder, decoder = staging / "encoder.int8.onnx", staging / "decoder.int8.onnx"
    quantize_int8(staging / "encoder.onnx", encoder)
    quantize_int8(staging / "decoder.onnx", decoder)
    check_graph(encoder)
    check_graph(decoder)
    fp32 = GreedyOnnx(staging / "encoder.onnx", staging / "decoder.onnx")
    int8 = GreedyOnnx(encoder, decoder)
    same = sum(
        fp32.generate(s, start=start, eos=eos, max_new_tokens=max_new_tokens)
        == int8.generate(s, start=start, eos=eos, max_new_tokens=max_new_tokens)
        for s in sources
    )
    exact = same / max(len(sources), 1)
    kept = 1.0 - exact <= max_drop
    verdict = "kept" if kept else "dropped"
    logger.info("int8 greedy outputs equal fp32's on %d of %d sources: %s", same, len(sources), verdict)
    if not kept:
        encoder.unlink()
        decoder.unlink()
        return {}
    entry = {"encoder": encoder.name, "decoder": decoder.name, "device": "cpu", "checked": True}
    return {"int8": {**entry, "exact_match_vs_fp32": exact, "inputs": len(sources), "max_new_tokens": max_new_tokens}}
