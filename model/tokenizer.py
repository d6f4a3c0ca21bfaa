"""Train and wrap the byte-level BPE subword tokenizer shared by training, export and the service.

Everything needed to decode lives in tokenizer.json, so the service loads it with `tokenizers` alone.
Imports nothing from this repo.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers, trainers

# Fixed ids: the BPE trainer adds special tokens first, in this order.
SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>", "<mask>")
PAD_ID, BOS_ID, EOS_ID, UNK_ID, MASK_ID = range(len(SPECIAL_TOKENS))
# Recommended for the bundled task: small enough that copying generalizes to unseen words.
DEFAULT_VOCAB_SIZE = 2000


def train_tokenizer(texts: Iterable[str], *, vocab_size: int = DEFAULT_VOCAB_SIZE) -> tokenizers.Tokenizer:
    """Train a byte-level BPE tokenizer on `texts`.

    Byte-level (not Metaspace + byte_fallback) because Metaspace turns a literal "▁" in the input
    into a space on decode; byte-level round-trips every Unicode string exactly. No normalizer (it
    would change the text) and no post-processor (the model code adds <s> and </s> itself).

    Args:
        texts: the training corpus, e.g. sources and targets of generated examples.
        vocab_size: total vocabulary size, including the 5 specials and the 256 byte symbols.

    Returns:
        A `tokenizers.Tokenizer` whose ids 0..4 are `SPECIAL_TOKENS`.
    """
    if vocab_size < len(SPECIAL_TOKENS) + 256:
        raise ValueError(f"vocab_size must be at least {len(SPECIAL_TOKENS) + 256}, got {vocab_size}")
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            # One token per digit, so numbers are copied digit by digit and never memorized.
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    for expected, token in enumerate(SPECIAL_TOKENS):
        if tok.token_to_id(token) != expected:
            raise RuntimeError(f"special token {token} got id {tok.token_to_id(token)}, expected {expected}")
    return tok


class Tokenizer:
    """Thin wrapper over `tokenizers.Tokenizer` with the special ids as attributes.

    Literal special-token text in the input ("<s>") is encoded as ordinary text, not as a special id.
    That flag is not stored in tokenizer.json: other loaders must set `encode_special_tokens = True`.
    """

    pad_id = PAD_ID
    bos_id = BOS_ID
    eos_id = EOS_ID
    unk_id = UNK_ID
    mask_id = MASK_ID

    def __init__(self, tok: tokenizers.Tokenizer) -> None:
        self._tok = tok
        self._tok.encode_special_tokens = True

    @classmethod
    def train(cls, texts: Iterable[str], *, vocab_size: int = DEFAULT_VOCAB_SIZE) -> Tokenizer:
        return cls(train_tokenizer(texts, vocab_size=vocab_size))

    @classmethod
    def from_file(cls, path: str | Path) -> Tokenizer:
        return cls(tokenizers.Tokenizer.from_file(str(path)))

    def save(self, path: str | Path) -> None:
        self._tok.save(str(path))

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and, per token, the (start, end) character offsets into `text`.

        A token holding part of a multi-byte character spans that whole character.
        """
        enc = self._tok.encode(text, add_special_tokens=False)
        return enc.ids, [(int(s), int(e)) for s, e in enc.offsets]

    def decode(self, ids: Sequence[int]) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=True)

    def id_to_token(self, token_id: int) -> str | None:
        return self._tok.id_to_token(token_id)
