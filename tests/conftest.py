"""Shared fixtures: a tiny model trained on the bundled generator and exported once per session.

`tiny_checkpoint_dir` is a checkpoint (model.safetensors, config.json, tokenizer.json);
`tiny_model_dir` is its model directory (docs/model-directory.md), for the export, engine and HTTP tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.integration.hf_checkpoints import HfImports

# Small enough to train, export and parity-check in well under a minute on one core.
TINY_MODEL = {
    "d_model": 32,
    "n_heads": 2,
    "n_encoder_layers": 2,
    "n_decoder_layers": 2,
    "d_ff": 64,
    "dropout": 0.0,
    "max_positions": 129,
}
TINY_TRAIN = {
    "steps": 250,
    "batch_size": 16,
    "warmup_steps": 50,
    "learning_rate": 3e-3,
    "vocab_size": 500,
    "tokenizer_corpus": 2000,
    "valid_every": 10**6,
    "valid_size": 16,
    "checkpoint_every": 10**6,
    "max_length": 192,
    "threads": 1,
    "device": "cpu",
    "seed": 0,
}
# The session fixture checks parity on a sample; tests/integration/test_export_parity.py runs the full 200.
# No edit guard or segmentation in its manifest: the engine tests compare its raw outputs with PyTorch's
# (tests/integration/test_text_rules.py adds them to a copy).
TINY_EXPORT = {"parity_inputs": 32, "beam_inputs": 8, "max_new_tokens": 32, "text_rules": False}


@pytest.fixture(scope="session")
def tiny_checkpoint_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch

    from model.config import ModelConfig
    from model.train import TrainConfig, train

    threads = torch.get_num_threads()
    directory = tmp_path_factory.mktemp("tiny") / "checkpoint"
    try:
        train(TrainConfig(out=str(directory), **TINY_TRAIN), ModelConfig(**TINY_MODEL), progress=False)
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(False)  # train() turns it on process-wide
    (directory / "optimizer.safetensors").unlink(missing_ok=True)
    return directory


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_checkpoint_dir: Path) -> Path:
    from export.build import build_model_directory
    from export.config import ExportConfig

    out = tiny_checkpoint_dir.parent / "models" / "tiny" / "1"
    build_model_directory(ExportConfig(checkpoint=str(tiny_checkpoint_dir), out=str(out), **TINY_EXPORT))
    return out


@pytest.fixture(scope="session")
def hf_imports(tmp_path_factory: pytest.TempPathFactory) -> HfImports:
    pytest.importorskip("transformers")
    pytest.importorskip("sentencepiece")
    from tests.integration.hf_checkpoints import HfImports

    return HfImports(tmp_path_factory)


@pytest.fixture(scope="session")
def imported_model_dir(hf_imports: HfImports) -> Path:
    """A tiny random Hugging Face Marian (tests/integration/hf_checkpoints.py: SentencePiece pieces, <pad> as
    decoder start) imported by `python -m export --from-transformers`, once per session; offline."""
    from tests.integration.hf_checkpoints import marian_checkpoint

    return hf_imports.get("marian", marian_checkpoint)[1]


@pytest.fixture(scope="session", params=["tiny", "imported"])
def served_model_dir(request: pytest.FixtureRequest) -> Path:
    """The reliability, fuzz and viewer tests run on atento's own tiny model and on an imported one."""
    name = "tiny_model_dir" if request.param == "tiny" else "imported_model_dir"
    return Path(request.getfixturevalue(name))
