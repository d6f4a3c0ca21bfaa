"""The exported tiny model against PyTorch on 200 held-out inputs: greedy at batch 1 and 16 (mixed
lengths, padding), beam search, logits and attention tolerances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from export.config import ExportConfig
from export.heldout import held_out_pairs
from export.parity import OnnxSeq2Seq, check_parity, onnx_greedy
from model.checkpoint import load_checkpoint
from model.decoding import greedy_decode

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup(tiny_checkpoint_dir: Path, tiny_model_dir: Path):  # type: ignore[no-untyped-def]
    torch.set_num_threads(1)
    checkpoint = load_checkpoint(tiny_checkpoint_dir)
    manifest = json.loads((tiny_model_dir / "manifest.json").read_text())
    runner = OnnxSeq2Seq(tiny_model_dir / "encoder.onnx", tiny_model_dir / "decoder.onnx", checkpoint.config)
    held_out = held_out_pairs(
        checkpoint.tokenizer_path,
        checkpoint.metadata,
        count=200,
        split="test",
        seed=1234,
        max_source_tokens=manifest["max_source_tokens"],
        max_target_tokens=manifest["max_target_tokens"],
    )
    return checkpoint, runner, held_out


def test_parity_on_200_inputs_batch_1_and_16_greedy_and_beam(setup) -> None:  # type: ignore[no-untyped-def]
    checkpoint, runner, held_out = setup
    config = ExportConfig(parity_inputs=200, parity_batch_sizes=(1, 16), beam_inputs=200)
    report = check_parity(checkpoint.model, runner, held_out.sources, held_out.references, config, max_new_tokens=32)
    assert report.inputs == 200
    assert report.failures == []
    assert report.greedy_equal and report.beam_equal
    assert report.logits_max_abs <= 1e-4 and report.states_max_abs <= 1e-4
    assert report.attention_max_abs <= 1e-5


def test_batch_of_16_has_padding_and_matches_batch_of_1(setup) -> None:  # type: ignore[no-untyped-def]
    checkpoint, runner, held_out = setup
    sources = held_out.sources[:16]
    assert len({len(s) for s in sources}) > 1  # mixed lengths, so the batch is padded
    batched = onnx_greedy(runner, sources, max_new_tokens=32)
    single = [onnx_greedy(runner, [s], max_new_tokens=32)[0] for s in sources]
    reference = [h.tokens for h in greedy_decode(checkpoint.model, sources, max_new_tokens=32)]
    assert batched == reference
    assert single == reference


def test_a_perturbed_model_fails_parity(setup) -> None:  # type: ignore[no-untyped-def]
    checkpoint, runner, held_out = setup
    perturbed = load_checkpoint(checkpoint.directory).model
    with torch.no_grad():
        perturbed.decoder_norm.bias.add_(1e-2)
    report = check_parity(
        perturbed,
        runner,
        held_out.sources[:4],
        held_out.references[:4],
        ExportConfig(parity_batch_sizes=(1,), beam_inputs=1),
        max_new_tokens=4,
    )
    assert not report.passed
    assert any("logits" in failure for failure in report.failures)
