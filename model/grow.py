"""`python -m model.grow`: a checkpoint with more encoder or decoder layers that computes exactly what it did.

Each new layer is appended on top of its stack with its attention output projections and its feed-forward
block's outer layer set to zero, so every sublayer adds nothing to the residual stream and the grown model's
outputs are the original's (pre-norm only: a post-norm layer renormalizes its input even when the sublayer adds
nothing). Training it further (`python -m model.train --init-from`) starts from what the smaller model knew and
gives the new layers their weights, instead of paying for a run from scratch ("Deep encoder, shallow decoder",
Kasai et al., 2021, for why a deeper encoder costs a decoder step nothing). Imports only model/.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

from model.checkpoint import TOKENIZER, CheckpointError, load_checkpoint, save_checkpoint
from model.layers import EncoderLayer
from model.transformer import Transformer


def silence(layer: EncoderLayer) -> None:
    """Zero what each of the layer's residual blocks adds (its output projections, weights and biases)."""
    outputs: list[nn.Linear] = [layer.self_attention.output, layer.feed_forward.outer]
    cross_attention = getattr(layer, "cross_attention", None)
    if cross_attention is not None:
        outputs.append(cross_attention.output)
    with torch.no_grad():
        for linear in outputs:
            linear.weight.zero_()
            linear.bias.zero_()


def grown(model: Transformer, *, encoder_layers: int, decoder_layers: int, seed: int) -> Transformer:
    """A model with `encoder_layers` and `decoder_layers` (at least the model's), its own layers first.

    Raises:
        CheckpointError: fewer layers than the model has, nothing to add, or a post-norm model.
    """
    config = model.config
    if encoder_layers < config.n_encoder_layers or decoder_layers < config.n_decoder_layers:
        raise CheckpointError(
            f"growing cannot remove layers: the model has {config.n_encoder_layers} + {config.n_decoder_layers}, "
            f"asked for {encoder_layers} + {decoder_layers}"
        )
    if (encoder_layers, decoder_layers) == (config.n_encoder_layers, config.n_decoder_layers):
        raise CheckpointError(f"the model already has {encoder_layers} + {decoder_layers} layers: nothing to add")
    if not config.pre_norm:
        raise CheckpointError("only a pre-norm model can grow unchanged: a post-norm layer renormalizes its input")
    torch.manual_seed(seed)  # the new layers' query, key, value and inner weights
    bigger = Transformer(dataclasses.replace(config, n_encoder_layers=encoder_layers, n_decoder_layers=decoder_layers))
    _new_layer_weights, unexpected = bigger.load_state_dict(model.state_dict(), strict=False)
    if unexpected:
        raise CheckpointError(f"the grown model lacks weights the checkpoint has: {sorted(unexpected)[:5]}")
    for layer in list(bigger.encoder_layers)[config.n_encoder_layers :]:
        silence(layer)
    for layer in list(bigger.decoder_layers)[config.n_decoder_layers :]:
        silence(layer)
    bigger.eval()
    return bigger


def grow_checkpoint(directory: Path, out: Path, *, encoder_layers: int, decoder_layers: int, seed: int) -> None:
    if out.exists() and any(out.iterdir()):
        raise CheckpointError(f"{out} exists and is not empty: a grown model is written to a directory of its own")
    checkpoint = load_checkpoint(directory)
    model = grown(checkpoint.model, encoder_layers=encoder_layers, decoder_layers=decoder_layers, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / TOKENIZER).write_bytes(checkpoint.tokenizer_path.read_bytes())
    save_checkpoint(
        out,
        model,
        metadata={
            "step": checkpoint.metadata.get("step", 0),
            "train": checkpoint.metadata.get("train", {}),  # the export reads its task and length
            "grown_from": {
                "checkpoint": str(directory),
                "layers": [checkpoint.config.n_encoder_layers, checkpoint.config.n_decoder_layers],
            },
        },
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.grow", description=__doc__)
    parser.add_argument("checkpoint", type=Path, help="the checkpoint directory to grow")
    parser.add_argument("--out", type=Path, required=True, help="the grown checkpoint's directory")
    parser.add_argument(
        "--encoder-layers", type=int, default=None, help="encoder layers after growing (default: as is)"
    )
    parser.add_argument(
        "--decoder-layers", type=int, default=None, help="decoder layers after growing (default: as is)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds the new layers' weights that are not zeroed")
    args = parser.parse_args(argv)
    try:
        config = load_checkpoint(args.checkpoint).config
        grow_checkpoint(
            args.checkpoint,
            args.out,
            encoder_layers=config.n_encoder_layers if args.encoder_layers is None else args.encoder_layers,
            decoder_layers=config.n_decoder_layers if args.decoder_layers is None else args.decoder_layers,
            seed=args.seed,
        )
    except CheckpointError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
