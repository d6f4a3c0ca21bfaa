"""The expressions the normalizer rewrites, sampled per split, with every written and spoken form the
generator emits: cardinals (2 to 999,999,999,999), dates with a year (to ISO 8601), dates without a
year (the day to digits) and impossible dates (their numbers as cardinals).

Split assignment lives here too: an expression belongs to one split by a stable hash of its value.
Imports nothing from this repo but its sibling generator modules (num2words + Babel only).
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import random
from collections.abc import Sequence

from babel.dates import format_date
from num2words import num2words

from model.numbers import MAX_CARDINAL, english_cardinal, spanish_cardinal, spanish_cardinal_variant
from model.words import DATE_YEARS, babel_locale

SPLITS = ("train", "valid", "test")
# Percent buckets of the stable expression hash: [0, 90) train, [90, 95) valid, [95, 100) test.
SPLIT_BUCKETS = {"train": range(0, 90), "valid": range(90, 95), "test": range(95, 100)}
MIN_NUMBER, MAX_NUMBER = 2, MAX_CARDINAL
# The words numbers are made of: 2-99 and the hundreds are single words in Spanish or English
# ("trece", "veintitrés", "quinientos"). A model cannot learn a word it never sees, so these are not
# held out as expressions: bare, they belong to train; inside a sentence they appear in every split
# (a held-out sentence is held out by its carrier template or word).
VOCABULARY_NUMBERS = frozenset([*range(2, 100), *range(100, 1000, 100)])
# Share of training sentences whose number is a vocabulary number (2-99, the hundreds); see sample_number.
SMALL_NUMBER_SHARE_IN_TRAINING = 0.25
_SORTED_VOCABULARY_NUMBERS = tuple(sorted(VOCABULARY_NUMBERS))  # a frozenset has no stable order to draw from
MIN_DATE, MAX_DATE = dt.date(DATE_YEARS[0], 1, 1), dt.date(DATE_YEARS[1], 12, 31)
# Share of sampled numbers made round ("forty million", "seiscientos mil"), whose zeros are easy to miscount.
ROUND_NUMBER_SHARE = 0.35
# Share of sampled numbers that are a count of thousands, millions or thousands of millions ("mil
# millones", "dos millones", "cien mil"): round numbers above put their zeros anywhere, and the earlier
# models wrote "mil millones" with a zero too few.
SCALE_NUMBER_SHARE = 0.06
# Training draws them twice as often (a model trained in one run wrote "siete millones" as "700000");
# held-out splits keep SCALE_NUMBER_SHARE, so the test split is unchanged.
SCALE_NUMBER_SHARE_IN_TRAINING = 0.12
# Share of training's numbers of seven digits or more with one group of three under the top one made small
# (0 to 99): "three hundred and eighty million, three thousand, six hundred and seventy six" is 380 003 676, its
# zeros written nowhere. Drawn like any other number a group under ten is one in a hundred, and the make-train model
# of 2026-12-06 wrote that number as "38003676" and "one hundred fifty six million, seven thousand fifty" as
# "1560500". Held-out splits draw none (their test sets stay as they were).
SMALL_GROUP_SHARE_IN_TRAINING = 0.2
# Days from 29 on belong to train with every month, as the vocabulary numbers do: whether a month has a
# 29th, 30th or 31st is a fact of the calendar, not a pattern to generalize, and a model that never saw
# "October thirty-first" had no way to tell it from the impossible "November thirty-first".
FIRST_DAY_KEPT_FOR_TRAINING = 29
LAST_DAYS_SHARE = 0.15  # of sampled days of the year, drawn from FIRST_DAY_KEPT_FOR_TRAINING on
BABEL_FORMATS = ("full", "long", "medium")  # "short" is numeric: no month name, outside the contract


def stable_hash(key: str) -> int:
    """A process-independent 64-bit hash (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def number_split(n: int) -> str:
    """The split that owns the bare cardinal n (the vocabulary numbers belong to train)."""
    return "train" if n in VOCABULARY_NUMBERS else expression_split(f"num:{n}")


def expression_split(key: str) -> str:
    """The split that owns a normalized expression key such as "num:1234" or "date:2026-11-29"."""
    bucket = stable_hash(key) % 100
    return next(split for split, buckets in SPLIT_BUCKETS.items() if bucket in buckets)


# ---------------------------------------------------------------------------------------------
# Cardinals


def sample_number(rng: random.Random, split: str, *, in_sentence: bool = False, max_digits: int = 12) -> int:
    """Log-uniform over digit counts, with some round numbers ("cien mil", "mil millones").

    Inside a sentence the vocabulary numbers may appear in any split (see VOCABULARY_NUMBERS). Training
    sentences also draw them on their own more often: people write "doce" far more often than
    "doce mil millones", and log-uniform digit counts made two-digit numbers one draw in six, the
    numbers the earlier models most often left as words."""
    if in_sentence and split == "train" and rng.random() < SMALL_NUMBER_SHARE_IN_TRAINING:
        return rng.choice(_SORTED_VOCABULARY_NUMBERS)
    while True:
        digits = rng.randint(1, max_digits)
        n = rng.randint(max(MIN_NUMBER, 10 ** (digits - 1)), 10**digits - 1)
        scales = [s for s in (3, 6, 9) if s < max_digits]
        scale_share = SCALE_NUMBER_SHARE_IN_TRAINING if split == "train" else SCALE_NUMBER_SHARE
        if scales and rng.random() < scale_share:
            scale = rng.choice(scales)
            count = rng.choice((1, 1, rng.randint(2, 9), rng.randint(10, 999)))
            n = count * 10 ** min(scale, max_digits - len(str(count)))
        elif rng.random() < ROUND_NUMBER_SHARE and digits > 2:
            scale = 10 ** rng.randint(2, digits - 1)
            n = max(scale, n - n % scale)
        elif split == "train" and digits > 6 and rng.random() < SMALL_GROUP_SHARE_IN_TRAINING:
            n = with_a_small_group(rng, n)
        if number_split(n) == split or (in_sentence and n in VOCABULARY_NUMBERS):
            return n


def with_a_small_group(rng: random.Random, n: int) -> int:
    """`n` with one of its groups of three digits below the top one replaced by 0, 1-9 or 10-99."""
    groups = (len(str(n)) - 1) // 3  # the groups under the top one
    power = 1000 ** rng.randrange(groups)
    small = rng.choice((0, rng.randint(1, 9), rng.randint(10, 99)))
    return n - (n // power % 1000) * power + small * power


# Share of training's counted Spanish nouns whose number is a round hundred or thousand plus one ("ciento un
# dálmatas", "mil una noches", "doscientos un años"). Drawn like any other number they were about one count
# in a thousand, and a model trained so wrote "mil un años" as "1000 un años" and "ciento un dálmatas" as
# "10 un dálmatas". Held-out splits draw none (their test sets stay as they were).
ROUND_THEN_ONE_SHARE_IN_TRAINING = 0.15
_ROUND_BASES = (*range(100, 1000, 100), *range(1000, 10_000, 1000), 10_000, 20_000, 100_000, 200_000)


def round_then_one_in_training(rng: random.Random, split: str, n: int) -> int:
    """`n`, or in training, ROUND_THEN_ONE_SHARE_IN_TRAINING of the time, a number where Spanish apocope
    follows a round one: 101 ("ciento un"), 1001 ("mil un"), 100001 ("cien mil un"); always one of train's
    numbers (number_split). Held-out splits draw no random number here."""
    if split != "train" or rng.random() >= ROUND_THEN_ONE_SHARE_IN_TRAINING:
        return n
    while True:
        n = rng.choice(_ROUND_BASES) + 1
        if number_split(n) == "train":
            return n


def cardinal_words(n: int, lang: str, rng: random.Random | None = None, *, form: str = "alone") -> str:
    """The spoken form of a cardinal (never capitalized); with `rng`, one of the variants people write.

    `form` is Spanish agreement with a following noun: "alone", "masculine" ("veintiún años") or
    "feminine" ("veintiuna casas", "doscientas personas")."""
    if lang == "es":
        return spanish_cardinal(n, form=form) if rng is None else spanish_cardinal_variant(n, rng, form=form)
    return english_cardinal(n, rng)


def sentence_agreement(rng: random.Random) -> str:
    """The Spanish agreement of a number inside a carrier sentence: the noun after the slot is not known,
    and the digits are the same whatever the gender, so all three forms are drawn."""
    return rng.choices(("alone", "masculine", "feminine"), (0.4, 0.4, 0.2))[0]


# ---------------------------------------------------------------------------------------------
# Dates with a year


def sample_date(rng: random.Random, split: str) -> dt.date:
    span = (MAX_DATE - MIN_DATE).days
    while True:
        d = MIN_DATE + dt.timedelta(days=rng.randint(0, span))
        if expression_split(f"date:{d.isoformat()}") == split:
            return d


LEAP_DAYS = tuple(dt.date(y, 2, 29) for y in range(MIN_DATE.year, MAX_DATE.year + 1) if calendar.isleap(y))


def sample_leap_day(rng: random.Random) -> dt.date:
    """29 February of a leap year: a date, where the same day of a common year is none (1900 is common,
    2000 leap). Drawn uniformly among all days, a leap day is one in 1,461: too rare to learn against the
    common years' 29 Februaries that the impossible dates hold ("2020-02-29" came out "29 de febrero de 2020").
    Every split draws from all 49, as the last days of the months (day_of_year_split): which years are
    leap is a closed list to learn, and a model held out from some of them could not tell them from the
    common years around them (2032 and 2096, held out by their hash, stayed "29 de febrero de 2032")."""
    return rng.choice(LEAP_DAYS)


def month_name(month: int, lang: str) -> str:
    locale = babel_locale("es_ES" if lang == "es" else "en_US")
    return str(locale.months["format"]["wide"][month])


def written_date(d: dt.date, *, locale: str, fmt: str) -> str:
    return format_date(d, format=fmt, locale=babel_locale(locale))


def spoken_day_es(day: int, rng: random.Random) -> str:
    return rng.choice(("uno", "primero")) if day == 1 else spanish_cardinal(day)


def spoken_date_es(d: dt.date, rng: random.Random) -> str:
    return f"{spoken_day_es(d.day, rng)} de {month_name(d.month, 'es')} de {spanish_cardinal(d.year)}"


def spoken_year_en(year: int, rng: random.Random) -> str:
    """ "twenty twenty-six", "nineteen oh-five"/"nineteen oh five", "two thousand (and) one"."""
    options = [num2words(year, lang="en", to="year")] * 2  # the usual reading, twice as likely
    if "oh-" in options[0]:
        options.append(options[0].replace("oh-", "oh "))
    if year >= 2010:  # 2000-2009 already read as cardinals: "two thousand and one"
        cardinal = num2words(year, lang="en")
        options += [cardinal, cardinal.replace(" and ", " ")]
    elif year >= 2000:
        options.append(options[0].replace(" and ", " "))
    return rng.choice(options)


def spoken_day_en(day: int) -> str:
    return num2words(day, lang="en", to="ordinal")


def spoken_date_en(d: dt.date, rng: random.Random) -> str:
    month, day, year = month_name(d.month, "en"), spoken_day_en(d.day), spoken_year_en(d.year, rng)
    if rng.random() < 0.5:
        return f"{month} {day}, {year}"
    return f"the {day} of {month}, {year}"


def date_source(d: dt.date, lang: str, rng: random.Random, *, spoken: bool) -> str:
    if spoken:
        return spoken_date_es(d, rng) if lang == "es" else spoken_date_en(d, rng)
    locale = "es_ES" if lang == "es" else rng.choice(("en_US", "en_GB"))
    return written_date(d, locale=locale, fmt=rng.choice(BABEL_FORMATS))


# ---------------------------------------------------------------------------------------------
# Dates without a year, and days the month does not have


def day_of_year_split(month: int, day: int) -> str:
    """The split that owns a day-month pair alone (the days from FIRST_DAY_KEPT_FOR_TRAINING on are train's)."""
    return "train" if day >= FIRST_DAY_KEPT_FOR_TRAINING else expression_split(f"day:{month}-{day}")


def sample_day_of_year(rng: random.Random, split: str, *, in_sentence: bool = False) -> tuple[int, int]:
    """A (month, day) pair; split by the pair, so held-out splits see day-month pairs never trained on.
    Inside a (held-out) sentence the last days of a month may appear in any split."""
    while True:
        month = rng.randint(1, 12)
        last = calendar.monthrange(2000, month)[1]  # 2000 is a leap year: 29 February exists
        # The last days are drawn more often: whether "February twenty-ninth" or "April thirtieth" is a
        # date depends on the month, and drawn uniformly they are too rare to learn (they stayed words).
        first = FIRST_DAY_KEPT_FOR_TRAINING if rng.random() < LAST_DAYS_SHARE else 1
        day = rng.randint(first, last)
        if day_of_year_split(month, day) == split or (in_sentence and day >= FIRST_DAY_KEPT_FOR_TRAINING):
            return month, day


def yearless_date(month: int, day: int, lang: str, rng: random.Random) -> tuple[str, str]:
    """("tres de mayo", "3 de mayo"), ("May third", "May 3"), ("the third of May", "the 3 of May"):
    the day becomes digits and everything else stays."""
    month_word = month_name(month, lang)
    if lang == "es":
        if rng.random() < 0.15:
            month_word = month_word.capitalize()
        return f"{spoken_day_es(day, rng)} de {month_word}", f"{day} de {month_word}"
    day_word = spoken_day_en(day)
    if rng.random() < 0.6:
        return f"{month_word} {day_word}", f"{month_word} {day}"
    return f"the {day_word} of {month_word}", f"the {day} of {month_word}"


# The share of odd years redrawn when training asks for a common year's 29 February, so that two in three are even.
# Every leap day is of an even year, and an odd year is common whatever else the model reads: drawn uniformly (a
# third of common years even), the even common years were the fewer, and models wrote their 29 February inside a
# sentence as a date about half the time (leap_day_carrier_probe: common_en_even 48%, common_es_even 58%, the
# `make train` run of 2026-12-07; test set v8 holds one even common English year, 2026).
ODD_COMMON_YEAR_REDRAW = 0.75


def sample_impossible_day(rng: random.Random, split: str, *, common_29_february: float = 0.0) -> tuple[int, int, int]:
    """(year, month, day) with a day its month does not have: 30 or 31 February, 31 April, 29 February
    of a common year; the last at least `common_29_february` of the time, two in three of those of an even year."""
    while True:
        year = rng.randint(1900, 2099) if rng.random() < 0.6 else rng.randint(2000, 2099)
        # No draw without a share: the held-out splits' random numbers stay as they were.
        if common_29_february and rng.random() < common_29_february:
            if calendar.isleap(year) or (year % 2 == 1 and rng.random() < ODD_COMMON_YEAR_REDRAW):
                continue
            month, day = 2, 29
        else:
            month = rng.choice((2, 2, 2, 4, 6, 9, 11))
            last = calendar.monthrange(year, month)[1]
            day = rng.randint(last + 1, 31 if month != 2 else 30)
        if expression_split(f"impossible:{year}-{month}-{day}") == split:
            return year, month, day


def impossible_date(
    year: int, month: int, day: int, lang: str, rng: random.Random, *, with_year: bool
) -> tuple[str, str]:
    """An impossible date is no date: its cardinals become digits, its ordinals and month stay words.

    "treinta y uno de febrero de dos mil uno" -> "31 de febrero de 2001";
    "February thirtieth, two thousand and one" -> "February thirtieth, 2001"."""
    month_word = month_name(month, lang)
    if lang == "es":
        source, target = f"{spanish_cardinal(day)} de {month_word}", f"{day} de {month_word}"
        if with_year:
            source += f" de {spanish_cardinal(year)}"
            target += f" de {year}"
        return source, target
    day_word = spoken_day_en(day)
    source = target = f"{month_word} {day_word}" if rng.random() < 0.6 else f"the {day_word} of {month_word}"
    if with_year:
        # Only years read as one cardinal ("two thousand and one"): "twenty twenty" is no cardinal. Moved
        # into this century the day must stay impossible: 29 February 1900 was none, 29 February 2000 is a
        # date (max(year, 2000) made it one, kept in words, against the leap days' "2000-02-29").
        year = year + 100 if year < 2000 else year
        if day <= calendar.monthrange(year, month)[1]:
            year += 1
        source += f", {english_cardinal(year, rng)}"
        target += f", {year}"
    return source, target


def ordinal_words(rng: random.Random, lang: str) -> Sequence[str]:
    """Ordinals, which stay words: "first", "twenty-third", "primero", "vigésima"."""
    if lang == "en":
        return [num2words(rng.randint(1, 120), lang="en", to="ordinal") for _ in range(rng.randint(1, 3))]
    masculine = num2words(rng.randint(1, 30), lang="es", to="ordinal")
    return [masculine[:-1] + "a" if masculine.endswith("o") and rng.random() < 0.4 else masculine]
