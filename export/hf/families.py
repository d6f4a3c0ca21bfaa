"""The Hugging Face families atento imports, by config.json's `model_type`: how to wrap each one's
graphs and build its tokenizer. A family not listed here is refused, naming the supported ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tokenizers
from torch import nn

from export.hf.bart_graphs import BartDecoderGraph, BartEncoderGraph, BartStyle
from export.hf.checkpoint import HfCheckpointError
from export.hf.t5_graphs import T5DecoderGraph, T5EncoderGraph
from export.hf.tokenizer import fast_tokenizer, m2m100_tokenizer, marian_target_tokenizer, marian_tokenizer


@dataclass(frozen=True)
class Family:
    model_type: str
    encoder_graph: Callable[[Any], nn.Module]
    decoder_graph: Callable[[Any], nn.Module]
    tokenizer: Callable[[Path, dict[str, Any]], tokenizers.Tokenizer]  # (directory, config.json) -> tokenizer.json
    needs: str  # what the Hugging Face directory must hold besides config.json and the weights (README)
    # The output side's own tokenizer (target_tokenizer.json) when the decoder has a vocabulary of its own; a
    # family without it, or returning None, has one tokenizer.json for sources and outputs alike.
    target_tokenizer: Callable[[Path, dict[str, Any]], tokenizers.Tokenizer | None] | None = None


MARIAN = BartStyle(positions="sinusoidal", pre_norm=False, layernorm_embedding=False, final_layer_norm=False)
BART = BartStyle(positions="learned", pre_norm=False, layernorm_embedding=True, final_layer_norm=False)
MBART = BartStyle(positions="learned", pre_norm=True, layernorm_embedding=True, final_layer_norm=True)
M2M100 = BartStyle(positions="m2m100", pre_norm=True, layernorm_embedding=False, final_layer_norm=True)

FAMILIES: dict[str, Family] = {
    "marian": Family(
        model_type="marian",
        encoder_graph=lambda model: BartEncoderGraph(model, MARIAN),
        decoder_graph=lambda model: BartDecoderGraph(model, MARIAN),
        tokenizer=marian_tokenizer,
        needs="source.spm, target.spm, vocab.json (multilingual models' >>fra<< codes included), and target_vocab.json "
        "with separate vocabularies",
        target_tokenizer=marian_target_tokenizer,
    ),
    "bart": Family(
        model_type="bart",
        encoder_graph=lambda model: BartEncoderGraph(model, BART),
        decoder_graph=lambda model: BartDecoderGraph(model, BART),
        tokenizer=fast_tokenizer,
        needs="tokenizer.json (transformers' BART tokenizer)",
    ),
    "mbart": Family(
        model_type="mbart",
        encoder_graph=lambda model: BartEncoderGraph(model, MBART),
        decoder_graph=lambda model: BartDecoderGraph(model, MBART),
        tokenizer=fast_tokenizer,
        needs="tokenizer.json (the source language is the one the tokenizer was saved with)",
    ),
    "m2m_100": Family(
        model_type="m2m_100",
        encoder_graph=lambda model: BartEncoderGraph(model, M2M100),
        decoder_graph=lambda model: BartDecoderGraph(model, M2M100),
        tokenizer=m2m100_tokenizer,
        needs="tokenizer.json (NLLB's layout) or M2M100's sentencepiece.bpe.model + vocab.json (converted)",
    ),
    "t5": Family(
        model_type="t5",
        encoder_graph=T5EncoderGraph,
        decoder_graph=T5DecoderGraph,
        tokenizer=fast_tokenizer,
        needs="tokenizer.json (T5, Flan-T5 and T5 v1.1 save one)",
    ),
    "mt5": Family(
        model_type="mt5",
        encoder_graph=T5EncoderGraph,
        decoder_graph=T5DecoderGraph,
        tokenizer=fast_tokenizer,
        needs="tokenizer.json",
    ),
}


def family_of(config: dict[str, Any], *, where: Path) -> Family:
    """Raises HfCheckpointError for a model_type atento does not import, listing the ones it does."""
    model_type = str(config.get("model_type"))
    if model_type not in FAMILIES:
        raise HfCheckpointError(
            f"{where}: model_type {model_type!r} is not supported; supported: {', '.join(sorted(FAMILIES))}"
        )
    return FAMILIES[model_type]
