"""The exported tiny model directory: manifest fields and hashes, ONNX checker, the I/O contract."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from export.graphs import DECODER_OUTPUTS, ENCODER_INPUTS, ENCODER_OUTPUTS, check_graph, decoder_input_names
from export.model_dir import sha256_file

pytestmark = pytest.mark.slow  # uses the session's tiny model


@pytest.fixture(scope="module")
def manifest(tiny_model_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((tiny_model_dir / "manifest.json").read_text())


def test_manifest_hashes_every_file(tiny_model_dir: Path, manifest: dict) -> None:  # type: ignore[type-arg]
    on_disk = {p.name for p in tiny_model_dir.iterdir()} - {"manifest.json"}
    assert set(manifest["files"]) == on_disk
    for name, digest in manifest["files"].items():
        assert sha256_file(tiny_model_dir / name) == digest


def test_no_staging_directory_left_behind(tiny_model_dir: Path) -> None:
    assert [p.name for p in tiny_model_dir.parent.iterdir()] == ["1"]


def test_manifest_fields(manifest: dict) -> None:  # type: ignore[type-arg]
    assert manifest["format"] == "atento-model/2"
    assert (manifest["name"], manifest["version"]) == ("tiny", "1")
    assert manifest["opset"] >= 17
    assert manifest["special_tokens"] == {"pad": 0, "bos": 1, "eos": 2, "unk": 3, "mask": 4}
    assert manifest["config"]["d_model"] == 32
    assert manifest["default_variant"] == "fp32"
    fp32 = dict(manifest["variants"]["fp32"])
    assert fp32.pop("decoder_gqa_parity")["same_argmax"] == 1.0  # export/gqa.py's check (tests/unit/export/test_gqa.py)
    assert fp32 == {
        "encoder": "encoder.onnx",
        "decoder": "decoder.onnx",
        "decoder_gqa": "decoder.gqa.onnx",
        "device": "cpu",
        "checked": True,
    }
    assert manifest["variants"]["fp16"]["checked"] is False
    assert manifest["parity"]["greedy_equal"] and manifest["parity"]["beam_equal"]
    assert manifest["parity"]["logits_max_abs"] <= manifest["parity"]["atol_logits"]
    assert set(manifest["tools"]) >= {"torch", "onnx", "onnxruntime", "atento"}
    assert manifest["max_source_tokens"] > 0 and manifest["max_target_tokens"] > 0


def test_graph_io_follows_the_contract(manifest: dict) -> None:  # type: ignore[type-arg]
    encoder, decoder = manifest["graphs"]["encoder"], manifest["graphs"]["decoder"]
    assert [v["name"] for v in encoder["inputs"]] == list(ENCODER_INPUTS)
    assert [v["name"] for v in encoder["outputs"]] == list(ENCODER_OUTPUTS)
    assert [v["name"] for v in decoder["inputs"]] == list(decoder_input_names(2))
    assert [v["name"] for v in decoder["inputs"]][4:7] == ["past_keys.0", "past_keys.1", "past_values.0"]
    assert [v["name"] for v in decoder["outputs"]] == list(DECODER_OUTPUTS)
    shapes = {v["name"]: v for v in decoder["inputs"] + decoder["outputs"]}
    assert shapes["self_mask"] == {"name": "self_mask", "dtype": "bool", "shape": ["batch", "total_len"]}
    assert shapes["past_keys.1"]["shape"] == ["batch", 2, "past_len", 16]  # one buffer per layer
    assert shapes["cross_values.0"]["shape"] == ["batch", 2, "src_len", 16]
    assert shapes["new_keys"]["shape"] == [2, "batch", 2, "tgt_len", 16]  # only the new columns
    assert shapes["decoder_attention"]["shape"] == [2, "batch", 2, "tgt_len", "total_len"]
    assert shapes["logits"]["dtype"] == "float32"


def test_every_graph_passes_the_checker(tiny_model_dir: Path, manifest: dict) -> None:  # type: ignore[type-arg]
    for variant in manifest["variants"].values():
        for role in ("encoder", "decoder"):
            path = tiny_model_dir / variant[role]
            check_graph(path)
            opsets = onnx.load(str(path)).opset_import
            assert max(o.version for o in opsets if o.domain in ("", "ai.onnx")) >= 17
