"""export/gqa.py: decoder format 3, each layer's self- and cross-attention GroupQueryAttention nodes, made from
format 2's graphs (fp32 and int8) and checked against them; a model directory gains them with its manifest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from export import gqa
from export.gqa import GqaSurgeryError, add_gqa_decoders, check_gqa_parity, gqa_decoder
from service.engine.model_dir import gqa_decoder_names, load_model_directory

pytestmark = pytest.mark.slow  # uses the session's tiny model

BUNDLED = Path(__file__).resolve().parents[3] / "models" / "normalize" / "1"


@pytest.mark.parametrize("decoder", ["decoder.onnx", "decoder.int8.onnx"])
def test_the_bundled_decoders_convert_and_keep_their_outputs(decoder: str, tmp_path: Path) -> None:
    config = json.loads((BUNDLED / "manifest.json").read_text())["config"]
    layers, heads = config["n_decoder_layers"], config["n_heads"]
    converted = gqa_decoder(onnx.load(str(BUNDLED / decoder)), n_layers=layers, n_heads=heads)
    kinds = [node.op_type for node in converted.graph.node]
    assert kinds.count("GroupQueryAttention") == 2 * layers  # each layer's self- and cross-attention
    assert "Softmax" not in kinds and kinds.count("LayerNormalization") + kinds.count("SkipLayerNormalization") > 0
    assert "GatherElements" not in kinds  # the last source keys gathered a head's slice at a time (GatherND)
    inputs, outputs = gqa_decoder_names(layers)
    assert {value.name for value in converted.graph.input} == set(inputs)
    assert {value.name for value in converted.graph.output} == set(outputs)
    path = tmp_path / "decoder.gqa.onnx"
    onnx.save(converted, str(path))
    parity = check_gqa_parity(
        BUNDLED / decoder,
        path,
        n_layers=layers,
        n_heads=heads,
        head_dim=config["d_model"] // heads,
        vocab_size=config["vocab_size"],
        seed=3,
    )
    assert parity["same_argmax"] == 1.0 and parity["max_abs_logit_diff"] < gqa.MAX_LOGIT_DIFF
    assert parity["rows"] == 30 and parity["same_argmax_with_dead_rows"] >= 0.95
    assert gqa.made_by_this_surgery(path)
    shipped = BUNDLED / decoder.replace("decoder", "decoder.gqa", 1)
    assert gqa.made_by_this_surgery(shipped)  # the bundled model's own, made again when the surgery changed


def test_a_graph_that_is_not_atentos_is_refused() -> None:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["tgt"], ["logits"])],
        "other",
        [helper.make_tensor_value_info("tgt", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 4])],
    )
    with pytest.raises(GqaSurgeryError, match="self_attention.query_key_value.bias"):
        gqa_decoder(helper.make_model(graph), n_layers=1, n_heads=2)


def _without_gqa(model_dir: Path, target: Path) -> Path:
    """A copy of `model_dir` as format 2 alone: its format 3 files and manifest entries removed."""
    shutil.copytree(model_dir, target)
    manifest = json.loads((target / "manifest.json").read_text())
    for files in manifest["variants"].values():
        name = files.pop("decoder_gqa", None)
        files.pop("decoder_gqa_parity", None)
        if name is not None:
            (target / name).unlink()
            manifest["files"].pop(name)
    manifest["graphs"].pop("decoder_gqa", None)
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return target


def test_the_export_adds_them_and_the_service_finds_them(tiny_model_dir: Path, tmp_path: Path) -> None:
    exported = json.loads((tiny_model_dir / "manifest.json").read_text())
    assert {name for name, files in exported["variants"].items() if "decoder_gqa" in files} == {"fp32", "int8"}
    plain = _without_gqa(tiny_model_dir, tmp_path / "plain")
    assert load_model_directory(plain).decoder_gqa is None
    written = add_gqa_decoders(plain)
    assert set(written) == {"fp32", "int8"}
    manifest = json.loads((plain / "manifest.json").read_text())
    for variant in ("fp32", "int8"):
        files = load_model_directory(plain, variant=variant)
        assert files.decoder_gqa == plain / manifest["variants"][variant]["decoder_gqa"]
        assert manifest["variants"][variant]["decoder_gqa_parity"]["same_argmax"] == 1.0
    assert manifest["graphs"]["decoder_gqa"] == exported["graphs"]["decoder_gqa"]


def test_a_graph_that_fails_parity_writes_nothing(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _without_gqa(tiny_model_dir, tmp_path / "plain")
    before = sorted(path.name for path in plain.iterdir()), (plain / "manifest.json").read_text()
    monkeypatch.setattr(gqa, "check_gqa_parity", lambda *_, **__: {"same_argmax": 0.5, "max_abs_logit_diff": 3.0})
    with pytest.raises(GqaSurgeryError, match="differs from"):
        add_gqa_decoders(plain)
    assert (sorted(path.name for path in plain.iterdir()), (plain / "manifest.json").read_text()) == before


def test_parity_tells_a_wrong_graph(tiny_model_dir: Path, tmp_path: Path) -> None:
    """A format 3 graph whose attention is scaled differently (a wrong `scale`) fails the check."""
    manifest = json.loads((tiny_model_dir / "manifest.json").read_text())
    config = manifest["config"]
    model = onnx.load(str(tiny_model_dir / manifest["variants"]["fp32"]["decoder_gqa"]))
    for node in model.graph.node:
        if node.op_type == "GroupQueryAttention":
            node.attribute.append(helper.make_attribute("scale", 3.0))
    wrong = tmp_path / "wrong.onnx"
    onnx.save(model, str(wrong))
    parity = check_gqa_parity(
        tiny_model_dir / "decoder.onnx",
        wrong,
        n_layers=config["n_decoder_layers"],
        n_heads=config["n_heads"],
        head_dim=config["d_model"] // config["n_heads"],
        vocab_size=config["vocab_size"],
    )
    assert parity["max_abs_logit_diff"] > gqa.MAX_LOGIT_DIFF
    assert np.isfinite(parity["max_abs_logit_diff"])
