"""Counts in the phrases real text puts them in, beside another count or before a unit: "between fifteen and thirty
people" -> "between 15 and 30 people", "de tres a cuatro horas" -> "de 3 a 4 horas", "dos de cada tres" -> "2 de
cada 3", "doscientos mililitros" -> "200 mililitros", "two hundred miles" -> "200 miles".

The frequent-word drills never put two expressions beside each other, and the bundled model of 2026-12-06 left the
second count of a range in words: "Between fifteen and thirty people showed up." -> "Between 15 and thirty ...",
"From fifteen to twenty people." -> "From 15 to twenty ...", "Open from nine to five" -> "Open from 9 to five".
Units follow counts in recipes, specifications and prices more than any other noun, and several open like a number
word: the same model wrote "doscientos mililitros" as "200000ilitros" and "dos milímetros" as "2000ímetros" (the
edit guard put both back in words), reading "mil" on. Training only (model/frequent_text.py draws these as some of
its drills' expressions).
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
# How the counts are drawn: a share from two to twelve (the smaller more often), a share of the others from the
# hundreds (half of them round), the rest up to 99 from the lowest given.
_SMALL = tuple(range(2, 13))
_SMALL_WEIGHTS = tuple(1 / n for n in _SMALL)


def _count(rng: random.Random, *, small_share: float, hundreds_share: float, lowest: int) -> int:
    if rng.random() < small_share:
        return rng.choices(_SMALL, weights=_SMALL_WEIGHTS)[0]
    if rng.random() < hundreds_share:
        return rng.randint(1, 9) * 100 if rng.random() < 0.5 else rng.randint(100, 999)
    return rng.randint(lowest, 99)


def reads_as_one_number(first: int, second: int, link: str) -> bool:
    """Whether the two counts may read as one number: Spanish "treinta y dos" is 32 and English "two hundred and
    five" is 205, so no range joins a multiple of ten from twenty and a unit with "y", nor a hundred or more and a
    count under a hundred with "and". "entre cuarenta y cincuenta" (40 to 50) and "between one hundred and two
    hundred" are ranges, and drawn: a model that never saw one reads "cuarenta y cincuenta" as "40"."""
    if link == " y ":
        return first % 10 == 0 and first >= 20 and second < 10
    if link == " and ":
        return first >= 100 and second < 100
    return False


def count_range(rng: random.Random, lang: str, word: str) -> Pair:
    """Two counts (never one: "uno", "one" alone stay words) joined as a range or a choice, then `word` (a noun
    or any word: "people", "horas"), converted: 'entre quince y treinta personas' -> 'entre 15 y 30 personas'."""
    lead, link, ascending = rng.choice(RANGE_LINKS[lang])
    while True:
        first, second = (_count(rng, small_share=0.6, hundreds_share=0.1, lowest=2) for _ in range(2))
        if first != second and (not ascending or first < second) and not reads_as_one_number(first, second, link):
            break
    form = sentence_agreement(rng)  # the noun's gender is not known: "veintiún" or "veintiuna" alike
    first_words, second_words = (cardinal_words(n, lang, rng, form=form) for n in (first, second))
    spoken = f"{lead}{first_words}{link}{second_words} {word}"
    return spoken, f"{lead}{first}{link}{second} {word}"


# Spanish units with their gender ("doscientas millas", "doscientos metros"); those opening with "mil" first.
UNITS_ES = (
    *(("mililitros", "m"), ("milímetros", "m"), ("miligramos", "m"), ("millas", "f"), ("milésimas", "f")),
    *(("milisegundos", "m"), ("kilómetros", "m"), ("kilos", "m"), ("kilogramos", "m"), ("gramos", "m")),
    *(("litros", "m"), ("metros", "m"), ("centímetros", "m"), ("grados", "m"), ("horas", "f"), ("minutos", "m")),
    *(("segundos", "m"), ("euros", "m"), ("dólares", "m"), ("pesos", "m"), ("libras", "f"), ("céntimos", "m")),
    *(("voltios", "m"), ("vatios", "m"), ("píxeles", "m"), ("caballos", "m"), ("toneladas", "f"), ("hectáreas", "f")),
)
UNITS_EN = (
    "milliliters", "millilitres", "millimeters", "millimetres", "milligrams", "miles", "milliseconds", "kilometers",
    "kilos", "kilograms", "grams", "liters", "meters", "centimeters", "degrees", "hours", "minutes", "seconds",
    "euros", "dollars", "pounds", "cents", "volts", "watts", "megabytes", "pixels", "feet", "inches", "yards",
    "ounces", "tons", "acres",
)  # fmt: skip


def count_with_unit(rng: random.Random, lang: str) -> Pair:
    """'doscientos mililitros', 'two hundred miles' -> '200 mililitros', '200 miles'."""
    n = _count(rng, small_share=0.5, hundreds_share=0.5, lowest=13)
    if lang == "es":
        unit, gender = rng.choice(UNITS_ES)
        spoken = cardinal_words(n, lang, rng, form="feminine" if gender == "f" else "masculine")
    else:
        unit, spoken = rng.choice(UNITS_EN), cardinal_words(n, lang, rng)
    return f"{spoken} {unit}", f"{n} {unit}"
