"""The local Hugging Face model directory: which files it must have, and loading it with transformers
(eager attention, no download). A missing or unreadable file is one `HfCheckpointError` line naming it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import transformers

from model.checkpoint import CheckpointError

CONFIG = "config.json"
GENERATION_CONFIG = "generation_config.json"
WEIGHTS = ("model.safetensors", "model.safetensors.index.json")  # never pickle (pytorch_model.bin)


class HfCheckpointError(CheckpointError):
    """The Hugging Face directory is missing a file, unreadable, or of a family atento cannot serve."""


@dataclass(frozen=True)
class HfCheckpoint:
    directory: Path
    config: dict[str, Any]  # config.json as written
    generation: dict[str, Any]  # generation_config.json, or {} when the directory has none
    model: Any  # the transformers *ForConditionalGeneration / MarianMTModel, eval mode, float32

    @property
    def model_type(self) -> str:
        return str(self.config["model_type"])


def read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise HfCheckpointError(f"{path} is missing")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HfCheckpointError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise HfCheckpointError(f"{path} must hold a JSON object")
    return data


def require_files(directory: Path, names: tuple[str, ...]) -> None:
    """Raises HfCheckpointError naming the first of `names` missing from `directory`."""
    for name in names:
        if not (directory / name).is_file():
            raise HfCheckpointError(f"{directory / name} is missing")


def read_config(directory: Path) -> dict[str, Any]:
    if not directory.is_dir():
        raise HfCheckpointError(f"{directory} is not a directory")
    config = read_json(directory / CONFIG)
    if not isinstance(config.get("model_type"), str):
        raise HfCheckpointError(f"{directory / CONFIG} has no model_type")
    return config


def load_model(directory: Path, config: dict[str, Any]) -> HfCheckpoint:
    """Load the weights with transformers, offline, float32, eager attention (which returns the probabilities).

    Raises:
        HfCheckpointError: no safetensors weights, or transformers cannot load them.
    """
    if not any((directory / name).is_file() for name in WEIGHTS):
        raise HfCheckpointError(
            f"{directory / WEIGHTS[0]} is missing (safetensors weights only; convert pytorch_model.bin with "
            "save_pretrained(safe_serialization=True))"
        )
    generation = read_json(directory / GENERATION_CONFIG) if (directory / GENERATION_CONFIG).exists() else {}
    try:
        model = transformers.AutoModelForSeq2SeqLM.from_pretrained(
            str(directory), local_files_only=True, attn_implementation="eager", dtype=torch.float32
        )
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        raise HfCheckpointError(f"{directory}: transformers cannot load the model: {error}") from error
    model.eval()
    return HfCheckpoint(directory=directory, config=config, generation=generation, model=model)
