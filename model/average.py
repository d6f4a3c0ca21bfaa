"""`python -m model.average`: one checkpoint whose weights are the weighted mean of several.

Averaging the weights of runs that start from the same checkpoint keeps what each learned and evens out
what each got wrong by chance (Vaswani et al. averaged their last checkpoints; Wortsman et al., "Model
soups", 2022, average fine-tunes of one start). The bundled model is such a mean (README, "The bundled
model"). Only checkpoints of one architecture, one tokenizer and one task can be averaged: anything else
has no meaningful mean, and is refused by name. Imports only model/.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from model.checkpoint import TOKENIZER, CheckpointError, load_checkpoint, save_checkpoint

# What the export reads from a checkpoint's training section (its task, its data, its trained length), and the
# checkpoint a fine-tune started from: checkpoints that differ in any of them were not trained for the same thing,
# or not from the same start.
TRAINING_FIELDS_THAT_MUST_AGREE = ("task", "data", "max_length", "init_from")


def average_checkpoints(directories: Sequence[Path], weights: Sequence[float] | None, out: Path) -> None:
    """Write to `out` the mean of the checkpoints' weights, each counted `weights[i]` (equal when None).

    Raises:
        CheckpointError: fewer than two checkpoints, weights that do not match them or are not positive,
            or checkpoints whose model config, tokenizer or training task differ.
    """
    if len(directories) < 2:
        raise CheckpointError(f"averaging needs at least two checkpoints, got {len(directories)}")
    weights = [1.0] * len(directories) if weights is None else list(weights)
    if len(weights) != len(directories):
        raise CheckpointError(f"{len(weights)} weights for {len(directories)} checkpoints")
    if not all(math.isfinite(weight) and weight > 0 for weight in weights):
        raise CheckpointError(f"every weight must be a positive number, got {weights}")
    if out.exists() and any(out.iterdir()):
        raise CheckpointError(f"{out} exists and is not empty: a mean is written to a directory of its own")
    checkpoints = [load_checkpoint(directory) for directory in directories]
    first = checkpoints[0]
    tokenizer_text = first.tokenizer_path.read_bytes()
    for other in checkpoints[1:]:
        if other.config != first.config:
            raise CheckpointError(f"{other.directory} has another model config than {first.directory}")
        if other.tokenizer_path.read_bytes() != tokenizer_text:
            raise CheckpointError(f"{other.directory / TOKENIZER} differs from {first.directory / TOKENIZER}")
        for name in TRAINING_FIELDS_THAT_MUST_AGREE:
            mine, theirs = first.metadata.get("train", {}).get(name), other.metadata.get("train", {}).get(name)
            if mine != theirs:
                raise CheckpointError(f"{other.directory} was trained with {name}={theirs!r}, not {mine!r}")
    total = sum(weights)
    states = [checkpoint.model.state_dict() for checkpoint in checkpoints]
    averaged = {
        name: sum(state[name].double() * (weight / total) for state, weight in zip(states, weights, strict=True)).to(
            tensor.dtype
        )
        for name, tensor in states[0].items()
    }
    model = first.model
    model.load_state_dict(averaged)
    out.mkdir(parents=True, exist_ok=True)
    (out / TOKENIZER).write_bytes(tokenizer_text)
    save_checkpoint(
        out,
        model,
        metadata={
            "step": max(int(checkpoint.metadata.get("step", 0)) for checkpoint in checkpoints),
            "train": first.metadata.get("train", {}),  # the first run's: the export reads its task and length
            "averaged_from": [
                {
                    "checkpoint": str(checkpoint.directory),
                    "weight": weight / total,
                    "step": checkpoint.metadata.get("step"),
                }
                for checkpoint, weight in zip(checkpoints, weights, strict=True)
            ],
        },
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.average", description=__doc__)
    parser.add_argument("checkpoints", nargs="+", type=Path, help="checkpoint directories of one model config")
    parser.add_argument("--out", type=Path, required=True, help="the averaged checkpoint's directory")
    parser.add_argument(
        "--weights", type=float, nargs="+", default=None, help="one per checkpoint, normalized (default: equal)"
    )
    args = parser.parse_args(argv)
    if args.out.resolve() in {directory.resolve() for directory in args.checkpoints}:
        sys.stderr.write("error: --out is one of the checkpoints being averaged\n")
        return 2
    try:
        average_checkpoints(args.checkpoints, args.weights, args.out)
    except CheckpointError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
