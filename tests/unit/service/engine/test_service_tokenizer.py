from __future__ import annotations

import tokenizers
from tokenizers import decoders, models, pre_tokenizers, trainers

from service.engine.tokenizer import Tokenizer


def tiny_tokenizer() -> Tokenizer:
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
    return Tokenizer(tok, eos_id=2)


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
