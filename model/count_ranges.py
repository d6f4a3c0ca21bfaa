"""Two counts side by side, as a range or a choice: "between fifteen and thirty people" -> "between 15 and 30
people", "de tres a cuatro horas" -> "de 3 a 4 horas", "dos de cada tres" -> "2 de cada 3".

The frequent-word drills never put two expressions beside each other, and the bundled model of 2026-12-06 left the
second count of a range in words: "Between fifteen and thirty people showed up." -> "Between 15 and thirty ...",
"From fifteen to twenty people." -> "From 15 to twenty ...", "Open from nine to five" -> "Open from 9 to five".
Training only (model/frequent_text.py draws these as one of its drills' expressions).
"""

from __future__ import annotations

import random

from model.expressions import cardinal_words, sentence_agreement

Pair = tuple[str, str]
# What comes before the first count and between the two, with whether the second must be the larger.
RANGE_LINKS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "en": (
        ("between ", " and ", True),
        ("from ", " to ", True),
        ("", " to ", False),
        ("", " or ", False),
        ("", " out of ", True),
        ("", " in ", True),
    ),
    "es": (
        ("entre ", " y ", True),
        ("de ", " a ", True),
        ("desde ", " hasta ", True),
        ("", " a ", False),
        ("", " o ", False),
        ("", " de cada ", True),
    ),
}
SMALL_SHARE = 0.6  # of counts from two to twelve, the smaller more often; the rest up to 99, some hundreds
HUNDREDS_SHARE = 0.1
_SMALL = tuple(range(2, 13))
_SMALL_WEIGHTS = tuple(1 / n for n in _SMALL)


def _count(rng: random.Random) -> int:
    if rng.random() < SMALL_SHARE:
        return rng.choices(_SMALL, weights=_SMALL_WEIGHTS)[0]
    if rng.random() < HUNDREDS_SHARE:
        return rng.randint(1, 9) * 100 if rng.random() < 0.5 else rng.randint(100, 999)
    return rng.randint(2, 99)


def reads_as_one_number(first: int, link: str) -> bool:
    """Whether the two counts may read as one number: Spanish "treinta y dos" is 32 and English "two hundred and
    five" is 205, so no range joins a multiple of ten from twenty with "y", nor a hundred or more with "and",
    whatever the second count ("cuarenta y cincuenta" is left to the other links: the drills draw it as "de
    cuarenta a cincuenta")."""
    if link == " y ":
        return first % 10 == 0 and first >= 20
    if link == " and ":
        return first >= 100
    return False


def count_range(rng: random.Random, lang: str, word: str) -> Pair:
    """Two counts (never one: "uno", "one" alone stay words) joined as a range or a choice, then `word` (a noun
    or any word: "people", "horas"), converted: 'entre quince y treinta personas' -> 'entre 15 y 30 personas'."""
    lead, link, ascending = rng.choice(RANGE_LINKS[lang])
    while True:
        first, second = _count(rng), _count(rng)
        if first != second and (not ascending or first < second) and not reads_as_one_number(first, link):
            break
    form = sentence_agreement(rng)  # the noun's gender is not known: "veintiún" or "veintiuna" alike
    first_words, second_words = (cardinal_words(n, lang, rng, form=form) for n in (first, second))
    spoken = f"{lead}{first_words}{link}{second_words} {word}"
    return spoken, f"{lead}{first}{link}{second} {word}"
