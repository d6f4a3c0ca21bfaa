"""The imported graphs against the transformers model they wrap: teacher-forced logits and the three
kinds of attention on a padded batch, once over the whole prefix and once step by step beside the
cache, in ONNX Runtime. Imports transformers' model object only through the checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch

from export.graphs import decoder_input_names


@dataclass(frozen=True)
class ImportParity:
    logits_max_abs: float
    attention_max_abs: float
    atol_logits: float
    atol_attention: float

    @property
    def passed(self) -> bool:
        return self.logits_max_abs <= self.atol_logits and self.attention_max_abs <= self.atol_attention

    def to_manifest(self) -> dict[str, Any]:
        return {
            "reference": "transformers",
            "logits_max_abs": self.logits_max_abs,
            "attention_max_abs": self.attention_max_abs,
            "atol_logits": self.atol_logits,
            "atol_attention": self.atol_attention,
            "passed": self.passed,
        }


def _batch(vocab: int, pad: int, start: int, *, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Four sources of lengths 9, 5, 2, 7 (right-padded) and four targets of 6 tokens after the start."""
    generator = torch.Generator().manual_seed(seed)
    lengths = [9, 5, 2, 7]
    src = torch.randint(0, vocab, (4, max(lengths)), generator=generator)
    src = torch.where(src == pad, (pad + 1) % vocab, src)
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    src = torch.where(mask, src, pad)
    tgt = torch.randint(0, vocab, (4, 7), generator=generator)
    tgt = torch.where(tgt == pad, (pad + 1) % vocab, tgt)
    tgt[:, 0] = start
    return src, mask, tgt


def check_import(
    model: Any, encoder: Path, decoder: Path, *, pad: int, start: int, atol_logits: float, atol_attention: float
) -> ImportParity:
    """Max absolute differences between ONNX Runtime and `model` (eager, output_attentions=True)."""
    src, mask, tgt = _batch(int(model.get_output_embeddings().weight.shape[0]), pad, start, seed=0)
    with torch.no_grad():
        ref = model(
            input_ids=src, attention_mask=mask.long(), decoder_input_ids=tgt, output_attentions=True, use_cache=False
        )
    options = ort.SessionOptions()
    options.log_severity_level = 3
    enc = ort.InferenceSession(str(encoder), options, providers=["CPUExecutionProvider"])
    dec = ort.InferenceSession(str(decoder), options, providers=["CPUExecutionProvider"])
    _, cross_keys, cross_values, encoder_attention = enc.run(None, {"src": src.numpy(), "src_mask": mask.numpy()})
    layers = cross_keys.shape[0]
    names = decoder_input_names(layers)
    batch, heads = src.shape[0], cross_keys.shape[2]
    head_dim = cross_keys.shape[4]

    def run(
        tokens: np.ndarray, positions: np.ndarray, past_keys: list[np.ndarray], past_values: list[np.ndarray]
    ) -> Any:
        past = past_keys[0].shape[2]
        feeds = {
            "tgt": tokens,
            "tgt_positions": positions,
            "self_mask": np.ones((batch, past + tokens.shape[1]), dtype=bool),
            "src_mask": mask.numpy(),
        }
        arrays = [*past_keys, *past_values, *cross_keys, *cross_values]
        feeds.update({name: np.ascontiguousarray(a) for name, a in zip(names[4:], arrays, strict=True)})
        return dec.run(None, feeds)

    full = tgt.numpy()
    positions = np.broadcast_to(np.arange(full.shape[1]), full.shape).copy()
    empty = [np.zeros((batch, heads, 0, head_dim), dtype=np.float32)] * layers
    logits, _, _, self_attention, cross_attention = run(full, positions, empty, empty)
    # Step by step beside the cache: the first 3 tokens at once, then one at a time.
    step_logits = []
    first = run(full[:, :3], positions[:, :3], empty, empty)
    step_logits.append(first[0])
    keys, values = first[1], first[2]
    cache_k, cache_v = [keys[i] for i in range(layers)], [values[i] for i in range(layers)]
    for t in range(3, full.shape[1]):
        out = run(full[:, t : t + 1], positions[:, t : t + 1], cache_k, cache_v)
        step_logits.append(out[0])
        cache_k = [np.concatenate([cache_k[i], out[1][i]], axis=2) for i in range(layers)]
        cache_v = [np.concatenate([cache_v[i], out[2][i]], axis=2) for i in range(layers)]
    stepped = np.concatenate(step_logits, axis=1)
    want = ref.logits.numpy()
    real = mask.numpy()
    logits_diff = max(float(np.abs(logits - want).max()), float(np.abs(stepped - want).max()))
    attention_diff = 0.0
    for layer in range(len(ref.encoder_attentions)):  # padded query rows aside: transformers' are averages
        got, exp = encoder_attention[layer], ref.encoder_attentions[layer].numpy()
        attention_diff = max(attention_diff, float(np.abs((got - exp) * real[:, None, :, None]).max()))
    for layer in range(layers):
        attention_diff = max(
            attention_diff,
            float(np.abs(self_attention[layer] - ref.decoder_attentions[layer].numpy()).max()),
            float(np.abs(cross_attention[layer] - ref.cross_attentions[layer].numpy()).max()),
        )
    return ImportParity(logits_diff, attention_diff, atol_logits, atol_attention)
