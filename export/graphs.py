"""The two ONNX graphs of a model directory: wrappers around `Transformer.encode` +
`cross_key_values` and `Transformer.decode_step`, their export, and the ONNX checks.

Imports model/; the I/O names and shapes are the contract in docs/model-directory.md.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx
import torch
from torch import nn

from model.transformer import Transformer

ENCODER_INPUTS = ("src", "src_mask")
ENCODER_OUTPUTS = ("memory", "cross_keys", "cross_values", "encoder_attention")
DECODER_INPUTS = (
    "tgt",
    "tgt_positions",
    "self_mask",
    "past_keys",
    "past_values",
    "cross_keys",
    "cross_values",
    "src_mask",
)
DECODER_OUTPUTS = ("logits", "present_keys", "present_values", "decoder_attention", "cross_attention")

# Symbolic dimension names written into the graphs and the manifest; "total_len" is past_len + tgt_len.
ENCODER_SHAPES: dict[str, tuple[str, ...]] = {
    "src": ("batch", "src_len"),
    "src_mask": ("batch", "src_len"),
    "memory": ("batch", "src_len", "d_model"),
    "cross_keys": ("layers", "batch", "heads", "src_len", "head_dim"),
    "cross_values": ("layers", "batch", "heads", "src_len", "head_dim"),
    "encoder_attention": ("encoder_layers", "batch", "heads", "src_len", "src_len"),
}
DECODER_SHAPES: dict[str, tuple[str, ...]] = {
    "tgt": ("batch", "tgt_len"),
    "tgt_positions": ("batch", "tgt_len"),
    "self_mask": ("batch", "total_len"),
    "past_keys": ("layers", "batch", "heads", "past_len", "head_dim"),
    "past_values": ("layers", "batch", "heads", "past_len", "head_dim"),
    "cross_keys": ("layers", "batch", "heads", "src_len", "head_dim"),
    "cross_values": ("layers", "batch", "heads", "src_len", "head_dim"),
    "src_mask": ("batch", "src_len"),
    "logits": ("batch", "tgt_len", "vocab"),
    "present_keys": ("layers", "batch", "heads", "total_len", "head_dim"),
    "present_values": ("layers", "batch", "heads", "total_len", "head_dim"),
    "decoder_attention": ("layers", "batch", "heads", "tgt_len", "total_len"),
    "cross_attention": ("layers", "batch", "heads", "tgt_len", "src_len"),
}
DYNAMIC_AXES = ("batch", "src_len", "tgt_len", "past_len", "total_len")


class EncoderGraph(nn.Module):
    """src, src_mask -> memory, cross_keys, cross_values, encoder_attention."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(
        self, src: torch.Tensor, src_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        encoded = self.model.encode(src, src_mask)
        cross_keys, cross_values = self.model.cross_key_values(encoded.memory)
        return encoded.memory, cross_keys, cross_values, encoded.attention


