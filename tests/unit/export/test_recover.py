"""python -m export.recover: the checkpoint rebuilt from a model directory holds the exported weights."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from export.recover import RecoveryError, main, recover_checkpoint
from model.checkpoint import load_checkpoint


def test_recovered_weights_equal_the_exported_checkpoints(
    tiny_checkpoint_dir: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    difference = recover_checkpoint(tiny_model_dir, tmp_path / "recovered")
    assert difference < 1e-4
    original = load_checkpoint(tiny_checkpoint_dir).model.state_dict()
    recovered = load_checkpoint(tmp_path / "recovered").model.state_dict()
    assert set(recovered) == set(original)
    for name, tensor in original.items():
        assert torch.equal(recovered[name], tensor), name
    tokenizer = (tmp_path / "recovered" / "tokenizer.json").read_bytes()
    assert tokenizer == (tiny_model_dir / "tokenizer.json").read_bytes()


def test_a_directory_that_does_not_match_its_config_is_refused(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(tiny_model_dir, changed)
    manifest = json.loads((changed / "manifest.json").read_text())
    manifest["config"]["d_ff"] *= 2
    (changed / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RecoveryError, match="d_ff|feed_forward"):
        recover_checkpoint(changed, tmp_path / "out")
    (changed / "decoder.onnx").unlink()
    assert main(["--model-dir", str(changed), "--out", str(tmp_path / "out")]) == 2
    assert "decoder.onnx is missing" in capsys.readouterr().err
