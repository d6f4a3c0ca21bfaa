"""`python -m model.average`: the weighted mean of checkpoints of one model, and a refusal by name for
checkpoints that have no meaningful mean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from model.average import main
from model.checkpoint import load_checkpoint, save_checkpoint
from model.config import ModelConfig
from model.tokenizer import train_tokenizer
from model.transformer import Transformer

TEXTS = ["one thousand and two", "mil doscientos", "2024-01-01", "The report mentions 12 cases."] * 20


def tiny_config(vocab_size: int, d_ff: int = 32) -> ModelConfig:
    return ModelConfig(
        vocab_size=vocab_size,
        d_model=16,
        n_heads=2,
        n_encoder_layers=1,
        n_decoder_layers=1,
        d_ff=d_ff,
        dropout=0.0,
        max_positions=64,
    )


def write_checkpoint(
    directory: Path, seed: int, *, step: int = 100, d_ff: int = 32, task: str = "seq2seq", init_from: str | None = None
) -> Path:
    """A consistent checkpoint with random weights drawn from `seed`."""
    directory.mkdir(parents=True)
    tokenizer = train_tokenizer(TEXTS, vocab_size=300)
    tokenizer.save(str(directory / "tokenizer.json"))
    torch.manual_seed(seed)
    model = Transformer(tiny_config(tokenizer.get_vocab_size(), d_ff))
    train = {"max_length": 64, "data": None, "task": task, "init_from": init_from}
    save_checkpoint(directory, model, metadata={"step": step, "train": train})
    return directory


def weights_of(directory: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(directory).model.state_dict()


def test_equal_weights_give_the_mean_of_every_tensor(tmp_path: Path) -> None:
    first = write_checkpoint(tmp_path / "a", seed=1, step=1800)
    second = write_checkpoint(tmp_path / "b", seed=2, step=1765)
    out = tmp_path / "mean"
    assert main([str(first), str(second), "--out", str(out)]) == 0
    a, b, mean = weights_of(first), weights_of(second), weights_of(out)
    assert set(mean) == set(a)
    for name, tensor in mean.items():
        torch.testing.assert_close(tensor, (a[name] + b[name]) / 2)
        assert not torch.equal(tensor, a[name]) or torch.equal(a[name], b[name])
    metadata = json.loads((out / "config.json").read_text())
    assert metadata["step"] == 1800 and metadata["train"]["task"] == "seq2seq"
    assert [(entry["weight"], entry["step"]) for entry in metadata["averaged_from"]] == [(0.5, 1800), (0.5, 1765)]
    assert (out / "tokenizer.json").read_bytes() == (first / "tokenizer.json").read_bytes()
    assert not (out / "optimizer.safetensors").exists()  # a mean has no optimizer state to resume


def test_weights_are_normalized(tmp_path: Path) -> None:
    first = write_checkpoint(tmp_path / "a", seed=1)
    second = write_checkpoint(tmp_path / "b", seed=2)
    out = tmp_path / "mean"
    assert main([str(first), str(second), "--out", str(out), "--weights", "3", "1"]) == 0
    a, b, mean = weights_of(first), weights_of(second), weights_of(out)
    for name, tensor in mean.items():
        torch.testing.assert_close(tensor, 0.75 * a[name] + 0.25 * b[name])


def test_the_mean_of_copies_is_the_checkpoint_itself(tmp_path: Path) -> None:
    first = write_checkpoint(tmp_path / "a", seed=1)
    second = write_checkpoint(tmp_path / "b", seed=1)
    out = tmp_path / "mean"
    assert main([str(first), str(second), str(first), "--out", str(out)]) == 0
    a, mean = weights_of(first), weights_of(out)
    for name, tensor in mean.items():
        torch.testing.assert_close(tensor, a[name], rtol=0, atol=1e-7)


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str, out: Path) -> None:
    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: ") and fragment in error, error
    assert not (out / "config.json").exists()


def test_checkpoints_without_a_common_mean_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write_checkpoint(tmp_path / "a", seed=1)
    wider = write_checkpoint(tmp_path / "wider", seed=2, d_ff=64)
    other_task = write_checkpoint(tmp_path / "denoise", seed=3, task="denoise")
    other_tokenizer = write_checkpoint(tmp_path / "tok", seed=4)
    (other_tokenizer / "tokenizer.json").write_text(
        (other_tokenizer / "tokenizer.json").read_text().replace('"mil"', '"mil_"', 1)
    )
    out = tmp_path / "mean"
    refused(capsys, [str(first), "--out", str(out)], "at least two checkpoints", out)
    refused(capsys, [str(first), str(wider), "--out", str(out)], "another model config", out)
    refused(capsys, [str(first), str(other_task), "--out", str(out)], "task='denoise'", out)
    refused(capsys, [str(first), str(other_tokenizer), "--out", str(out)], "tokenizer.json differs", out)
    refused(capsys, [str(first), str(first), "--out", str(out), "--weights", "1"], "1 weights for 2", out)
    refused(capsys, [str(first), str(first), "--out", str(out), "--weights", "1", "0"], "positive", out)
    refused(capsys, [str(first), str(first), "--out", str(out), "--weights", "inf", "1"], "positive", out)
    fine_tune = write_checkpoint(tmp_path / "tuned", seed=5, init_from="runs/start")
    refused(capsys, [str(first), str(fine_tune), "--out", str(out)], "init_from='runs/start'", out)
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "evaluation.json").write_text("{}")
    refused(capsys, [str(first), str(first), "--out", str(stale)], "not empty", out)
    refused(capsys, [str(first), str(tmp_path / "nowhere"), "--out", str(out)], "does not exist", out)
    refused(capsys, [str(first), str(tmp_path / "a"), "--out", str(first)], "--out is one of", out)
