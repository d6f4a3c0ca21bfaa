"""The subword tokenizer round-trips any Unicode text, splits digits, and keeps special ids fixed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from model.tokenizer import SPECIAL_TOKENS, Tokenizer

VOCAB_SIZE = 600  # the size of the shared `tok` fixture (conftest.py)


@pytest.fixture(scope="module")
def raw(tok: Tokenizer, tmp_path_factory: pytest.TempPathFactory) -> tokenizers.Tokenizer:
    """tokenizer.json loaded the way the service does: `tokenizers` only, no model/ import."""
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tok.save(path)
    loaded = tokenizers.Tokenizer.from_file(str(path))
    loaded.encode_special_tokens = True
    return loaded


def test_special_ids_are_fixed(tok: Tokenizer) -> None:
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id, tok.mask_id) == (0, 1, 2, 3, 4)
    assert [tok.id_to_token(i) for i in range(5)] == list(SPECIAL_TOKENS)
    assert tok.vocab_size == VOCAB_SIZE


def test_no_specials_added_on_encode(tok: Tokenizer) -> None:
    ids = tok.encode("hola")
    assert tok.bos_id not in ids and tok.eos_id not in ids


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_unicode_round_trips(tok: Tokenizer, raw: tokenizers.Tokenizer, text: str) -> None:
    assert tok.decode(tok.encode(text)) == text
    assert raw.decode(raw.encode(text, add_special_tokens=False).ids, skip_special_tokens=True) == text


@pytest.mark.parametrize(
    "text",
    [
        "  dos  espacios\t\ty\n\nlíneas ",
        "▁ metaspace ▁▁",
        "e\u0301 combining",
        "😀👩‍👩‍👧 emoji",
        "\x00\x1f\x7f",
        "<s> literal </s><pad>",
        "El 3 de mayo de 2001.",
    ],
)
def test_tricky_text_round_trips(tok: Tokenizer, text: str) -> None:
    assert tok.decode(tok.encode(text)) == text


def test_decode_skips_specials(tok: Tokenizer) -> None:
    ids = tok.encode("hola")
    assert tok.decode([tok.bos_id, *ids, tok.eos_id, tok.pad_id]) == "hola"


def test_digits_are_one_per_token(tok: Tokenizer) -> None:
    ids = tok.encode("1234567890 y 2001-05-03")
    tokens = [tok.id_to_token(i) for i in ids]
    assert [t for t in tokens if any(c.isdigit() for c in t)] == list("123456789020010503")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_offsets_are_character_spans(tok: Tokenizer, text: str) -> None:
    ids, offsets = tok.encode_with_offsets(text)
    assert len(ids) == len(offsets)
    for start, end in offsets:
        assert 0 <= start <= end <= len(text)


def test_offsets_cover_non_ascii_text(tok: Tokenizer) -> None:
    text = "año 😀 ñandú"
    ids, offsets = tok.encode_with_offsets(text)
    assert offsets[0][0] == 0 and offsets[-1][1] == len(text)
    # Tokens holding bytes of one character (the emoji's 4 bytes) share that character's span; a token
    # that merged the space before it with its first byte spans both, and holds the next one's span.
    assert all(
        a == b or a[1] <= b[0] or a[0] <= b[0] <= b[1] <= a[1] for a, b in zip(offsets[:-1], offsets[1:], strict=True)
    )
    assert {i for s, e in offsets for i in range(s, e)} == set(range(len(text)))
    emoji = text.index("😀")
    holding_emoji = [i for i, (s, e) in zip(ids, offsets, strict=True) if s <= emoji < e]
    assert tok.decode(holding_emoji).strip() == "😀"


def test_save_and_load(tok: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    loaded = Tokenizer.from_file(path)
    text = "Nos vemos el 29 nov 2026, ¿vale?"
    assert loaded.encode(text) == tok.encode(text)
    assert loaded.vocab_size == tok.vocab_size


@settings(max_examples=50, deadline=None)
@given(text=st.text(max_size=60), seed=st.integers(0, 2**32 - 1))
def test_split_tokens_keeps_the_text(tok: Tokenizer, text: str, seed: int) -> None:
    ids = tok.encode(text)
    split = tok.split_tokens(ids, random.Random(seed), 0.3)
    assert tok.decode(split) == text
    assert len(split) >= len(ids)


def test_split_tokens_is_seeded_and_reaches_every_merge(tok: Tokenizer) -> None:
    text = "La obra costó trece dólares, dijo el arquitecto."
    ids = tok.encode(text)
    assert tok.split_tokens(ids, random.Random(1), 0.0) == ids
    assert tok.split_tokens(ids, random.Random(7), 0.2) == tok.split_tokens(ids, random.Random(7), 0.2)
    finest = tok.split_tokens(ids, random.Random(0), 1.0)
    # Every merge undone: only single characters remain (a multi-byte character stays one token).
    assert all(len(tok.decode([i])) == 1 for i in finest)
    assert len(finest) == len(text)
