from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from service.engine.errors import ModelLoadError
from service.engine.model_dir import TensorSpec, check_graph_signature, load_model_directory

CONFIG = {"vocab_size": 40, "d_model": 8, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1}
ENCODER_IO: dict[str, list[dict[str, Any]]] = {
    "inputs": [
        {"name": "src", "dtype": "int64", "shape": ["batch", "src_len"]},
        {"name": "src_mask", "dtype": "bool", "shape": ["batch", "src_len"]},
    ],
    "outputs": [
        {"name": n, "dtype": "float32", "shape": s}
        for n, s in [
            ("memory", ["batch", "src_len", 8]),
            ("cross_keys", [1, "batch", 2, "src_len", 4]),
            ("cross_values", [1, "batch", 2, "src_len", 4]),
            ("encoder_attention", [1, "batch", 2, "src_len", "src_len"]),
        ]
    ],
}


def write_model(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("encoder.onnx", "decoder.onnx", "tokenizer.json"):
        (directory / name).write_bytes(name.encode())
    manifest = {
        "format": "atento-model/2",
        "name": "t",
        "version": "1",
        "config": CONFIG,
        "special_tokens": {"pad": 0, "bos": 1, "eos": 2},
        "max_source_tokens": 16,
        "max_target_tokens": 16,
        "graphs": {"encoder": ENCODER_IO, "decoder": {"inputs": [], "outputs": []}},
        "variants": {"fp32": {"encoder": "encoder.onnx", "decoder": "decoder.onnx"}},
        "default_variant": "fp32",
        "files": {
            n: hashlib.sha256(n.encode()).hexdigest() for n in ("encoder.onnx", "decoder.onnx", "tokenizer.json")
        },
    }
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def test_loads_a_valid_directory(tmp_path: Path) -> None:
    model = load_model_directory(write_model(tmp_path))
    assert model.encoder == tmp_path / "encoder.onnx" and model.variant == "fp32"
    assert (model.n_layers, model.n_heads, model.head_dim) == (1, 2, 4)


def test_a_corrupt_file_is_named(tmp_path: Path) -> None:
    (write_model(tmp_path) / "decoder.onnx").write_bytes(b"tampered")
    with pytest.raises(ModelLoadError, match=r"decoder\.onnx is corrupt"):
        load_model_directory(tmp_path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    (write_model(tmp_path) / "tokenizer.json").unlink()
    with pytest.raises(ModelLoadError, match=r"tokenizer\.json is missing"):
        load_model_directory(tmp_path)


def test_missing_manifest_and_unknown_variant(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"manifest\.json is missing"):
        load_model_directory(tmp_path)
    with pytest.raises(ModelLoadError, match="no variant 'int8'"):
        load_model_directory(write_model(tmp_path / "m"), variant="int8")


def specs(entries: list[dict[str, Any]]) -> list[TensorSpec]:
    return [TensorSpec(e["name"], e["dtype"], tuple(e["shape"])) for e in entries]


def test_graph_signature_checks(tmp_path: Path) -> None:
    model = load_model_directory(write_model(tmp_path))
    file = model.encoder
    check_graph_signature(model, "encoder", "outputs", specs(ENCODER_IO["outputs"]), file=file)
    renamed = [*specs(ENCODER_IO["outputs"])[:-1], TensorSpec("attn", "float32", (1, "b", 2, "s", "s"))]
    with pytest.raises(ModelLoadError, match=r"encoder\.onnx: graph outputs lack \['encoder_attention'\]"):
        check_graph_signature(model, "encoder", "outputs", renamed, file=file)
    wrong = [TensorSpec("src", "int32", ("batch", "src_len")), *specs(ENCODER_IO["inputs"])[1:]]
    with pytest.raises(ModelLoadError, match="src is int32"):
        check_graph_signature(model, "encoder", "inputs", wrong, file=file)
    bad_width = [*specs(ENCODER_IO["outputs"])]
    bad_width[1] = TensorSpec("cross_keys", "float32", (1, "batch", 2, "src_len", 5))
    with pytest.raises(ModelLoadError, match="cross_keys axis 4"):
        check_graph_signature(model, "encoder", "outputs", bad_width, file=file)
