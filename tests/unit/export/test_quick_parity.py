"""`python -m export --quick-parity`: a trial export that checks parity on a few held-out inputs, says
what it checks before it starts, and records the smaller counts in the manifest."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from export.__main__ import QUICK_BEAM_INPUTS, QUICK_PARITY_INPUTS, main, parse_args
from model.checkpoint import save_checkpoint
from model.config import ModelConfig
from model.tokenizer import train_tokenizer
from model.transformer import Transformer


def test_quick_parity_lowers_the_counts_and_keeps_smaller_ones() -> None:
    full, _ = parse_args([])
    quick, _ = parse_args(["--quick-parity"])
    assert (quick.parity_inputs, quick.beam_inputs) == (QUICK_PARITY_INPUTS, QUICK_BEAM_INPUTS)
    assert full.parity_inputs > QUICK_PARITY_INPUTS and full.beam_inputs > QUICK_BEAM_INPUTS
    fewer, _ = parse_args(["--quick-parity", "--parity-inputs", "5", "--beam-inputs", "2"])
    assert (fewer.parity_inputs, fewer.beam_inputs) == (5, 2)


def test_quick_parity_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    assert "--quick-parity" in capsys.readouterr().out


@pytest.mark.slow
def test_a_quick_export_logs_its_parity_plan_and_records_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    texts = ["one thousand and two", "mil doscientos", "2024-01-01", "The report mentions 12 cases."] * 20
    tokenizer = train_tokenizer(texts, vocab_size=300)
    tokenizer.save(str(checkpoint / "tokenizer.json"))
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
    save_checkpoint(checkpoint, Transformer(config), metadata={"step": 0, "train": {"max_length": 64}})
    out = tmp_path / "models" / "m" / "1"

    with caplog.at_level(logging.INFO, logger="export"):
        code = main(["--checkpoint", str(checkpoint), "--out", str(out), "--quick-parity", "--no-int8", "--no-fp16"])

    assert code == 0
    assert f"parity: greedy decoding of {QUICK_PARITY_INPUTS} inputs" in caplog.text
    parity = json.loads((out / "manifest.json").read_text())["parity"]
    assert (parity["inputs"], parity["beam_inputs"]) == (QUICK_PARITY_INPUTS, QUICK_BEAM_INPUTS)
