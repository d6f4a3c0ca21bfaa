"""The CTranslate2 conversion (bench/ct2.py) reproduces the PyTorch reference on a tiny random model:
greedy outputs equal and teacher-forced log-probabilities within float32 noise."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("ctranslate2")

from bench.ct2 import Ct2Seq2Seq, convert  # noqa: E402 - after the importorskip
from model.config import ModelConfig  # noqa: E402
from model.decoding import greedy_decode, pad_sources  # noqa: E402
from model.transformer import Transformer  # noqa: E402

VOCAB = 300
MAX_NEW_TOKENS = 20


def spread_model(*, pre_norm: bool) -> Transformer:
    """A random model whose greedy outputs depend on the source and the position (Xavier-initialized
    tiny models repeat one token), so a misplaced weight or position shows up."""
    torch.manual_seed(0)
    config = ModelConfig(
        vocab_size=VOCAB,
        d_model=32,
        n_heads=2,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        max_positions=64,
        pre_norm=pre_norm,
    )
    model = Transformer(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            parameter.normal_(0.0, parameter.shape[-1] ** -0.5 if parameter.dim() > 1 else 0.2)
            if "norm" in name and name.endswith("weight"):
                parameter.add_(1.0)
    return model


@pytest.mark.parametrize("pre_norm", [True, False])
def test_ctranslate2_matches_the_reference(tmp_path: Path, pre_norm: bool) -> None:
    model = spread_model(pre_norm=pre_norm)
    vocabulary = [f"t{i}" for i in range(VOCAB)]
    generator = torch.Generator().manual_seed(1)
    lengths = torch.randint(3, 20, (16,), generator=generator).tolist()
    sources = [torch.randint(5, VOCAB, (n,), generator=generator).tolist() + [model.config.eos_id] for n in lengths]
    reference = greedy_decode(model, sources, max_new_tokens=MAX_NEW_TOKENS)
    translator = Ct2Seq2Seq(convert(model, vocabulary, tmp_path / "ct2"), vocabulary, threads=1)

    assert translator.greedy(sources, max_new_tokens=MAX_NEW_TOKENS) == [list(h.tokens) for h in reference]
    assert len({h.tokens for h in reference}) > 1  # the outputs differ by source: not a degenerate model

    targets = [list(h.tokens) for h in reference]
    scored = translator.translator.score_batch(
        [[vocabulary[i] for i in s] for s in sources], [[vocabulary[i] for i in t] for t in targets]
    )
    src, src_mask = pad_sources(sources, model.config.pad_id)
    tgt = torch.tensor([[model.config.bos_id, *t[:-1]] for t in targets])
    with torch.no_grad():
        logits = model(src, tgt, src_mask, torch.ones_like(tgt, dtype=torch.bool))
    expected = logits.log_softmax(-1).gather(-1, torch.tensor(targets)[..., None])[..., 0]
    got = torch.tensor([s.log_probs[: len(t)] for s, t in zip(scored, targets, strict=True)])
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=0)


def test_conversion_leaves_the_model_untouched(tmp_path: Path) -> None:
    model = spread_model(pre_norm=True)
    before = {name: value.clone() for name, value in model.state_dict().items()}
    convert(model, [f"t{i}" for i in range(VOCAB)], tmp_path / "ct2", quantization="int8")
    assert all(torch.equal(value, before[name]) for name, value in model.state_dict().items())
