"""Import Hugging Face encoder-decoder checkpoints (`python -m export --from-transformers DIR`) into
atento's model directory. Uses transformers' own modules as the reference (the `hf` extra); the
service never imports anything from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from export.config import ExportConfig
from model.checkpoint import CheckpointError


def import_checkpoint(config: ExportConfig, *, replace: bool = False) -> Any:
    """`build_from_transformers` on `config.from_transformers`; a clear error without the `hf` extra.

    Raises:
        CheckpointError: transformers or sentencepiece is not installed, or the checkpoint is unusable.
    """
    try:
        from export.hf.build import build_from_transformers  # optional heavy dependency, imported on use
    except ModuleNotFoundError as error:
        raise CheckpointError(
            f"importing a Hugging Face checkpoint needs {error.name}: pip install 'atento[hf]'"
        ) from error
    return build_from_transformers(Path(config.from_transformers), config, replace=replace)
