from __future__ import annotations

import random
from collections.abc import Callable

import tokenizers
from tokenizers import decoders, models, pre_tokenizers, trainers

from service.engine.tokenizer import (
    ByteLevelDetokenizer,
    IncrementalDetokenizer,
    Tokenizer,
    byte_level_table,
    special_labels,
)


def tiny_tokenizer(fold: Callable[[str], str] | None = None) -> Tokenizer:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(["hello world", "año nuevo 2024"], trainer=trainer)
    return Tokenizer(tok, eos_id=2, fold=fold)


def test_encode_appends_eos_with_offsets() -> None:
    tok = tiny_tokenizer()
    ids, offsets = tok.encode("hello")
    assert ids[-1] == 2 and offsets[-1] == (5, 5)
    assert tok.decode(ids) == "hello"


def test_streamed_pieces_concatenate_to_the_text_even_inside_multibyte_characters() -> None:
    tok = tiny_tokenizer()
    text = "日本 año ✓ hello"
    ids = tok.encode_plain(text)
    stream = tok.detokenizer()
    pieces = [stream.push(i) for i in ids]
    pieces.append(stream.flush())
    assert "".join(pieces) == text
    assert all("\ufffd" not in p for p in pieces)


def test_byte_level_pieces_are_the_decoded_text_for_any_ids() -> None:
    """The byte table's pieces against decode: random ids (specials, lone bytes of a character, bytes that are
    no UTF-8 at all) concatenate to what the tokenizer decodes them to, and split as the windowed way does."""
    raw = coded_tokenizer(match_special_tokens=False)._tok  # a special token beyond the trained ones
    raw.add_tokens([tokenizers.AddedToken("añadido", special=False), tokenizers.AddedToken("Ġx y", special=False)])
    tok = Tokenizer(raw, eos_id=2)
    assert isinstance(tok.detokenizer(), ByteLevelDetokenizer)
    rng = random.Random(0)
    for _ in range(500):
        ids = [rng.randrange(tok.vocab_size) for _ in range(rng.randint(1, 30))]
        fast, windowed = tok.detokenizer(), IncrementalDetokenizer(tok)
        pieces = [fast.push(i) for i in ids] + [fast.flush()]
        assert "".join(pieces) == tok.decode(ids) == "".join([windowed.push(i) for i in ids] + [windowed.flush()])
    text = "日本 año ✓ hello añadido"
    fast, windowed = tok.detokenizer(), IncrementalDetokenizer(tok)
    ids = tok.encode_plain(text)
    assert [fast.push(i) for i in ids] == [windowed.push(i) for i in ids]
    # An id past the tokenizer (a model whose embeddings were padded) has no text, as decode gives it none.
    beyond = tok.detokenizer()
    assert beyond.push(tok.vocab_size + 7) == "" and tok.decode([tok.vocab_size + 7]) == ""


def test_other_decoders_stream_by_windows() -> None:
    tok = tiny_tokenizer()._tok
    tok.decoder = decoders.Metaspace()
    assert byte_level_table(tok) is None
    assert isinstance(Tokenizer(tok, eos_id=2).detokenizer(), IncrementalDetokenizer)


def coded_tokenizer(*, match_special_tokens: bool) -> Tokenizer:
    """The tiny tokenizer with a language code as an added special token, put before every source (NLLB's way)."""
    tok = tiny_tokenizer()._tok
    tok.add_special_tokens([tokenizers.AddedToken("eng_Latn", special=True, normalized=False)])
    code = tok.token_to_id("eng_Latn")
    return Tokenizer(tok, eos_id=2, prefix=[code], match_special_tokens=match_special_tokens)


def test_special_token_text_is_text_unless_the_manifest_says_to_match_it() -> None:
    text = "hello eng_Latn</s> world"
    matched, plain = coded_tokenizer(match_special_tokens=True), coded_tokenizer(match_special_tokens=False)
    code = matched.prefix[0]
    ids, offsets = matched.encode(text)
    # The prefix's code and the typed one; the typed EOS and the suffix's.
    assert ids.count(code) == 2 and ids.count(2) == 2
    assert offsets[ids.index(code, 1)] == (6, 14)  # the typed code spans its text
    ids, _ = plain.encode(text)
    assert ids.count(code) == 1 and ids.count(2) == 1  # atento's own models: the text of special tokens is text


def test_special_labels_name_the_template_and_the_language_codes() -> None:
    tok = coded_tokenizer(match_special_tokens=True)
    code = tok.prefix[0]
    labels = special_labels(tok, [*tok.prefix, *tok.suffix], codes={"eng_Latn": code, "fra_Latn": 999})
    assert labels == {code: "eng_Latn", 2: "</s>", 999: "fra_Latn"}
