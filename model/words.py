"""The words of the generator's random carrier sentences: which words could form a contract
expression (and so never appear as plain text), and the words the model can only copy: pronounceable
nonsense, near misses of number words, rare real words from CLDR, bare month names.

Imports nothing from this repository (num2words + Babel only).
"""

from __future__ import annotations

import collections
import functools
import random
from pathlib import Path

from babel import Locale
from num2words import num2words

from model.numbers import SPANISH_FORMS, spanish_cardinal

BABEL_LOCALES = ("es_ES", "en_US", "en_GB")
# The years whose dates the task writes as ISO dates (model/expressions.py); a date of another year is numbers.
DATE_YEARS = (1900, 2099)
# Affixes that turn a number word into a word that merely resembles one ("milk"-like: "tresco", "unmil").
NEAR_MISS_SUFFIXES = ("k", "o", "a", "s", "er", "ed", "ly", "ito", "ón", "ing")
NEAR_MISS_PREFIXES = ("a", "re", "in", "es", "un")
# Syllables of pronounceable nonsense words.
PSEUDO_ONSETS = (
    "",
    "b",
    "c",
    "d",
    "f",
    "g",
    "j",
    "k",
    "l",
    "m",
    "n",
    "ñ",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "ch",
    "br",
    "tr",
    "pl",
)
PSEUDO_VOWELS = ("a", "e", "i", "o", "u", "á", "é", "í", "ó", "ú", "ü", "y", "ai", "ou")
PSEUDO_CODAS = ("n", "s", "l", "r", "x", "k", "th", "ng")


@functools.cache
def cardinal_spellings() -> frozenset[str]:
    """Every word the cardinals are written with in either language, the RAE's agreement forms included
    ("tres", "doscientas", "veintiún", "mil", "millones", "hundred", "and", "y", "un")."""
    words: set[str] = {"millón", "millones", "veintiún", "hundred", "thousand", "million", "billion"}
    for n in [*range(0, 101), 200, 300, 400, 500, 600, 700, 800, 900, 1000, 10**6, 2 * 10**6]:
        for lang in ("es", "en"):
            words.update(num2words(n, lang=lang).replace(",", " ").replace("-", " ").split())
    for n in [*range(1, 101), *range(100, 1000, 100), 101]:  # the RAE's forms and their agreement
        for form in ("alone", "masculine", "feminine"):
            words.update(spanish_cardinal(n, form=form).split())
    return frozenset(w.lower() for w in words)


@functools.cache
def forbidden_words() -> frozenset[str]:
    """Words that could form (part of) a contract expression, so plain random text never holds one."""
    words = set(cardinal_spellings()) | {"primero", "oh"}
    for n in range(1, 32):
        words.update(num2words(n, lang="en", to="ordinal").replace("-", " ").split())
    for loc in BABEL_LOCALES:
        locale = babel_locale(loc)
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                words.update(str(m).strip(".") for m in locale.months[context][width].values())
    words.discard("y")  # "y" is in "treinta y uno" but also the most common conjunction; numbers need more
    words.discard("and")
    words.discard("de")
    words.discard("of")
    words.discard("the")
    words.discard("un")  # "un millón" needs "millón", which is forbidden
    words.discard("una")
    return frozenset(w.lower() for w in words)


@functools.cache
def babel_locale(name: str) -> Locale:
    return Locale.parse(name)


@functools.cache
def number_word_stems(lang: str) -> tuple[str, ...]:
    words = {
        num2words(n, lang=lang).replace(",", "").replace("-", " ")
        for n in [*range(2, 21), 30, 40, 50, 60, 70, 80, 90, 100, 1000, 10**6]
    }
    return tuple(sorted({w for text in words for w in text.split() if len(w) >= 3 and w not in ("and", "y")}))


