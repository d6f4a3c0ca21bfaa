"""`python -m export --from-transformers`: what it refuses, in one line naming the problem, before
anything is loaded or written."""

from __future__ import annotations

import json
import shutil
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


def test_marian_decoder_vocab_size_without_separate_vocabs_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A decoder vocabulary of another size with one vocab.json: refused before anything else is read (no
    source.spm here), as MarianTokenizer would number the outputs by vocab.json."""
    source = tmp_path / "hf"
    source.mkdir()
    (source / "config.json").write_text(
        json.dumps({"model_type": "marian", "vocab_size": 10, "decoder_vocab_size": 12})
    )
    code, err = _run(source, tmp_path, capsys)
    assert code == 2 and "\n" not in err
    assert err == (
        f"error: {source}: config.json's decoder_vocab_size 12 != vocab_size 10, but tokenizer_config.json has no "
        "separate_vocabs: MarianTokenizer would number the outputs by vocab.json"
    )


@pytest.fixture(scope="module")
def separate_vocabs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.integration.hf_checkpoints import marian_separate_vocabs_checkpoint

    return marian_separate_vocabs_checkpoint(tmp_path_factory.mktemp("marian-vocabs") / "hf")


def _copy(checkpoint: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(checkpoint, tmp_path / "hf"))


def test_marian_separate_vocabularies_need_target_vocab_json(
    separate_vocabs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _copy(separate_vocabs, tmp_path)
    (source / "target_vocab.json").unlink()
    capsys.readouterr()
    code, err = _run(source, tmp_path, capsys)
    assert code == 2 and err == f"error: {source / 'target_vocab.json'} is missing"


def test_marian_target_vocabulary_must_be_the_decoders_size(
    separate_vocabs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _copy(separate_vocabs, tmp_path)
    target_vocab = json.loads((source / "target_vocab.json").read_text())
    del target_vocab["<pad>"]
    (source / "target_vocab.json").write_text(json.dumps(target_vocab))
    code, err = _run(source, tmp_path, capsys)
    size = len(target_vocab) + 1
    assert code == 2 and err == (
        f"error: {source / 'target_vocab.json'} has {size - 1} entries, config.json says {size}"
    )


def test_marian_decoder_special_ids_must_be_the_target_vocabularys(
    separate_vocabs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The decoder's EOS from generation_config.json is checked against target_vocab.json's </s>: outputs end and
    are decoded by the target vocabulary."""
    source = _copy(separate_vocabs, tmp_path)
    generation = json.loads((source / "generation_config.json").read_text())
    (source / "generation_config.json").write_text(json.dumps({**generation, "eos_token_id": 5}))
    code, err = _run(source, tmp_path, capsys)
    assert code == 2 and err.endswith(f"{source}: the decoder's eos id 5 is not target_vocab.json's </s> (0)")
