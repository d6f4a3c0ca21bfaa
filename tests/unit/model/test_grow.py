"""`python -m model.grow`: more layers, the same outputs, and refusals by name where growing would change them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from model.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from model.config import ModelConfig
from model.grow import grown, main
from model.tokenizer import train_tokenizer
from model.transformer import Transformer

TEXTS = ["one thousand and two", "mil doscientos", "2024-01-01", "The report mentions 12 cases."] * 20


def tiny_model(*, pre_norm: bool = True, seed: int = 1) -> Transformer:
    torch.manual_seed(seed)
    config = ModelConfig(
        vocab_size=64,
        d_model=16,
        n_heads=2,
        n_encoder_layers=2,
        n_decoder_layers=1,
        d_ff=32,
        dropout=0.0,
        max_positions=64,
        pre_norm=pre_norm,
    )
    return Transformer(config).eval()


def logits_of(model: Transformer, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(5, 64, (3, 11), generator=generator)
    tgt = torch.randint(5, 64, (3, 7), generator=generator)
    src_mask = torch.ones_like(src, dtype=torch.bool)
    src_mask[0, 8:] = False  # a padded row
    with torch.no_grad():
        return model(src, tgt, src_mask, torch.ones_like(tgt, dtype=torch.bool))


@pytest.mark.parametrize(("encoder_layers", "decoder_layers"), [(4, 1), (2, 3), (5, 2)])
def test_a_grown_model_computes_what_the_model_did(encoder_layers: int, decoder_layers: int) -> None:
    model = tiny_model()
    bigger = grown(model, encoder_layers=encoder_layers, decoder_layers=decoder_layers, seed=3)
    assert (bigger.config.n_encoder_layers, bigger.config.n_decoder_layers) == (encoder_layers, decoder_layers)
    torch.testing.assert_close(logits_of(bigger), logits_of(model), rtol=0, atol=0)
    # Its own layers are the model's, weight for weight.
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(bigger.state_dict()[name], tensor, rtol=0, atol=0)


def test_the_new_layers_learn_what_the_old_ones_cannot_change() -> None:
    """Zeroed outputs are a starting point, not a frozen identity: one step of training moves the new layers."""
    bigger = grown(tiny_model(), encoder_layers=3, decoder_layers=1, seed=3).train()
    new_output = bigger.encoder_layers[2].self_attention.output.weight
    optimizer = torch.optim.SGD(bigger.parameters(), lr=0.1)
    logits = bigger(
        torch.randint(5, 64, (2, 9)),
        torch.randint(5, 64, (2, 5)),
        torch.ones(2, 9, dtype=torch.bool),
        torch.ones(2, 5, dtype=torch.bool),
    )
    logits.logsumexp(-1).mean().backward()
    optimizer.step()
    assert new_output.abs().sum() > 0


def test_growing_refuses_what_would_change_or_shrink_the_model() -> None:
    model = tiny_model()
    with pytest.raises(CheckpointError, match="cannot remove layers"):
        grown(model, encoder_layers=1, decoder_layers=2, seed=0)
    with pytest.raises(CheckpointError, match="nothing to add"):
        grown(model, encoder_layers=2, decoder_layers=1, seed=0)
    with pytest.raises(CheckpointError, match="post-norm"):
        grown(tiny_model(pre_norm=False), encoder_layers=3, decoder_layers=1, seed=0)


def test_the_command_writes_a_checkpoint_that_loads_and_says_where_it_came_from(tmp_path: Path) -> None:
    source = tmp_path / "small"
    source.mkdir()
    tokenizer = train_tokenizer(TEXTS, vocab_size=300)
    tokenizer.save(str(source / "tokenizer.json"))
    torch.manual_seed(1)
    config = dataclasses.replace(tiny_model().config, vocab_size=tokenizer.get_vocab_size())
    model = Transformer(config).eval()
    save_checkpoint(source, model, metadata={"step": 250, "train": {"task": "seq2seq", "max_length": 64}})
    out = tmp_path / "grown"
    assert main([str(source), "--out", str(out), "--encoder-layers", "4"]) == 0
    loaded = load_checkpoint(out)
    assert (loaded.config.n_encoder_layers, loaded.config.n_decoder_layers) == (4, 1)
    torch.testing.assert_close(logits_of(loaded.model), logits_of(model), rtol=0, atol=0)
    metadata = json.loads((out / "config.json").read_text())
    assert metadata["grown_from"] == {"checkpoint": str(source), "layers": [2, 1]}
    assert metadata["train"]["task"] == "seq2seq" and metadata["step"] == 250
    assert (out / "tokenizer.json").read_bytes() == (source / "tokenizer.json").read_bytes()
    # A second run into the same directory is refused, not mixed in.
    assert main([str(source), "--out", str(out), "--encoder-layers", "5"]) == 2