def near_miss_word(rng: random.Random, lang: str) -> str:
    """A word that starts or ends like a number word but is not one ("milk", "retres"): text to copy."""
    forbidden = forbidden_words()
    while True:
        stem = rng.choice(number_word_stems(lang))
        if rng.random() < 0.7:
            word = stem + rng.choice(NEAR_MISS_SUFFIXES)
        else:
            word = rng.choice(NEAR_MISS_PREFIXES) + stem
        if word not in forbidden:
            return word.capitalize() if rng.random() < 0.15 else word


@functools.cache
def cldr_words(lang: str) -> tuple[str, ...]:
    """Single words from CLDR's display names (countries, languages, currencies, scripts)."""
    locale = babel_locale("es_ES" if lang == "es" else "en_US")
    forbidden = forbidden_words()
    names = [
        *locale.territories.values(),
        *locale.languages.values(),
        *locale.currencies.values(),
        *locale.scripts.values(),
    ]
    words = {w for name in names for w in str(name).split() if w.isalpha() and len(w) > 1}
    return tuple(sorted(w for w in words if w.lower() not in forbidden))


@functools.cache
def month_names(lang: str) -> tuple[str, ...]:
    locales = ("es_ES",) if lang == "es" else ("en_US", "en_GB")
    names = {
        str(name).strip(".")
        for loc in locales
        for width in ("wide", "abbreviated")
        for name in babel_locale(loc).months["format"][width].values()
    }
    return tuple(sorted(names))


def pseudo_word(rng: random.Random) -> str:
    """A pronounceable nonsense word ("tamopí", "Zurel"): text the model can only copy. Never a number
    word: syllables sometimes spell one ("ocho", "tres", "four"), and copy text must not hold any."""
    forbidden = forbidden_words()
    while True:
        syllables = [rng.choice(PSEUDO_ONSETS) + rng.choice(PSEUDO_VOWELS) for _ in range(rng.randint(1, 4))]
        word = "".join(syllables) + (rng.choice(PSEUDO_CODAS) if rng.random() < 0.4 else "")
        if word not in forbidden:
            return word.capitalize() if rng.random() < 0.2 else word


# What the bundled normalizer's edits may touch, for the service's edit guard (docs/model-directory.md):
# an edit may consume number words, month and weekday names, their connectors and punctuation, and
# digits (Babel's written dates hold some), and may produce only digits and hyphens.
GUARD_CONNECTORS = ("y", "and", "de", "del", "of", "the", "un", "una", "uno", "one")
# Connectors that join an expression's words but never end one ("treinta y un" ends with "un", no number with "y").
# Words that end a number after it ("mil un": 1001, "doscientas una": 201, "two hundred one") and stand alone too.
NUMBER_TAIL_WORDS = frozenset({"un", "una", "uno", "one"})
GUARD_JOINING_WORDS = ("y", "and", "de", "del", "of", "the")
GUARD_CONSUMABLE_CHARACTERS = "0123456789,.-"
GUARD_PRODUCIBLE_CHARACTERS = "0123456789-"


# Everyday words of one language that are expression words of the other only: English "once" (Spanish eleven)
# and "ago" (agosto), Spanish "ten" (have!). Text of that language writes them beside digits as words.
OTHER_LANGUAGES_NUMBER_WORDS = {"en": frozenset({"once", "ago"}), "es": frozenset({"ten"})}
FREQUENT_WORDS_DIR = Path(__file__).parent / "frequent_words"
# The edit guard reads a text's language by its words among each language's most frequent (LANGUAGE_WORDS) that
# are not among the other's most frequent (SHARED_WORDS: "no", "me", "a" are words of both; each language's
# corpus holds the other's commonest words further down: "the" is Spanish word 300, "de" English word 542).
LANGUAGE_WORDS = 1000
SHARED_WORDS = 250


@functools.cache
def ranked_frequent_words(lang: str) -> tuple[str, ...]:
    """model/frequent_words/LANG.txt, most frequent first (wordfreq's ranking; README there)."""
    return tuple((FREQUENT_WORDS_DIR / f"{lang}.txt").read_text(encoding="utf-8").split())


