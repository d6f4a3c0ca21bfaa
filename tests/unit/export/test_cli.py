"""`python -m export` refuses a missing or inconsistent checkpoint with exit 2 and one line, and
writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from export.__main__ import main
from model.checkpoint import save_checkpoint
from model.config import ModelConfig
from model.tokenizer import train_tokenizer
from model.transformer import Transformer


@pytest.fixture
def untrained_checkpoint(tmp_path: Path) -> Path:
    """A consistent checkpoint with random weights, built in a second."""
    directory = tmp_path / "checkpoint"
    directory.mkdir()
    texts = ["one thousand and two", "mil doscientos", "2024-01-01", "The report mentions 12 cases."] * 20
    tokenizer = train_tokenizer(texts, vocab_size=300)
    tokenizer.save(str(directory / "tokenizer.json"))
    torch.manual_seed(0)
    config = ModelConfig(
        vocab_size=tokenizer.get_vocab_size(),
        d_model=16,
        n_heads=2,
        n_encoder_layers=1,
        n_decoder_layers=1,
        d_ff=32,
        dropout=0.0,
        max_positions=64,
    )
    save_checkpoint(directory, Transformer(config), metadata={"step": 0, "train": {"max_length": 64}})
    return directory


def run_cli(capsys: pytest.CaptureFixture[str], checkpoint: Path, out: Path) -> tuple[int, str]:
    code = main(["--checkpoint", str(checkpoint), "--out", str(out), "--no-int8", "--no-fp16"])
    return code, capsys.readouterr().err


def assert_refused(code: int, err: str, out: Path, fragment: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err
    assert not out.parent.exists()  # not even the parent: nothing is created before the checks pass


def test_missing_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models" / "m" / "1"
    code, err = run_cli(capsys, tmp_path / "nowhere", out)
    assert_refused(code, err, out, "does not exist")


@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "tokenizer.json"])
def test_checkpoint_missing_a_file(
    untrained_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (untrained_checkpoint / name).unlink()
    out = tmp_path / "models" / "m" / "1"
    code, err = run_cli(capsys, untrained_checkpoint, out)
    assert_refused(code, err, out, name)


def edit_config(directory: Path, **changes: object) -> None:
    path = directory / "config.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if key in data["model"]:
            data["model"][key] = value
        elif value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"d_ff": 48}, "config_fingerprint"),  # config edited after training
        ({"d_ff": 48, "config_fingerprint": None}, "does not match the config"),  # weights of another shape
        ({"bos_id": 7, "config_fingerprint": None}, "bos id"),  # tokenizer and config disagree
        ({"vocab_size": 100, "config_fingerprint": None}, "model.safetensors"),
    ],
)
def test_inconsistent_checkpoint(
    untrained_checkpoint: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    changes: dict[str, object],
    fragment: str,
) -> None:
    edit_config(untrained_checkpoint, **changes)
    out = tmp_path / "models" / "m" / "1"
    code, err = run_cli(capsys, untrained_checkpoint, out)
    assert_refused(code, err, out, fragment)


def test_existing_target_is_kept_without_force(
    untrained_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "models" / "m" / "1"
    out.mkdir(parents=True)
    (out / "keep.txt").write_text("old")
    code, err = run_cli(capsys, untrained_checkpoint, out)
    assert code == 2 and "already exists" in err
    assert sorted(p.name for p in out.parent.iterdir()) == ["1"]
    assert (out / "keep.txt").read_text() == "old"
