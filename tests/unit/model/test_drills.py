"""Copy drills: every token of the vocabulary becomes a training target, never a number word or month."""

from __future__ import annotations

import random
from collections import Counter

from model.data import generate_examples
from model.drills import CATEGORY, CopyDrills
from model.tokenizer import Tokenizer
from model.words import forbidden_words


def test_drills_reach_every_token_of_the_vocabulary(tok: Tokenizer) -> None:
    drills = CopyDrills(tok, forbidden=forbidden_words())
    rng = random.Random(0)
    seen: Counter[int] = Counter()
    for _ in range(3000):
        sentence = drills.sentence(rng)
        ids = tok.encode(sentence)
        assert tok.decode(ids) == sentence
        seen.update(ids)
    pieces = [i for i in range(5, tok.vocab_size) if len(tok.decode([i]).strip()) > 1]
    # Source-only pieces too ("cto" of "October", "veint"): the targets of the task never hold them.
    assert sum(seen[i] > 0 for i in pieces) >= 0.98 * len(pieces)


def test_drills_hold_no_number_word_or_month(tok: Tokenizer) -> None:
    drills = CopyDrills(tok, forbidden=forbidden_words())
    rng = random.Random(1)
    words = [w.lower().strip(".,;:!?¿¡«»\"'()") for _ in range(2000) for w in drills.sentence(rng).split(" ")]
    assert not set(words) & forbidden_words()


def test_mix_into_keeps_the_batch_size_and_is_seeded(tok: Tokenizer) -> None:
    drills = CopyDrills(tok, forbidden=forbidden_words())
    batch = generate_examples(64, seed=3, split="train")
    mixed = drills.mix_into(batch, random.Random(5), 0.0625)
    assert len(mixed) == 64 and mixed[:60] == batch[:60]
    assert [e.category for e in mixed[60:]] == [CATEGORY] * 4
    assert all(e.source == e.target for e in mixed[60:])
    assert mixed == drills.mix_into(batch, random.Random(5), 0.0625)
