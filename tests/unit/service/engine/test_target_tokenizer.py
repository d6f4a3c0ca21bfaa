"""A model directory's optional target tokenizer (docs/model-directory.md, Marian with separate vocabularies):
the manifest fields that declare it, and the two sides load_tokenizers builds from them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import tokenizers
from tokenizers import models, pre_tokenizers

from service.engine.errors import ModelLoadError
from service.engine.model_dir import SourceVocabulary, load_model_directory
from service.engine.tokenizer import load_tokenizers

CONFIG = {"vocab_size": 6, "d_model": 8, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1}
# One id, another word on each side: "hola" is source id 3, "hello" target id 3.
SOURCE_WORDS = {"</s>": 0, "<unk>": 1, "<pad>": 2, "hola": 3, "mundo": 4, "casa": 5, "gato": 6, "perro": 7}
TARGET_WORDS = {"</s>": 0, "<unk>": 1, "<pad>": 2, "hello": 3, "world": 4, "house": 5}


def word_tokenizer(words: dict[str, int]) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["</s>", "<unk>", "<pad>"])
    return tok


def write_model(directory: Path, **fields: Any) -> Path:
    """A directory whose graphs are placeholders (load_model_directory reads only their hashes), with
    tokenizer.json the source side's and target_tokenizer.json the output side's, plus `fields` in the manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("encoder.onnx", "decoder.onnx"):
        (directory / name).write_bytes(name.encode())
    word_tokenizer(SOURCE_WORDS).save(str(directory / "tokenizer.json"))
    word_tokenizer(TARGET_WORDS).save(str(directory / "target_tokenizer.json"))
    names = ("encoder.onnx", "decoder.onnx", "tokenizer.json", "target_tokenizer.json")
    manifest = {
        "format": "atento-model/2",
        "name": "t",
        "version": "1",
        "config": CONFIG,
        "special_tokens": {"pad": 2, "bos": 2, "eos": 0, "unk": 1},
        "source_template": {"prefix": [], "suffix": [0], "match_special_tokens": True},
        "max_source_tokens": 16,
        "max_target_tokens": 16,
        "graphs": {"encoder": {"inputs": [], "outputs": []}, "decoder": {"inputs": [], "outputs": []}},
        "variants": {"fp32": {"encoder": "encoder.onnx", "decoder": "decoder.onnx"}},
        "default_variant": "fp32",
        "files": {n: hashlib.sha256((directory / n).read_bytes()).hexdigest() for n in names},
        **fields,
    }
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


TWO_SIDES = {"target_tokenizer": "target_tokenizer.json", "source_vocabulary": {"size": 6, "unk": 1}}


def test_sources_encode_with_tokenizer_json_and_outputs_decode_with_the_target_tokenizer(tmp_path: Path) -> None:
    model = load_model_directory(write_model(tmp_path, **TWO_SIDES))
    assert model.target_tokenizer == tmp_path / "target_tokenizer.json"
    assert model.source_vocabulary == SourceVocabulary(size=6, unk=1)
    sides = load_tokenizers(model)
    assert sides.separate
    assert sides.source.encode("hola mundo")[0] == [3, 4, 0]
    assert sides.output.decode([3, 4, 0]) == "hello world"  # EOS skipped
    assert sides.output.encode_plain("hello house") == [3, 5]  # forced targets and bad words
    assert sides.output.token_text(3) == "hello" and sides.source.token_text(3) == "hola"
    # The source's unknown rule is its own vocabulary's: "gato" (6) and "perro" (7) are past its 6 rows.
    assert sides.source.encode("casa gato perro")[0] == [5, 1, 1, 0]


def test_without_a_target_tokenizer_one_tokenizer_serves_both_sides(tmp_path: Path) -> None:
    directory = write_model(tmp_path)
    manifest = json.loads((directory / "manifest.json").read_text())
    del manifest["files"]["target_tokenizer.json"]
    (directory / "manifest.json").write_text(json.dumps(manifest))
    model = load_model_directory(directory)
    assert model.target_tokenizer is None and model.source_vocabulary is None
    sides = load_tokenizers(model)
    assert not sides.separate and sides.output is sides.source
    assert sides.output.decode([3, 4]) == "hola mundo"
    assert sides.source.encode("casa gato")[0] == [5, 1, 0]  # config's vocab_size (6) and special unk


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"target_tokenizer": "missing.json", "source_vocabulary": {"size": 6, "unk": 1}}, "target_tokenizer must"),
        ({"target_tokenizer": "target_tokenizer.json"}, "source_vocabulary ({'size', 'unk'}) must come with"),
        ({"source_vocabulary": {"size": 6, "unk": 1}}, "target_tokenizer must name a file"),
        ({**TWO_SIDES, "source_vocabulary": {"size": 6}}, "source_vocabulary: missing field 'unk'"),
        ({**TWO_SIDES, "source_vocabulary": {"size": 6, "unk": 6}}, "source_vocabulary.unk 6 is outside its size 6"),
    ],
    ids=["unlisted-file", "no-source-vocabulary", "no-target-tokenizer", "no-unk", "unk-outside"],
)
def test_a_malformed_output_side_is_a_startup_error_naming_the_field(
    tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ModelLoadError, match="manifest.json") as error:
        load_model_directory(write_model(tmp_path, **fields))
    assert message in str(error.value)


def test_a_leading_code_is_one_token_on_both_sides_when_the_template_says_so(tmp_path: Path) -> None:
    """Marian (source_template.leading_code): ">>...<<" first in a source or a forced target is one token, <unk>
    unless it is a code of the model's languages, as MarianTokenizer reads it; without the field, text as before."""
    template = {"prefix": [], "suffix": [0], "match_special_tokens": True, "leading_code": True}
    sides = load_tokenizers(load_model_directory(write_model(tmp_path, **TWO_SIDES, source_template=template)))
    assert sides.source.encode(">>xx<<hola")[0] == [1, 3, 0]
    assert sides.source.encode("hola>>xx<<")[0] == [1, 0]  # not first: part of a word (unknown here)
    assert sides.output.encode_plain(">>xx<<hello") == [1, 3]
    plain = load_tokenizers(load_model_directory(write_model(tmp_path / "plain", **TWO_SIDES)))
    assert plain.source.encode(">>xx<<hola")[0] == [1, 0]  # one unknown word
    assert plain.output.encode_plain(">>xx<<hello") == [1]