class DecoderGraph(nn.Module):
    """One step or a whole prefix against a KV cache; the inputs are `Transformer.decode_step`'s."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(
        self,
        tgt: torch.Tensor,
        tgt_positions: torch.Tensor,
        self_mask: torch.Tensor,
        past_keys: torch.Tensor,
        past_values: torch.Tensor,
        cross_keys: torch.Tensor,
        cross_values: torch.Tensor,
        src_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        out = self.model.decode_step(
            tgt, tgt_positions, self_mask, past_keys, past_values, cross_keys, cross_values, src_mask
        )
        return out.logits, out.present_keys, out.present_values, out.self_attention, out.cross_attention


@dataclass(frozen=True)
class GraphPaths:
    encoder: Path
    decoder: Path


def example_inputs(model: Transformer) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """Example encoder and decoder inputs; every dynamic size differs from the others and is >= 2,
    so the tracer neither specializes nor confuses them (the cache length still accepts 0)."""
    c = model.config
    batch, src_len, tgt_len, past_len = 3, 7, 2, 4
    src = torch.randint(5, c.vocab_size, (batch, src_len))
    src_mask = torch.ones(batch, src_len, dtype=torch.bool)
    src_mask[0, -2:] = False
    with torch.no_grad():
        _, cross_keys, cross_values, _ = EncoderGraph(model)(src, src_mask)
    cache = torch.randn(c.n_decoder_layers, batch, c.n_heads, past_len, c.head_dim)
    decoder = (
        torch.randint(5, c.vocab_size, (batch, tgt_len)),
        torch.arange(past_len, past_len + tgt_len).expand(batch, tgt_len).contiguous(),
        torch.ones(batch, past_len + tgt_len, dtype=torch.bool),
        cache,
        cache.clone(),
        cross_keys,
        cross_values,
        src_mask,
    )
    return (src, src_mask), decoder


def _dynamic_shapes(names: tuple[str, ...], shapes: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    dims = {
        "batch": torch.export.Dim("batch", min=1),
        "src_len": torch.export.Dim("src_len", min=1),
        "tgt_len": torch.export.Dim("tgt_len", min=1),
        "past_len": torch.export.Dim("past_len", min=0),
    }
    dims["total_len"] = torch.export.Dim.AUTO  # past_len + tgt_len, derived by the tracer
    return {
        name: {axis: dims[dim] for axis, dim in enumerate(shapes[name]) if dim in DYNAMIC_AXES}
        for name in names
    }


def _export(module: nn.Module, args: tuple[torch.Tensor, ...], path: Path, *, inputs: tuple[str, ...],
            outputs: tuple[str, ...], shapes: dict[str, tuple[str, ...]], opset: int) -> None:
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracing chatter
        logging.getLogger("torch.onnx").setLevel(logging.ERROR)
        program = torch.onnx.export(
            module,
            args,
            dynamo=True,
            opset_version=opset,
            input_names=list(inputs),
            output_names=list(outputs),
            dynamic_shapes=_dynamic_shapes(inputs, shapes),
            optimize=True,
            verbose=False,
        )
    if program is None:  # only None when exporting to a path given as `f`, which we do not
        raise RuntimeError("torch.onnx.export returned no program")
    program.save(str(path))
    name_dimensions(path, shapes)


def name_dimensions(path: Path, shapes: dict[str, tuple[str, ...]]) -> None:
    """Give the graph's dynamic I/O axes the contract's names (the tracer writes "s48" or
    "past_len + tgt_len" for the derived total length)."""
    model = onnx.load(str(path))
    for value in [*model.graph.input, *model.graph.output]:
        for dim, name in zip(value.type.tensor_type.shape.dim, shapes[value.name], strict=True):
            if name in DYNAMIC_AXES:
                dim.dim_param = name
    onnx.save(model, str(path))


def check_graph(path: Path) -> None:
    """onnx.checker with the full check, then strict shape inference with type checks.

    Raises:
        onnx.checker.ValidationError, onnx.shape_inference.InferenceError: the graph is invalid.
    """
    onnx.checker.check_model(str(path), full_check=True)
    onnx.shape_inference.infer_shapes(onnx.load(str(path)), check_type=True, strict_mode=True, data_prop=True)


def export_graphs(model: Transformer, directory: Path, *, opset: int) -> GraphPaths:
    """Export encoder.onnx and decoder.onnx (fp32) into `directory` and check both."""
    model.eval()
    encoder_args, decoder_args = example_inputs(model)
    paths = GraphPaths(directory / "encoder.onnx", directory / "decoder.onnx")
    _export(EncoderGraph(model), encoder_args, paths.encoder, inputs=ENCODER_INPUTS,
            outputs=ENCODER_OUTPUTS, shapes=ENCODER_SHAPES, opset=opset)
    _export(DecoderGraph(model), decoder_args, paths.decoder, inputs=DECODER_INPUTS,
            outputs=DECODER_OUTPUTS, shapes=DECODER_SHAPES, opset=opset)
    check_graph(paths.encoder)
    check_graph(paths.decoder)
    return paths
