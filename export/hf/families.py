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
from export.hf.tokenizer import marian_tokenizer


@dataclass(frozen=True)
class Family:
    model_type: str
    encoder_graph: Callable[[Any], nn.Module]
    decoder_graph: Callable[[Any], nn.Module]
    tokenizer: Callable[[Path, dict[str, Any]], tokenizers.Tokenizer]  # (directory, config.json) -> tokenizer.json
    reference_tokenizer: str  # the transformers class the converted tokenizer is checked against
    needs: str  # what the Hugging Face directory must hold besides config.json and the weights (README)


MARIAN = BartStyle(positions="sinusoidal", pre_norm=False, layernorm_embedding=False, final_layer_norm=False)

FAMILIES: dict[str, Family] = {
    "marian": Family(
        model_type="marian",
        encoder_graph=lambda model: BartEncoderGraph(model, MARIAN),
        decoder_graph=lambda model: BartDecoderGraph(model, MARIAN),
        tokenizer=marian_tokenizer,
        reference_tokenizer="MarianTokenizer",
        needs="source.spm, target.spm, vocab.json (one shared vocabulary)",
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
