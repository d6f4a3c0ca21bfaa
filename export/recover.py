"""`python -m export.recover --model-dir models/normalize/1 --out runs/normalize-recovered`: rebuild a
training checkpoint (model.safetensors, config.json, tokenizer.json) from a model directory that
`python -m export` wrote, so a model whose checkpoint is gone can be trained further (`python -m
model.train --init-from DIR`) or exported again.

The exporter keeps a parameter's name on the graph's initializer when it is used as is (biases, norms,
the tied embedding) but stores each linear layer's weight transposed under a generated name (`val_N`),
the right operand of a MatMul whose result goes to an Add with the layer's named bias. The recovery
follows that edge: MatMul(x, W) -> Add(., model.<layer>.bias) gives <layer>.weight = W transposed.
Every parameter of the model must be found exactly once, and the rebuilt model must give the graphs'
logits (checked on a few inputs) before anything is written. The optimizer's moments are not in a
model directory: a recovered checkpoint continues as a new run (--init-from), not as --resume.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

from model.checkpoint import TOKENIZER, save_checkpoint
from model.config import ModelConfig
from model.transformer import Transformer

GRAPHS = ("encoder.onnx", "decoder.onnx")
PARAMETER_PREFIX = "model."
# Logits the rebuilt model and the fp32 graphs may differ by: the export's own parity tolerance.
LOGITS_TOLERANCE = 1e-4


class RecoveryError(Exception):
    """The model directory's graphs do not hold exactly the model's parameters."""


def graph_parameters(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """The parameters one graph holds, under their PyTorch names."""
    initializers = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    found = {
        name.removeprefix(PARAMETER_PREFIX): value
        for name, value in initializers.items()
        if name.startswith(PARAMETER_PREFIX)
    }
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in initializers:
            continue
        weight = initializers[node.input[1]]
        biases = [
            other
            for add in consumers.get(node.output[0], [])
            if add.op_type == "Add"
            for other in add.input
            if other.startswith(PARAMETER_PREFIX) and other.endswith(".bias")
        ]
        if len(biases) != 1 or weight.ndim != 2:
            continue
        layer = biases[0].removeprefix(PARAMETER_PREFIX).removesuffix(".bias")
        found[f"{layer}.weight"] = np.ascontiguousarray(weight.T)
    return found


def recover_model(model_dir: Path) -> tuple[Transformer, dict[str, Any]]:
    manifest = json.loads((model_dir / "manifest.json").read_text())
    config = ModelConfig.from_dict(manifest["config"])
    model = Transformer(config)
    expected = model.state_dict()
    found: dict[str, np.ndarray] = {}
    for graph_file in GRAPHS:
        for name, value in graph_parameters(onnx.load(str(model_dir / graph_file)).graph).items():
            if name in found and not np.array_equal(found[name], value):
                raise RecoveryError(f"{name} differs between the graphs")
            found[name] = value
    if config.share_embeddings and "output_projection.weight" in found:
        found.setdefault("embedding.weight", found["output_projection.weight"])
    missing = sorted(set(expected) - set(found))
    if missing:
        raise RecoveryError(f"{model_dir}: parameters not found in the graphs: {missing[:6]}")
    state: dict[str, torch.Tensor] = {}
    for name, tensor in expected.items():
        held = found[name]
        if tuple(held.shape) != tuple(tensor.shape):
            raise RecoveryError(f"{name}: the graphs hold {tuple(held.shape)}, the model needs {tuple(tensor.shape)}")
        state[name] = torch.from_numpy(held.copy())
    model.load_state_dict(state)
    model.eval()
    return model, manifest


def largest_logits_difference(model: Transformer, model_dir: Path, sources: Sequence[Sequence[int]]) -> float:
    """Teacher-forced logits of the rebuilt model against the fp32 graphs, on `sources` fed back as targets."""
    encoder = ort.InferenceSession(str(model_dir / "encoder.onnx"), providers=["CPUExecutionProvider"])
    decoder = ort.InferenceSession(str(model_dir / "decoder.onnx"), providers=["CPUExecutionProvider"])
    layers, heads = model.config.n_decoder_layers, model.config.n_heads
    head_dim = model.config.d_model // heads
    worst = 0.0
    for ids in sources:
        src = np.array([ids], dtype=np.int64)
        src_mask = np.ones_like(src, dtype=bool)
        _, cross_keys, cross_values, _ = encoder.run(None, {"src": src, "src_mask": src_mask})
        tgt = np.array([[model.config.bos_id, *ids[:-1]]], dtype=np.int64)
        empty = np.zeros((1, heads, 0, head_dim), dtype=np.float32)
        feeds = {
            "tgt": tgt,
            "tgt_positions": np.arange(tgt.shape[1], dtype=np.int64)[None, :],
            "self_mask": np.ones_like(tgt, dtype=bool),
            "src_mask": src_mask,
        }
        for i in range(layers):
            feeds[f"past_keys.{i}"] = empty
            feeds[f"past_values.{i}"] = empty
            feeds[f"cross_keys.{i}"] = cross_keys[i]
            feeds[f"cross_values.{i}"] = cross_values[i]
        graph_logits = decoder.run(["logits"], feeds)[0]
        target = torch.from_numpy(tgt)
        with torch.no_grad():
            torch_logits = model(
                torch.from_numpy(src), target, torch.from_numpy(src_mask), torch.ones_like(target, dtype=torch.bool)
            ).numpy()
        worst = max(worst, float(np.abs(graph_logits - torch_logits).max()))
    return worst


def recover_checkpoint(model_dir: Path, out: Path) -> float:
    """Write the checkpoint and return the largest logits difference found while checking it."""
    model, manifest = recover_model(model_dir)
    rng = np.random.default_rng(0)
    special = len(manifest["special_tokens"])
    sources = [
        [*rng.integers(special, model.config.vocab_size, size=int(length)).tolist(), model.config.eos_id]
        for length in (3, 17, 40)
    ]
    difference = largest_logits_difference(model, model_dir, sources)
    if difference > LOGITS_TOLERANCE:
        raise RecoveryError(f"the rebuilt model's logits differ from the graphs' by {difference:.3g}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(model_dir / "tokenizer.json", out / TOKENIZER)
    metadata = {
        "step": 0,
        "recovered_from": str(model_dir),
        "source_checkpoint": manifest.get("checkpoint", {}),
        "logits_max_abs": difference,
        "history": [],
    }
    save_checkpoint(out, model, metadata=metadata)
    return difference


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export.recover", description=__doc__)
    parser.add_argument("--model-dir", type=Path, required=True, help="A model directory python -m export wrote.")
    parser.add_argument("--out", type=Path, required=True, help="The checkpoint directory to write.")
    args = parser.parse_args(argv)
    for name in ("manifest.json", "tokenizer.json", *GRAPHS):
        if not (args.model_dir / name).is_file():
            sys.stderr.write(f"error: {args.model_dir / name} is missing\n")
            return 2
    try:
        difference = recover_checkpoint(args.model_dir, args.out)
    except RecoveryError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    sys.stdout.write(f"{args.out}: recovered from {args.model_dir}; logits within {difference:.2g} of its graphs\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
