"""Derived variants of the fp32 graphs: int8 dynamic quantization for CPU and fp16 for GPU, and the int8 formats
`python -m bench.int8_formats` measures against it (static, MatMulNBits).

Imports onnx and onnxruntime's quantization/transformer tools only; nothing from this repository.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import onnx


def quantize_int8(source: Path, target: Path, *, per_channel: bool = True, reduce_range: bool = False) -> None:
    """Dynamic quantization for the CPU: weights s8 (per output channel), activations u8 at run time,
    the u8 x s8 products VNNI's dot product instruction takes.

    On x86 CPUs without VNNI (AVX2 only), onnxruntime multiplies u8 x s8 with VPMADDUBSW, whose pairwise
    sums saturate at int16 when activations and weights both span their range; `reduce_range` keeps the
    weights to 7 bits, which cannot saturate, at a small cost in precision where VNNI exists.

    The tied output projection is `MatMul(x, Transpose(embedding))`, which quantize_dynamic skips (its
    B is not a constant): folded into a transposed initializer first, it is quantized too. On the
    base-size model it is a quarter of a decoder step's multiply-adds (BENCHMARKS.md, issue 23).
    """
    # Optional heavy dependency, only needed when the int8 variant is asked for.
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)
    with _weight_transposes_folded(source, target) as (folded, _):
        quantize_dynamic(
            str(folded), str(target), weight_type=QuantType.QInt8, per_channel=per_channel, reduce_range=reduce_range
        )


@contextmanager
def _weight_transposes_folded(source: Path, target: Path) -> Iterator[tuple[Path, onnx.ModelProto]]:
    """`source`, or a copy of it beside `target` with its weight transposes folded (fold_weight_transposes) when
    it has any (onnxruntime's quantizers read a file), and the folded model. The copy is removed afterwards."""
    model = onnx.load(str(source))
    folded = target.with_name(target.name + ".folded.onnx")
    try:
        if fold_weight_transposes(model.graph):
            onnx.save(model, str(folded))
            source = folded
        yield source, model
    finally:
        folded.unlink(missing_ok=True)


def fold_weight_transposes(graph: onnx.GraphProto) -> int:
    """Replace `MatMul(x, Transpose(W))` (W an initializer, 2-D) by `MatMul(x, W_t)` with W_t = W.T stored;
    returns how many were folded. The Transpose goes when nothing else reads it."""
    from onnx import numpy_helper

    initializers = {init.name: init for init in graph.initializer}
    producers = {output: node for node in graph.node for output in node.output}
    folded = 0
    for node in graph.node:
        transpose = producers.get(node.input[1]) if node.op_type == "MatMul" else None
        if transpose is None or transpose.op_type != "Transpose" or transpose.input[0] not in initializers:
            continue
        weight = numpy_helper.to_array(initializers[transpose.input[0]])
        perm = [list(a.ints) for a in transpose.attribute if a.name == "perm"]
        if weight.ndim != 2 or perm not in ([], [[1, 0]]):
            continue
        name = f"{transpose.input[0]}.transposed"
        if name not in initializers:
            initializers[name] = numpy_helper.from_array(weight.T.copy(), name)
            graph.initializer.append(initializers[name])
        node.input[1] = name
        folded += 1
    readers = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    unused = [n for n in graph.node if n.op_type == "Transpose" and not set(n.output) & readers]
    for node in unused:
        graph.node.remove(node)
    return folded


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


def quantize_static_int8(source: Path, target: Path, calibration: Iterable[Mapping[str, np.ndarray]]) -> None:
    """Static quantization (QDQ): weights s8 per output channel, activations u8 with scales calibrated on
    `calibration` (the graph's feeds, e.g. greedy decoding's) instead of measured on every call.

    Only MatMuls whose B is a constant are quantized (the attention's products over the cache stay fp32), the
    tied output projection folded first as in quantize_int8. A trial format, measured by
    `python -m bench.int8_formats`, not a variant `python -m export` writes.
    """
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)

    class Feeds(CalibrationDataReader):  # type: ignore[misc]  # onnxruntime.quantization has no type hints
        def __init__(self) -> None:
            self._feeds = iter(calibration)

        def get_next(self) -> dict[str, np.ndarray] | None:
            feeds = next(self._feeds, None)
            return None if feeds is None else dict(feeds)

    with _weight_transposes_folded(source, target) as (folded, model):
        graph = model.graph
        constants = {init.name for init in graph.initializer}
        weighted = [node.name for node in graph.node if node.op_type == "MatMul" and node.input[1] in constants]
        quantize_static(
            str(folded),
            str(target),
            Feeds(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            nodes_to_quantize=weighted,
            extra_options={"WeightSymmetric": True, "ActivationSymmetric": False},
        )


def quantize_weights_nbits(source: Path, target: Path, *, bits: int, block_size: int) -> None:
    """MatMulNBits: weights of `bits` bits in blocks of `block_size` along the inner axis, symmetric, multiplied
    at accuracy level 4 (activations quantized to int8 per block, integer dot products). Constant-weight MatMuls
    only, the tied output projection folded first. A trial format for `python -m bench.int8_formats`."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)
    model = onnx.load(str(source))
    fold_weight_transposes(model.graph)
    quantizer = MatMulNBitsQuantizer(model, bits=bits, block_size=block_size, is_symmetric=True, accuracy_level=4)
    quantizer.process()
    quantizer.model.save_model_to_file(str(target), use_external_data_format=False)