def language_words(expression_words: set[str]) -> dict[str, list[str]]:
    """Each language's most frequent words that tell it from the other: none among the other's most frequent, none
    ranked less than twice as high as in the other ("the": English 1st, Spanish 301st, is English), no word an
    expression is made of, no single letter."""
    ranks = {lang: {w: i for i, w in enumerate(ranked_frequent_words(lang)[:LANGUAGE_WORDS])} for lang in ("en", "es")}
    words = {}
    for lang, other in (("en", "es"), ("es", "en")):
        words[lang] = sorted(
            w
            for w, rank in ranks[lang].items()
            if len(w) > 1
            and w.isalpha()
            and w not in expression_words
            and (w not in ranks[other] or (ranks[other][w] >= SHARED_WORDS and 2 * rank < ranks[other][w]))
        )
    return words


@functools.cache
def cardinal_words() -> frozenset[str]:
    """The words cardinals are written with in either language ("tres", "doscientas", "veintiún", "mil",
    "hundred", "billion"), not ordinals, months or connectors ("y", "and", "un", "one"), nor the other language's
    everyday words ("once 4" is English)."""
    everyday = set().union(*OTHER_LANGUAGES_NUMBER_WORDS.values())
    return cardinal_spellings() - set(GUARD_CONNECTORS) - everyday


@functools.cache
def ordinal_spellings() -> frozenset[str]:
    """The words of English ordinals to 120 and Spanish ones to 31 ("twenty-first" gives "twenty" and "first")."""
    words: set[str] = set()
    for n in range(1, 121):
        words.update(num2words(n, lang="en", to="ordinal").replace("-", " ").split())
    for n in range(1, 32):
        words.update(num2words(n, lang="es", to="ordinal").split())
    return frozenset(w.lower() for w in words)


@functools.cache
def number_values() -> dict[str, int]:
    """What each word of a cardinal or ordinal is worth, in either language ("tres" 3, "doscientas" 200,
    "veintiún" 21, "mil" 1000, "millones" 10**6, "hundred" 100, "twenty" 20, "third" 3, "vigésimo" 20, "oh" 0):
    the words that some number from 0 to 999 (or its ordinal, to 120) is written with alone, and the
    multipliers, read off the generator's spellings so the guard and the training contract cannot drift."""
    spelled: dict[str, set[int]] = collections.defaultdict(set)
    for n in [*range(0, 100), *range(100, 1000, 100)]:
        texts = [num2words(n, lang="en"), num2words(n, lang="es")]
        texts += [spanish_cardinal(n, form=form) for form in SPANISH_FORMS] if n else []
        for text in texts:
            if len(text.replace("-", " ").split()) == 1:
                spelled[text.lower()].add(n)
    for n in range(1, 121):
        for text in (num2words(n, lang="en", to="ordinal"), num2words(n, lang="es", to="ordinal")):
            if len(text.split()) == 1 and "-" not in text:
                spelled[text.lower()].add(n)
    # Multipliers: the last word of one and of two of each ("one hundred", "un millón", "dos millones"); Spanish
    # says its hundreds in one word ("doscientos") and its thousands of millions with "mil millones".
    for count in (1, 2):
        for power in (100, 1000, 10**6, 10**9):
            spelled[num2words(count * power, lang="en").split()[-1].lower()].add(power)
        for power in (1000, 10**6):
            spelled[spanish_cardinal(count * power).split()[-1].lower()].add(power)
    spelled[num2words(100, lang="en", to="ordinal").split()[-1].lower()].add(100)  # "hundredth"
    spelled["ciento"].add(100)  # "ciento uno": the hundred before a rest
    spelled["oh"].add(0)  # "nineteen oh five"
    ambiguous = {word: sorted(values) for word, values in spelled.items() if len(values) > 1}
    if ambiguous:
        raise ValueError(f"number words with more than one value: {ambiguous}")
    return {word: values.pop() for word, values in sorted(spelled.items())}


