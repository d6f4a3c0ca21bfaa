"""Checkpoints as safetensors + JSON, never pickle.

A checkpoint is a directory:
  model.safetensors      weights
  config.json            {"model": ModelConfig, "train": TrainConfig as given, "step": N, ...}
  tokenizer.json         the tokenizer the ids refer to
  optimizer.safetensors  AdamW moments, so a resumed run continues exactly (optional)
Imports only model/.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, load_model, save_file, save_model

from model.config import ModelConfig
from model.transformer import Transformer

WEIGHTS = "model.safetensors"
CONFIG = "config.json"
TOKENIZER = "tokenizer.json"
OPTIMIZER = "optimizer.safetensors"


class CheckpointError(Exception):
    """A checkpoint directory is missing, incomplete or inconsistent."""


@dataclass
class Checkpoint:
    model: Transformer
    config: ModelConfig
    directory: Path
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def tokenizer_path(self) -> Path:
        return self.directory / TOKENIZER


def _write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(temporary, path)


def save_checkpoint(
    directory: Path,
    model: Transformer,
    *,
    metadata: dict[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
) -> None:
    """Write weights, optimizer moments and metadata; config.json is written last, so a directory
    with a config.json is always complete."""
    directory.mkdir(parents=True, exist_ok=True)
    save_model(model, str(directory / (WEIGHTS + ".tmp")))
    os.replace(directory / (WEIGHTS + ".tmp"), directory / WEIGHTS)
    if optimizer is not None:
        save_file(optimizer_tensors(model, optimizer), str(directory / (OPTIMIZER + ".tmp")))
        os.replace(directory / (OPTIMIZER + ".tmp"), directory / OPTIMIZER)
    _write_json_atomically(
        directory / CONFIG,
        {**metadata, "model": model.config.to_dict(), "config_fingerprint": model.config.fingerprint()},
    )


def optimizer_tensors(model: Transformer, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    names = {id(p): n for n, p in model.named_parameters()}
    tensors: dict[str, torch.Tensor] = {}
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            for key, value in optimizer.state.get(parameter, {}).items():
                tensors[f"{names[id(parameter)]}::{key}"] = torch.as_tensor(value).detach().clone().contiguous()
    return tensors


def restore_optimizer(directory: Path, model: Transformer, optimizer: torch.optim.Optimizer) -> None:
    path = directory / OPTIMIZER
    if not path.exists():
        raise CheckpointError(f"{path} is missing: cannot resume the optimizer exactly")
    tensors = load_file(str(path))
    for name, parameter in model.named_parameters():
        state = {key.split("::", 1)[1]: value for key, value in tensors.items() if key.startswith(name + "::")}
        if state:
            optimizer.state[parameter] = state


def load_checkpoint(directory: Path | str) -> Checkpoint:
    """Rebuild the model from a checkpoint directory alone.

    Raises:
        CheckpointError: naming the missing or inconsistent file.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint directory {directory} does not exist")
    for name in (CONFIG, WEIGHTS, TOKENIZER):
        if not (directory / name).is_file():
            raise CheckpointError(f"{directory / name} is missing")
    try:
        metadata = json.loads((directory / CONFIG).read_text())
        config = ModelConfig.from_dict(metadata["model"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{directory / CONFIG} is not a valid checkpoint config: {error}") from error
    if metadata.get("config_fingerprint") not in (None, config.fingerprint()):
        raise CheckpointError(f"{directory / CONFIG}: config_fingerprint does not match its model config")
    model = Transformer(config)
    try:
        missing, unexpected = load_model(model, str(directory / WEIGHTS), strict=False)
    except Exception as error:  # safetensors raises several types for corrupt or mismatched files
        raise CheckpointError(f"{directory / WEIGHTS} does not match the config: {error}") from error
    if missing or unexpected:
        raise CheckpointError(
            f"{directory / WEIGHTS} does not match the config: missing {sorted(missing)[:5]}, "
            f"unexpected {sorted(unexpected)[:5]}"
        )
    vocab_in_tokenizer = len(json.loads((directory / TOKENIZER).read_text())["model"]["vocab"])
    if vocab_in_tokenizer > config.vocab_size:
        raise CheckpointError(
            f"{directory / TOKENIZER} has {vocab_in_tokenizer} tokens but the model only {config.vocab_size}"
        )
    model.eval()
    return Checkpoint(model=model, config=config, directory=directory, metadata=metadata)
