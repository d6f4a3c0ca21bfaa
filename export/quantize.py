"""Derived variants of the fp32 graphs: int8 dynamic quantization for CPU and fp16 for GPU.

Imports onnx and onnxruntime's quantization/transformer tools only; nothing from this repository.
"""

from __future__ import annotations

import logging
from pathlib import Path

import onnx


def quantize_int8(source: Path, target: Path) -> None:
    """Dynamic (weights int8, activations quantized at run time) quantization for the CPU."""
    # Optional heavy dependency, only needed when the int8 variant is asked for.
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)
    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)


def convert_fp16(source: Path, target: Path) -> None:
    """fp16 weights and arithmetic, float32 inputs/outputs so the contract's dtypes still hold."""
    # Optional heavy dependency, only needed when the fp16 variant is asked for.
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = convert_float_to_float16(onnx.load(str(source)), keep_io_types=True)
    sort_topologically(model.graph)  # the converter appends its input casts after their consumers
    onnx.save(model, str(target))


def sort_topologically(graph: onnx.GraphProto) -> None:
    """Reorder the nodes so each comes after the producers of its inputs, otherwise keeping their order."""
    available = {value.name for value in [*graph.input, *graph.initializer]} | {""}
    pending = list(graph.node)
    ordered: list[onnx.NodeProto] = []
    while pending:
        ready = [node for node in pending if all(name in available for name in node.input)]
        if not ready:
            raise ValueError(f"{graph.name}: the graph has a cycle or an undefined input")
        for node in ready:
            available.update(node.output)
        ready_ids = {id(node) for node in ready}
        pending = [node for node in pending if id(node) not in ready_ids]
        ordered.extend(ready)
    del graph.node[:]
    graph.node.extend(ordered)