def _round_spanish_words() -> set[str]:
    """The Spanish words a number may end with before "un", "una", "uno" (101, 1001, 301): "ciento", the hundreds
    from two hundred in every form ("trescientos", "trescientas"), "mil"."""
    hundreds = {spanish_cardinal(n, form=form) for n in range(200, 1000, 100) for form in SPANISH_FORMS}
    return {"ciento", "mil", *hundreds}


@functools.cache
def month_numbers() -> dict[str, int]:
    """Each month name, full and abbreviated, of the Babel locales the dates are written in: "mayo" 5, "sept" 9."""
    numbers: dict[str, int] = {}
    for loc in BABEL_LOCALES:
        locale = babel_locale(loc)
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in locale.months[context][width].items():
                    word = str(name).strip(".").lower()
                    if numbers.setdefault(word, number) != number:
                        raise ValueError(f"month name {word!r} is month {numbers[word]} and {number}")
    return numbers


def edit_guard_spec() -> dict[str, object]:
    """The edit guard the bundled model declares in its manifest."""
    words = set(forbidden_words()) | set(GUARD_CONNECTORS) | ordinal_spellings()
    weekdays: set[str] = set()
    months = set(month_numbers())
    for loc in BABEL_LOCALES:
        locale = babel_locale(loc)
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                weekdays.update(str(d).strip(".").lower() for d in locale.days[context][width].values())
    words |= weekdays | months
    # A weekday name belongs to a full date ("Thursday, 12 May 2001") but is no expression alone, like a
    # connector: "on Thursday" -> "on 20" is reverted. Not "mar" (martes and marzo): a month is one alone.
    connectors = set(GUARD_CONNECTORS) | (weekdays - months)
    return {
        "consumable_words": sorted(w.lower() for w in words if w),
        "consumable_characters": GUARD_CONSUMABLE_CHARACTERS,
        "producible_characters": GUARD_PRODUCIBLE_CHARACTERS,
        "connector_words": sorted(connectors),
        # A month is an expression only with a number: "October" -> "5" is reverted, "1 abr 1965" is not.
        "name_words": sorted(months - connectors),
        # Digits an edit writes beside one of these left in words took part of a number: "ciento 99", "3 mil".
        "number_words": sorted(cardinal_words() & words),
        # An ordinal is an expression only in a date: "the first of September" -> "the 1 of September" passes,
        # "Our first child" -> "Our 1 child" and "fourth grade" -> "4 grade" are reverted.
        "ordinal_words": sorted(ordinal_spellings() - cardinal_words() - connectors),
        # "doce de junio de dos mil veintidós y" -> "2022-06-12" took the sentence's "y" with the date.
        "joining_words": sorted(GUARD_JOINING_WORDS),
        # "mil una noches" -> "1000 una noches" converted part of 1001 (tune34, apocopated probe, 2026-12-06); after
        # any other number "un" is an article ("en mil novecientos veinticinco un grupo" -> "en 1925 un grupo").
        "number_tails": {
            "words": sorted(w for w in ("un", "una", "uno") if w in words),
            "after": sorted(_round_spanish_words() & words),
        },
        # The digits an edit writes must be the numbers its source says: "ciento" -> "10" is reverted.
        "number_values": {word: value for word, value in number_values().items() if word in words},
        "month_numbers": {word: number for word, number in month_numbers().items() if word in months - connectors},
        # A real date of these years is an ISO date: "29 de febrero de 2020" wrote one in parts (the bundled model, a
        # paragraph's leap day, 2026-12-06), "31 de febrero de 2001" or "3 de mayo de 1850" is right as it is.
        "date_years": list(DATE_YEARS),
        # "Once you finish" -> "11 you finish" and "Ten cuidado" -> "10 cuidado" are reverted: in English "once" is
        # a word, in Spanish "ten" is.
        "everyday_words": {
            w: lang for lang, ws in OTHER_LANGUAGES_NUMBER_WORDS.items() for w in sorted(ws) if w in words
        },
        "language_words": language_words(words),
    }
