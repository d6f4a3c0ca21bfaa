"""Short inputs with no sentence around them, as people type them into a box: "doscientas personas",
"el tres de mayo", "May third", "twelve screws", and the words that stay words alone ("un", "one",
"primero"). Sentences always gave the earlier models context; bare, the same expressions came out wrong
("un" -> "10", "el tres de mayo" -> "10 de mayo").

Held-out splits draw only what they can hold out: numbers and day-month pairs are assigned to a split
by their hash (model/expressions.py); the bare words that stay words are train's.
"""

from __future__ import annotations

import random

from model.carrier_text import carriers
from model.expressions import (
    cardinal_words,
    ordinal_words,
    round_then_one_in_training,
    sample_day_of_year,
    sample_number,
    yearless_date,
)

# Alone, these stay words: articles and pronouns ("un", "one"), and ordinals.
WORDS_THAT_STAY = {
    "es": ("un", "una", "uno", "Un", "Una", "Uno", "primero", "primera", "Primero"),
    "en": ("one", "One", "first", "First"),
}
# (what, odds): a number with its noun, the same as a list item, a date without a year, a bare number,
# a word that stays.
KINDS = (
    ("counted_noun", 0.4),
    ("list_item", 0.15),
    ("yearless_date", 0.25),
    ("bare_number", 0.08),
    ("word_that_stays", 0.12),
)
# How lists and recipes open their lines; the earlier models left a capitalized number after one in
# words ("- Seis huevos", "1. Dos tazas de arroz", "* Three onions").
LIST_MARKERS = ("- ", "- ", "* ", "• ", "1. ", "2. ", "3. ", "1) ", "a) ", "– ")


def short_phrase(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    kinds, weights = zip(*KINDS, strict=True)
    kind = rng.choices(kinds, weights)[0]
    if split != "train" and kind in ("bare_number", "word_that_stays"):
        kind = "counted_noun"  # held-out splits hold no bare vocabulary number or bare article
    if kind == "counted_noun":
        return counted_noun(rng, split, lang)
    if kind == "list_item":
        return _list_item(rng, split, lang)
    if kind == "yearless_date":
        return _bare_yearless(rng, split, lang)
    if kind == "bare_number":
        n = sample_number(rng, split, in_sentence=True, max_digits=rng.choice((2, 2, 3)))
        words = cardinal_words(n, lang, rng)
        return (words.capitalize(), str(n)) if rng.random() < 0.2 else (words, str(n))
    if rng.random() < 0.4:
        word = rng.choice(ordinal_words(rng, lang))
        return word, word
    word = rng.choice(WORDS_THAT_STAY[lang])
    return word, word


def counted_noun(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    """ "doscientas personas" -> "200 personas", "ciento un dálmatas" -> "101 dálmatas", "twelve screws"."""
    # Held-out splits count with held-out numbers, so a test phrase never equals a training one.
    # (every number under 100 is train's: VOCABULARY_NUMBERS).
    in_sentence = split == "train"
    n = sample_number(
        rng, split, in_sentence=in_sentence, max_digits=rng.choice((2, 3, 3, 4, 6, 9, 10)[not in_sentence :])
    )
    if lang == "en":
        noun = _plural_en(rng.choice(carriers("nouns_en", "train")))
        return f"{cardinal_words(n, 'en', rng)} {noun}", f"{n} {noun}"
    n = round_then_one_in_training(rng, split, n)
    feminine = rng.random() < 0.5
    noun = rng.choice([w for w in carriers("nouns_f_es" if feminine else "nouns_m_es", "train") if w[-1] in "aeiou"])
    words = cardinal_words(n, "es", rng, form="feminine" if feminine else "masculine")
    of = " de" if n % 1_000_000 == 0 else ""  # "dos millones de casas"
    return f"{words}{of} {noun}s", f"{n}{of} {noun}s"


def _list_item(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    """ "- Seis huevos" -> "- 6 huevos", "1. two cups of rice" -> "1. 2 cups of rice"."""
    source, target = counted_noun(rng, split, lang)
    if rng.random() < 0.6:
        source = source[:1].upper() + source[1:]
    marker = rng.choice(LIST_MARKERS)
    return marker + source, marker + target


def _plural_en(noun: str) -> str:
    if noun.endswith(("s", "sh", "ch", "x")):
        return noun + "es"
    if noun.endswith("fe"):
        return noun[:-2] + "ves"
    return noun + "s"


def _bare_yearless(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    """ "el tres de mayo" -> "el 3 de mayo", "May third" -> "May 3", "on the fifth of June"."""
    month, day = sample_day_of_year(rng, split)
    source, target = yearless_date(month, day, lang, rng)
    lead = rng.choice(("", "", "el ", "El ", "hasta el ")) if lang == "es" else rng.choice(("", "", "on ", "On "))
    return lead + source, lead + target
