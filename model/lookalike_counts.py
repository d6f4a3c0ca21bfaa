"""Counts beside lookalikes: a count in words next to a word that looks like a number word and is none.

On 1,000 of the test split's paragraphs (seed 4242) the bundled model of 2026-12-05 got 25 wrong with the guard
off, and two kinds of mistake made up most of them:
- a count next to a made-up or real lookalike of a number word was left in words ("two nineón", "catorce
  totésytin", "once tok", "treinta tresly" copied), or the lookalike was read as a number ("Threeed" -> "3ed",
  "Ninetyed" -> "90ed", "Sixtyo" -> "66", "Trour" -> "4"), capitalized in seven of eight;
- a capitalized count inside a sentence was read from its second word ("Quinientas cuarenta y cuatro casas" ->
  "Quinientas 44 casas", "tratar Ciento treinta y ocho platos" -> "Ciento 38", "Trescientos cincuenta y cinco"
  -> "Tres 25").
The generator's carriers put a lookalike beside a count only by chance, and capitalize a count only where it opens
their sentence. A drill text here is a run of frequent real words, made-up words and lookalikes of number words
(a third of them capitalized), with one or two counts in it, each capitalized at times and most with a lookalike
right before or after it; the counts become digits, everything else is copied.
Training only: it draws the training split's numbers, and nothing in the held-out splits changes.
"""

from __future__ import annotations

import random

from model.copytext import fits_one_piece
from model.expressions import cardinal_words, sample_number, sentence_agreement
from model.frequent_text import frequent_word
from model.opening_counts import SEPARATORS, capitalized, lookalike, surrounding_sentence
from model.words import near_miss_word, pseudo_word

Pair = tuple[str, str]
# What the words around the counts are, with their odds.
FILLER_KINDS = (("frequent", 0.55), ("made_up", 0.15), ("near_miss", 0.15), ("lookalike", 0.15))
# Digit counts of the counts: small ones most, and the hundreds a capitalized Spanish count was misread in.
COUNT_DIGITS = (2, 2, 3, 3, 3, 4, 6)
CAPITALIZED_COUNT_SHARE = 0.4
# Where a count's lookalike stands, with its odds: after it ("two nineón"), before it ("Trour work") or none.
NEIGHBOUR_PLACES = (("after", 0.45), ("before", 0.3), ("none", 0.25))
ENDINGS = (".", ".", ".", "?", "!", "", ",")


def _weighted(rng: random.Random, choices: tuple[tuple[str, float], ...]) -> str:
    values, weights = zip(*choices, strict=True)
    return rng.choices(values, weights)[0]


def _filler(rng: random.Random, lang: str) -> str:
    kind = _weighted(rng, FILLER_KINDS)
    if kind == "frequent":
        return frequent_word(rng, lang)
    if kind == "made_up":
        return pseudo_word(rng)
    if kind == "near_miss":
        return near_miss_word(rng, lang)
    return lookalike(rng, lang) if rng.random() < 0.5 else lookalike(rng, lang).lower()


def _count(rng: random.Random, lang: str) -> Pair:
    """A count in words and its digits, capitalized CAPITALIZED_COUNT_SHARE of the time."""
    n = sample_number(rng, "train", in_sentence=True, max_digits=rng.choice(COUNT_DIGITS))
    words = cardinal_words(n, lang, rng, form=sentence_agreement(rng) if lang == "es" else "alone")
    if rng.random() < CAPITALIZED_COUNT_SHARE:
        words = capitalized(words)
    return words, str(n)


def _lookalike_neighbour(rng: random.Random, lang: str) -> str:
    """A word that looks like a number word: made-up ("nineón", "Dieciochos") or real ("Those"), capitalized a
    third of the time."""
    word = near_miss_word(rng, lang) if rng.random() < 0.6 else lookalike(rng, lang)
    return capitalized(word) if rng.random() < 1 / 3 else word.lower()


def lookalike_count_text(rng: random.Random, lang: str) -> Pair:
    """Three to twelve words with one or two counts among them, most counts beside a lookalike; fits one piece."""
    while True:
        source: list[str] = []
        target: list[str] = []
        for _ in range(rng.randint(3, 10)):
            word = _filler(rng, lang)
            source.append(word)
            target.append(word)
        for _ in range(rng.choice((1, 1, 2))):
            words, digits = _count(rng, lang)
            place = _weighted(rng, NEIGHBOUR_PLACES)
            neighbour = [_lookalike_neighbour(rng, lang)] if place != "none" else []
            source_run = [*neighbour, words] if place == "before" else [words, *neighbour]
            target_run = [*neighbour, digits] if place == "before" else [digits, *neighbour]
            # Two words at least from any count already placed: "twenty" and "five" side by side (or joined by
            # "y") would read as one number.
            counts = [i for i, (s, t) in enumerate(zip(source, target, strict=True)) if s != t]
            at = rng.choice([i for i in range(len(source) + 1) if all(i <= c - 2 or i >= c + 3 for c in counts)])
            source[at:at] = source_run
            target[at:at] = target_run
        ending = rng.choice(ENDINGS)
        text, digits_text = " ".join(source) + ending, " ".join(target) + ending
        if rng.random() < 0.5:
            text, digits_text = capitalized(text), capitalized(digits_text)
        if fits_one_piece(text) and fits_one_piece(digits_text):
            return text, digits_text


def lookalike_count_passage(rng: random.Random, lang: str) -> Pair:
    """lookalike_count_text, most of the time after one or two of training's sentences (a third of them in the
    other language) and sometimes before one: the test split's mistakes came in paragraphs, where the same words
    alone came out right ("Anna took the train to Peru. Quinientas cuarenta y cuatro casas" -> "... Quinientas 44
    casas"; alone, "544 casas")."""
    while True:
        other = "en" if lang == "es" else "es"
        pairs = [
            surrounding_sentence(rng, other if rng.random() < 1 / 3 else lang) for _ in range(rng.choice((0, 1, 1, 2)))
        ]
        pairs.append(lookalike_count_text(rng, lang))
        if rng.random() < 0.3:
            pairs.append(surrounding_sentence(rng, other if rng.random() < 1 / 3 else lang))
        source, target = pairs[0]
        for next_source, next_target in pairs[1:]:
            separator = str(_weighted(rng, SEPARATORS))
            source, target = source + separator + next_source, target + separator + next_target
        if fits_one_piece(source) and fits_one_piece(target):
            return source, target
