"""Drills mixed into training batches: copy drills, leap-day drills and frequent-word sentences.

Copy drills: sentences of made-up words assembled from the tokenizer's own tokens, target = source.

A BPE vocabulary holds tokens that ordinary targets never contain: pieces of words that only occur on
the source side ("cto" is a step towards "October", which the task always rewrites). A decoder never
trained to emit such a token cannot copy a new word that needs it ("arquitecto" came out "arquite").
Drawing every word's pieces uniformly from the vocabulary gives each token its share of training
targets. Tokenizer-aware, so it lives beside training rather than in the tokenizer-free generator.

Leap-day drills: 29 February of leap and common years in equal numbers (sentences_rewritten.leap_day_drill),
so that the year, not its century, decides whether it is a date; or, as minimal pairs, the same words and
carrier with a leap year and with a common year beside it.

Frequent-word sentences: real words in the frames dates are written in, most with an expression
(model/frequent_text.py).

Opening-count drills: texts whose second or third sentence opens with its count (model/opening_counts.py).

Character drills: words of characters drawn by their UTF-8 lead byte, uniformly, copied. A byte-level model
copies a character it has no token for byte by byte, and lead bytes of rare scripts (0xDC of Syriac "ܸ")
hardly occur in training text: the models wrote the common Cyrillic lead 0xD3 instead ("ܸ" -> "Ӹ").
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Iterable, Sequence

from model.data import Example
from model.frequent_text import frequent_word, frequent_word_text
from model.opening_counts import opening_count_text
from model.sentences_rewritten import leap_day_drill, leap_day_minimal_pair
from model.tokenizer import Tokenizer

CATEGORY = "copy_drill"
LEAP_DAY_CATEGORY = "leap_day_drill"
# English years are the harder to read for their leap: from the same base, leap drills at 3/16 of each batch, half
# English, took Spanish even common years' 29 Februaries inside sentences to 95% and English ones only to 70%
# (leap_day_carrier_probe, 2026-12-07).
LEAP_DRILL_ENGLISH_SHARE = 2 / 3
FREQUENT_WORD_CATEGORY = "frequent_word_drill"
CHARACTER_CATEGORY = "character_drill"
OPENING_COUNT_CATEGORY = "opening_count_drill"
# UTF-8 lead bytes by sequence length (RFC 3629), drawn uniformly within a length.
_LEAD_BYTES = {2: range(0xC2, 0xE0), 3: range(0xE0, 0xF0), 4: range(0xF0, 0xF5)}
_SEQUENCE_LENGTH_WEIGHTS = {2: 0.5, 3: 0.3, 4: 0.2}
# Unassigned, private-use, surrogates, controls and separators: no text holds them.
_UNWRITTEN_CATEGORIES = frozenset({"Cn", "Co", "Cs", "Cc", "Zs", "Zl", "Zp"})


class CopyDrills:
    def __init__(self, tokenizer: Tokenizer, *, forbidden: Iterable[str] = ()) -> None:
        pieces = [tokenizer.decode([i]) for i in range(tokenizer.vocab_size)]
        # Whole characters only (a lone byte of "ó" decodes to U+FFFD), no specials, no whitespace-only.
        usable = [p for p in pieces if p.strip() and "\ufffd" not in p and p.strip() == p.lstrip(" ").rstrip()]
        self.word_starts = sorted({p[1:] for p in usable if p.startswith(" ") and not p[1:].startswith(" ")})
        self.continuations = sorted({p for p in usable if not p.startswith(" ")})
        self.letters = sorted(p for p in self.continuations if len(p) == 1 and p.islower())
        self.forbidden = frozenset(w.lower() for w in forbidden)

    def word(self, rng: random.Random) -> str:
        """One start piece and up to two continuation pieces, never a forbidden word (a number word, a month)."""
        while True:
            parts = [rng.choice(self.word_starts)] + [rng.choice(self.continuations) for _ in range(rng.randint(0, 2))]
            word = "".join(parts)
            if self._allowed(word):
                return word

    def _allowed(self, word: str) -> bool:
        return word.lower().strip(".,;:!?¿¡«»\"'()") not in self.forbidden

    def run_word(self, rng: random.Random) -> str:
        """A word that holds one token two to four times in a row: a number's digit ("37181114", "845005059401")
        or a letter doubled across pieces ("cu" "r" "r" "ículos"). The models copied such runs one short."""
        if rng.random() < 0.5:
            digits = [rng.choice("0123456789") for _ in range(rng.randint(2, 9))]
            at = rng.randint(0, len(digits))
            digits[at:at] = [rng.choice("0123456789")] * rng.randint(2, 4)
            return "".join(digits)
        while True:
            run = rng.choice(self.letters) * rng.randint(2, 3)
            tail = [rng.choice(self.continuations) for _ in range(rng.randint(0, 2))]
            word = rng.choice(self.word_starts) + run + "".join(tail)
            if self._allowed(word):
                return word

    def sentence(self, rng: random.Random, *, run_share: float = 0.0) -> str:
        """Three to ten made-up words; with chance `run_share`, one or two of them words with a run (run_word)."""
        words = [self.word(rng) for _ in range(rng.randint(3, 10))]
        if run_share > 0 and rng.random() < run_share:
            for _ in range(rng.randint(1, 2)):
                words[rng.randrange(len(words))] = self.run_word(rng)
        return " ".join(words)

    def mix_into(
        self, examples: Sequence[Example], rng: random.Random, share: float, *, run_share: float = 0.0
    ) -> list[Example]:
        """`examples` with the last round(share * len) replaced by drills (the batch keeps its size), a
        `run_share` of them holding a run of one token (run_word)."""
        count = round(share * len(examples))
        drills = [self.sentence(rng, run_share=run_share) for _ in range(count)]
        return [*examples[: len(examples) - count], *(Example(s, s, CATEGORY) for s in drills)]


def mix_in_leap_day_drills(
    examples: Sequence[Example], rng: random.Random, share: float, *, minimal_pairs: bool = False
) -> list[Example]:
    """`examples` with the first round(share * len) replaced by leap-day drills, LEAP_DRILL_ENGLISH_SHARE of them
    English (the copy drills take the last ones: both can apply to one batch). With `minimal_pairs`, the drills come
    in pairs that differ by their year alone (sentences_rewritten.leap_day_minimal_pair)."""
    count = round(share * len(examples))
    drills: list[tuple[str, str]] = []
    while len(drills) < count:
        lang = "en" if rng.random() < LEAP_DRILL_ENGLISH_SHARE else "es"
        drills.extend(leap_day_minimal_pair(rng, lang) if minimal_pairs else [leap_day_drill(rng, lang)])
    drills = drills[:count]
    return [*(Example(s, t, LEAP_DAY_CATEGORY) for s, t in drills), *examples[count:]]


def mix_in_frequent_word_drills(
    examples: Sequence[Example],
    rng: random.Random,
    share: float,
    *,
    punctuated_share: float = 0.0,
    opening_share: float = 0.0,
    markup_share: float = 0.0,
    range_share: float = 0.0,
    unit_share: float = 0.0,
) -> list[Example]:
    """`examples` with round(share * len) from the middle on replaced by frequent-word sentences, half of them
    Spanish (the leap-day drills take the first ones, the copy drills the last: all three can apply);
    `punctuated_share` of their expressions in brackets, quotes or a table's cell, `opening_share` of their
    sentences with an expression opening with it, `markup_share` of the marks HTML tags, `range_share` of the
    expressions two counts as a range, `unit_share` a count before a unit (frequent_text.py)."""
    count = round(share * len(examples))
    start = len(examples) // 2
    drills = [
        frequent_word_text(
            rng,
            rng.choice(("es", "en")),
            punctuated_share=punctuated_share,
            opening_share=opening_share,
            markup_share=markup_share,
            range_share=range_share,
            unit_share=unit_share,
        )
        for _ in range(count)
    ]
    replaced = [Example(s, t, FREQUENT_WORD_CATEGORY) for s, t in drills]
    return [*examples[:start], *replaced, *examples[start + count :]]


def lead_byte_character(rng: random.Random) -> str:
    """A written character whose UTF-8 lead byte is uniform among the leads of its sequence length."""
    lengths = list(_SEQUENCE_LENGTH_WEIGHTS)
    while True:
        length = rng.choices(lengths, weights=[_SEQUENCE_LENGTH_WEIGHTS[n] for n in lengths])[0]
        encoded = bytes([rng.choice(_LEAD_BYTES[length]), *(rng.randint(0x80, 0xBF) for _ in range(length - 1))])
        try:
            character = encoded.decode("utf-8")  # overlong forms and surrogates do not decode
        except UnicodeDecodeError:
            continue
        if unicodedata.category(character) not in _UNWRITTEN_CATEGORIES:
            return character


def character_drill_sentence(rng: random.Random) -> str:
    """Two to seven words, about half of them one to three lead-byte characters, the others frequent words."""
    words = []
    for _ in range(rng.randint(2, 7)):
        if rng.random() < 0.5:
            words.append("".join(lead_byte_character(rng) for _ in range(rng.randint(1, 3))))
        else:
            words.append(frequent_word(rng, rng.choice(("es", "en"))))
    return " ".join(words)


def mix_in_character_drills(examples: Sequence[Example], rng: random.Random, share: float) -> list[Example]:
    """`examples` with round(share * len) from a quarter on replaced by character drills (source = target)."""
    count = round(share * len(examples))
    start = len(examples) // 4
    drills = [character_drill_sentence(rng) for _ in range(count)]
    return [*examples[:start], *(Example(s, s, CHARACTER_CATEGORY) for s in drills), *examples[start + count :]]


def mix_in_opening_count_drills(
    examples: Sequence[Example], rng: random.Random, share: float, *, line_share: float = 0.0
) -> list[Example]:
    """`examples` with round(share * len) from three quarters on replaced by texts where a later sentence opens
    with its count, or (`line_share` of them) short lines with a count, half of them Spanish (the copy drills take
    the last ones, the frequent-word drills the middle: all can apply)."""
    count = round(share * len(examples))
    start = 3 * len(examples) // 4
    drills = [opening_count_text(rng, rng.choice(("es", "en")), line_share=line_share) for _ in range(count)]
    replaced = [Example(s, t, OPENING_COUNT_CATEGORY) for s, t in drills]
    return [*examples[:start], *replaced, *examples[start + count :]]
