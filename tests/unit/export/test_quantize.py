"""export/quantize.py: the tied output projection's Transpose is folded so that int8 quantizes it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from export.quantize import fold_weight_transposes, quantize_int8


def _tied_projection(weight: np.ndarray) -> onnx.ModelProto:
    """logits = x @ Transpose(weight), as torch exports a Linear tied to an embedding."""
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["weight"], ["weight_t"], perm=[1, 0]),
            helper.make_node("MatMul", ["x", "weight_t"], ["logits"]),
        ],
        "tied",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", weight.shape[1]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", weight.shape[0]])],
        [numpy_helper.from_array(weight, "weight")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _run(model: onnx.ModelProto | Path, x: np.ndarray) -> np.ndarray:
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    result: np.ndarray = session.run(["logits"], {"x": x})[0]
    return result


def test_fold_keeps_the_outputs_and_drops_the_transpose() -> None:
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((40, 16)).astype(np.float32)
    x = rng.standard_normal((3, 16)).astype(np.float32)
    model = _tied_projection(weight)
    expected = _run(model, x)
    assert fold_weight_transposes(model.graph) == 1
    assert [n.op_type for n in model.graph.node] == ["MatMul"]
    np.testing.assert_array_equal(_run(model, x), expected)


def test_int8_quantizes_the_tied_projection(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((64, 32)).astype(np.float32)
    x = rng.standard_normal((4, 32)).astype(np.float32)
    source = tmp_path / "tied.onnx"
    onnx.save(_tied_projection(weight), str(source))
    # Random weights and activations spanning their whole range: 7-bit weights, so that the check holds on
    # CPUs without VNNI too, where full-range u8 x s8 pairs saturate (3.8 of 17 off on an AVX2-only EPYC).
    quantize_int8(source, tmp_path / "tied.int8.onnx", reduce_range=True)
    quantized = onnx.load(str(tmp_path / "tied.int8.onnx"))
    ops = {n.op_type for n in quantized.graph.node}
    assert "MatMul" not in ops and ops & {"MatMulInteger", "DynamicQuantizeMatMul"}
    assert not list(tmp_path.glob("*.folded.onnx"))  # the intermediate file is removed
    reference = x @ weight.T
    error = np.abs(_run(tmp_path / "tied.int8.onnx", x) - reference).max()
    assert error < 0.05 * np.abs(reference).max()
