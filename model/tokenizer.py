"""Train and wrap the byte-level BPE subword tokenizer shared by training, export and the service.

Everything needed to decode lives in tokenizer.json, so the service loads it with `tokenizers` alone.
Imports nothing from this repo.
"""

from __future__ import annotations

import functools
import json
import random
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

    def split_tokens(self, ids: Sequence[int], rng: random.Random, probability: float) -> list[int]:
        """Undo each BPE merge with `probability`, recursively: the same text in a finer segmentation.

        BPE-dropout (Provilkov et al., 2020) done by un-merging, so it follows the caller's seeded
        `rng` (the library's own dropout draws from an unseedable generator). In training it makes
        the model emit tokens that canonical segmentation keeps as intermediate steps of longer
        merges ("cto" on the way to "ctober"), and copy words by their pieces rather than memorize them.
        """
        if probability <= 0.0:
            return list(ids)
        out: list[int] = []
        stack = list(reversed(ids))
        while stack:
            token = stack.pop()
            parents = self._merge_parents.get(token)
            if parents is not None and rng.random() < probability:
                stack.extend(reversed(parents))
            else:
                out.append(token)
        return out

    @functools.cached_property
    def _merge_parents(self) -> dict[int, tuple[int, int]]:
        return _merge_parents(self._tok)  # only training with segmentation noise needs it

    def decode(self, ids: Sequence[int]) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=True)

    def id_to_token(self, token_id: int) -> str | None:
        return self._tok.id_to_token(token_id)


def _merge_parents(tok: tokenizers.Tokenizer) -> dict[int, tuple[int, int]]:
    """For every token a BPE merge made, the two tokens it was merged from (the first merge that made it).

    Merges inside one character (the UTF-8 bytes of "ó") are left out: splitting them teaches
    nothing about copying, and a lone byte is not text."""
    model = json.loads(tok.to_str())["model"]
    vocab: dict[str, int] = model.get("vocab", {})
    parents: dict[int, tuple[int, int]] = {}
    for merge in model.get("merges", []):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        merged = vocab.get(left + right)
        if merged is None or merged in parents or left not in vocab or right not in vocab:
            continue
        if len(tok.decode([merged])) > 1:
            parents[merged] = (vocab[left], vocab[right])
    return parents
