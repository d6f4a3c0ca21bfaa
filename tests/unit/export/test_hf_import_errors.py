"""`python -m export --from-transformers`: what it refuses, in one line naming the problem, before
anything is loaded or written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from export.__main__ import main  # noqa: E402


def _run(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--from-transformers", str(source), "--out", str(tmp_path / "models" / "x" / "1")])
    err = capsys.readouterr().err.strip()
    assert not (tmp_path / "models" / "x" / "1").exists()
    return code, err


def test_missing_config_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hf").mkdir()
    code, err = _run(tmp_path / "hf", tmp_path, capsys)
    assert code == 2 and err == f"error: {tmp_path / 'hf' / 'config.json'} is missing"


def test_unsupported_family_lists_the_supported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text(json.dumps({"model_type": "pegasus"}))
    code, err = _run(tmp_path / "hf", tmp_path, capsys)
    assert (
        code == 2
        and "'pegasus' is not supported; supported: bart, m2m_100, marian, mbart, mt5, t5" in err
        and "\n" not in err
    )


def test_missing_tokenizer_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text(json.dumps({"model_type": "marian", "vocab_size": 10}))
    (tmp_path / "hf" / "source.spm").write_bytes(b"")
    code, err = _run(tmp_path / "hf", tmp_path, capsys)
    assert code == 2 and err == f"error: {tmp_path / 'hf' / 'target.spm'} is missing"


def test_missing_weights_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.integration.hf_checkpoints import marian_checkpoint

    source = marian_checkpoint(tmp_path / "hf")
    (source / "model.safetensors").unlink()
    capsys.readouterr()  # save_pretrained's progress bar
    code, err = _run(source, tmp_path, capsys)
    assert code == 2 and err.startswith(f"error: {source / 'model.safetensors'} is missing")


@pytest.mark.parametrize(
    ("files", "config", "reason"),
    [
        ({"tokenizer_config.json": {"separate_vocabs": True}}, {}, "tokenizer_config.json has separate_vocabs"),
        ({"target_vocab.json": {"</s>": 0, "<unk>": 1}}, {}, "target_vocab.json exists"),
        ({}, {"decoder_vocab_size": 12}, "config.json's decoder_vocab_size 12 != vocab_size 10"),
    ],
    ids=["tokenizer-config", "target-vocab", "decoder-vocab-size"],
)
def test_marian_separate_vocabularies_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, object], config: dict[str, object], reason: str
) -> None:
    """Refused before anything else is read (no source.spm here), saying why and what says so."""
    source = tmp_path / "hf"
    source.mkdir()
    (source / "config.json").write_text(json.dumps({"model_type": "marian", "vocab_size": 10, **config}))
    for name, content in files.items():
        (source / name).write_text(json.dumps(content))
    code, err = _run(source, tmp_path, capsys)
    assert code == 2 and "\n" not in err
    assert err == (
        f"error: {source}: Marian with separate source and target vocabularies is not imported ({reason}): "
        "atento's model directory has one tokenizer.json for sources and outputs alike (docs/model-directory.md)"
    )
