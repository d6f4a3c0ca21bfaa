"""A count before a unit of measure or money: "doscientos mililitros" -> "200 mililitros", "two hundred miles" ->
"200 miles".

Units follow counts in recipes, specifications and prices more than any other noun, and several open like a
number word: the bundled model of 2026-12-06 wrote "doscientos mililitros" as "200000ilitros" and "dos
milímetros" as "2000ímetros" (the edit guard put both back in words), reading "mil" on. Training only
(model/frequent_text.py draws these as one of its drills' expressions).
"""

from __future__ import annotations

import random

from model.expressions import cardinal_words

Pair = tuple[str, str]
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
SMALL_SHARE = 0.5  # of counts from two to twelve, the smaller more often; then up to 99, then hundreds
TENS_SHARE = 0.5  # of the others, 13-99; the rest 100-999, half of those round hundreds
_SMALL = tuple(range(2, 13))
_SMALL_WEIGHTS = tuple(1 / n for n in _SMALL)


def _count(rng: random.Random) -> int:
    if rng.random() < SMALL_SHARE:
        return rng.choices(_SMALL, weights=_SMALL_WEIGHTS)[0]
    if rng.random() < TENS_SHARE:
        return rng.randint(13, 99)
    return rng.randint(1, 9) * 100 if rng.random() < 0.5 else rng.randint(100, 999)


def count_with_unit(rng: random.Random, lang: str) -> Pair:
    """'doscientos mililitros', 'two hundred miles' -> '200 mililitros', '200 miles'."""
    n = _count(rng)
    if lang == "es":
        unit, gender = rng.choice(UNITS_ES)
        spoken = cardinal_words(n, lang, rng, form="feminine" if gender == "f" else "masculine")
    else:
        unit, spoken = rng.choice(UNITS_EN), cardinal_words(n, lang, rng)
    return f"{spoken} {unit}", f"{n} {unit}"
