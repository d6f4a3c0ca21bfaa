"""Cardinal numbers written in words, in the forms people write them, for the task generator.

Spanish is written here rather than by num2words, which writes "veintiuno mil" and "ciento uno
millones" where Spanish says "veintiún mil" and "ciento un millones", and has no feminine
("doscientas personas") or apocopated ("veintiún años") forms. English starts from num2words and adds
the variants people use: no "and", no commas, no hyphens, "twenty-one hundred".
Imports nothing from this repository.
"""

from __future__ import annotations

import random

from num2words import num2words

MAX_CARDINAL = 999_999_999_999

_ES_UNITS = (
    "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis "
    "diecisiete dieciocho diecinueve veinte veintiuno veintidós veintitrés veinticuatro veinticinco "
    "veintiséis veintisiete veintiocho veintinueve"
).split()
_ES_TENS = {3: "treinta", 4: "cuarenta", 5: "cincuenta", 6: "sesenta", 7: "setenta", 8: "ochenta", 9: "noventa"}
_ES_HUNDREDS = {
    2: "doscientos",
    3: "trescientos",
    4: "cuatrocientos",
    5: "quinientos",
    6: "seiscientos",
    7: "setecientos",
    8: "ochocientos",
    9: "novecientos",
}
# How a Spanish number ending in "uno" agrees with what follows it: "uno" alone, "un" before a
# masculine noun or "mil"/"millones", "una" before a feminine noun.
SPANISH_FORMS = ("alone", "masculine", "feminine")


def _spanish_ending_in_one(word: str, form: str) -> str:
    if form == "alone" or not word.endswith("uno"):
        return word
    if form == "feminine":
        return word[:-1] + "a"  # "veintiuna", "treinta y una"
    return "veintiún" if word == "veintiuno" else word[:-1]  # "veintiún", "treinta y un"


def _spanish_below_thousand(n: int, form: str) -> str:
    """1-999; `form` decides the agreement of a final "uno" and of the hundreds (feminine: "-ientas")."""
    hundreds, rest = divmod(n, 100)
    words = []
    if hundreds == 1:
        words.append("cien" if rest == 0 else "ciento")
    elif hundreds:
        word = _ES_HUNDREDS[hundreds]
        words.append(word[:-2] + "as" if form == "feminine" else word)
    if rest:
        if rest < 30:
            tail = _ES_UNITS[rest]
        else:
            tens, unit = divmod(rest, 10)
            tail = _ES_TENS[tens] + (f" y {_ES_UNITS[unit]}" if unit else "")
        words.append(_spanish_ending_in_one(tail, form))
    return " ".join(words)


def spanish_cardinal(n: int, *, form: str = "alone", feminine_thousands: bool = True) -> str:
    """A Spanish cardinal from 1 to MAX_CARDINAL, as the RAE writes it.

    `form` is the agreement with the noun that follows: "doscientas una casas" is feminine, "veintiún
    años" masculine. Feminine reaches into the thousands ("doscientas mil personas"; with
    `feminine_thousands=False` the also-correct "doscientos mil"), never into the millions, which
    agree with "millón" ("doscientos millones de personas").
    """
    if not 1 <= n <= MAX_CARDINAL:
        raise ValueError(f"{n} is outside 1..{MAX_CARDINAL}")
    if form not in SPANISH_FORMS:
        raise ValueError(f"form must be one of {SPANISH_FORMS}, got {form!r}")
    millions, below_million = divmod(n, 1_000_000)
    thousands, units = divmod(below_million, 1000)
    words = []
    if millions:
        words.append(_spanish_thousands_of(millions, "masculine", masculine_unit="un"))
        words.append("millón" if millions == 1 else "millones")
    if thousands:
        thousands_form = form if form == "feminine" and feminine_thousands else "masculine"
        if thousands == 1:
            words.append("mil")
        else:
            words += [_spanish_below_thousand(thousands, thousands_form), "mil"]
    if units:
        words.append(_spanish_below_thousand(units, form))
    return " ".join(words)


def _spanish_thousands_of(n: int, form: str, *, masculine_unit: str) -> str:
    """The count of millions (1-999,999): "un", "veintiún mil", "mil" (as in "mil millones")."""
    if n == 1:
        return masculine_unit
    thousands, units = divmod(n, 1000)
    words = []
    if thousands:
        words += ["mil"] if thousands == 1 else [_spanish_below_thousand(thousands, "masculine"), "mil"]
    if units:
        words.append(_spanish_below_thousand(units, form))
    return " ".join(words)


def english_cardinal(n: int, rng: random.Random | None = None) -> str:
    """An English cardinal from 1 to MAX_CARDINAL: num2words' form, or with `rng` one of the variants
    people write (without "and", without commas, with spaces for hyphens, "twenty-one hundred")."""
    if not 1 <= n <= MAX_CARDINAL:
        raise ValueError(f"{n} is outside 1..{MAX_CARDINAL}")
    text = num2words(n, lang="en")
    if rng is None:
        return text
    if 1100 <= n <= 9999 and (n // 100) % 10 and rng.random() < 0.3:
        hundreds, rest = divmod(n, 100)
        text = num2words(hundreds, lang="en") + " hundred"
        if rest:
            text += (" and " if rng.random() < 0.5 else " ") + num2words(rest, lang="en")
    if rng.random() < 0.4:
        text = text.replace(",", "")
    if rng.random() < 0.3:
        text = text.replace(" and ", " ")
    if rng.random() < 0.15:
        text = text.replace("-", " ")
    return text


def spanish_cardinal_variant(n: int, rng: random.Random, *, form: str = "alone") -> str:
    """A Spanish cardinal in one of the ways it is written: mostly the RAE's form; sometimes
    num2words' older one ("veintiuno mil"), which people also type."""
    if form == "alone" and rng.random() < 0.1:
        return num2words(n, lang="es")
    return spanish_cardinal(n, form=form, feminine_thousands=rng.random() < 0.8)
