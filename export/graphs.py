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
# The decoder takes its caches one tensor per layer ("past_keys.0", ...): stacked, the graph's first
# operators copied every layer's cache out of the stack on every step.
CACHE_INPUTS = ("past_keys", "past_values", "cross_keys", "cross_values")
DECODER_OUTPUTS = ("logits", "new_keys", "new_values", "decoder_attention", "cross_attention")


def decoder_input_names(layers: int) -> tuple[str, ...]:
    return (
        "tgt",
        "tgt_positions",
        "self_mask",
        "src_mask",
        *(f"{name}.{layer}" for name in CACHE_INPUTS for layer in range(layers)),
    )


# Symbolic dimension names written into the graphs and the manifest; "total_len" is past_len + tgt_len.
# A per-layer cache input's shape is listed under its name without the ".N".
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
    "src_mask": ("batch", "src_len"),
    "past_keys": ("batch", "heads", "past_len", "head_dim"),
    "past_values": ("batch", "heads", "past_len", "head_dim"),
    "cross_keys": ("batch", "heads", "src_len", "head_dim"),
    "cross_values": ("batch", "heads", "src_len", "head_dim"),
    "logits": ("batch", "tgt_len", "vocab"),
    "new_keys": ("layers", "batch", "heads", "tgt_len", "head_dim"),
    "new_values": ("layers", "batch", "heads", "tgt_len", "head_dim"),
    "decoder_attention": ("layers", "batch", "heads", "tgt_len", "total_len"),
    "cross_attention": ("layers", "batch", "heads", "tgt_len", "src_len"),
}
DYNAMIC_AXES = ("batch", "src_len", "tgt_len", "past_len", "total_len")


def tensor_shape(shapes: dict[str, tuple[str, ...]], name: str) -> tuple[str, ...]:
    return shapes[name.split(".")[0]]


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
    """One step or a whole prefix beside a KV cache: `Transformer.decode_step(beside_cache=True)` with
    one cache tensor per layer. The cache is only read, so the caller may keep it in a buffer with spare
    columns (masked in self_mask) and write the returned new keys/values into it."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model
        self.layers = model.config.n_decoder_layers

    def forward(
        self,
        tgt: torch.Tensor,
        tgt_positions: torch.Tensor,
        self_mask: torch.Tensor,
        src_mask: torch.Tensor,
        *caches: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        n = self.layers
        past_keys, past_values, cross_keys, cross_values = (list(caches[i * n : (i + 1) * n]) for i in range(4))
        out = self.model.decode_step(
            tgt,
            tgt_positions,
            self_mask,
            past_keys,
            past_values,
            cross_keys,
            cross_values,
            src_mask,
            beside_cache=True,
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
    layers = c.n_decoder_layers
    caches = [torch.randn(batch, c.n_heads, past_len, c.head_dim) for _ in range(2 * layers)]
    decoder = (
        torch.randint(5, c.vocab_size, (batch, tgt_len)),
        torch.arange(past_len, past_len + tgt_len).expand(batch, tgt_len).contiguous(),
        torch.ones(batch, past_len + tgt_len, dtype=torch.bool),
        src_mask,
        *caches,
        *[cross_keys[layer].contiguous() for layer in range(layers)],
        *[cross_values[layer].contiguous() for layer in range(layers)],
    )
    return (src, src_mask), decoder


def _dynamic_shapes(
    names: tuple[str, ...], shapes: dict[str, tuple[str, ...]], *, varargs: str | None = None
) -> dict[str, Any]:
    """Dynamic axes by argument name; with `varargs`, the names from the first cache input on are the
    forward's *varargs, which torch.export takes as one tuple under that name."""
    dims = {
        "batch": torch.export.Dim("batch", min=1),
        "src_len": torch.export.Dim("src_len", min=1),
        "tgt_len": torch.export.Dim("tgt_len", min=1),
        "past_len": torch.export.Dim("past_len", min=0),
    }
    dims["total_len"] = torch.export.Dim.AUTO  # past_len + tgt_len, derived by the tracer
    by_name = {
        name: {axis: dims[dim] for axis, dim in enumerate(tensor_shape(shapes, name)) if dim in DYNAMIC_AXES}
        for name in names
    }
    if varargs is None:
        return by_name
    first = next(i for i, name in enumerate(names) if "." in name)
    return {**{name: by_name[name] for name in names[:first]}, varargs: tuple(by_name[n] for n in names[first:])}


def _export(
    module: nn.Module,
    args: tuple[torch.Tensor, ...],
    path: Path,
    *,
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    shapes: dict[str, tuple[str, ...]],
    opset: int,
    varargs: str | None = None,
) -> None:
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
            dynamic_shapes=_dynamic_shapes(inputs, shapes, varargs=varargs),
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
        for dim, name in zip(value.type.tensor_type.shape.dim, tensor_shape(shapes, value.name), strict=True):
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
    _export(
        EncoderGraph(model),
        encoder_args,
        paths.encoder,
        inputs=ENCODER_INPUTS,
        outputs=ENCODER_OUTPUTS,
        shapes=ENCODER_SHAPES,
        opset=opset,
    )
    _export(
        DecoderGraph(model),
        decoder_args,
        paths.decoder,
        inputs=decoder_input_names(model.config.n_decoder_layers),
        outputs=DECODER_OUTPUTS,
        shapes=DECODER_SHAPES,
        opset=opset,
        varargs="caches",
    )
    check_graph(paths.encoder)
    check_graph(paths.decoder)
    return paths
