"""The generator's sentences with something to rewrite: bare cardinals and dates, the same inside
carrier sentences, counted nouns, sentences with two or three expressions, and expressions beside
copy-only text (digits, URLs, emoji, markup). Split from model/data.py, which composes them into
categories; model/sentences_copied.py holds the sentences whose target is their source.
"""

from __future__ import annotations

import calendar
import functools
import random
from collections.abc import Callable

from model.carrier_text import carrier_template, carriers, random_sentence
from model.copytext import copy_piece, fits_one_piece, round_amount_share
from model.expressions import (
    LEAP_DAYS,
    cardinal_words,
    date_source,
    impossible_date,
    round_then_one_in_training,
    sample_date,
    sample_day_of_year,
    sample_impossible_day,
    sample_leap_day,
    sample_number,
    sentence_agreement,
    yearless_date,
)
from model.sentences_copied import _words
from model.short_text import counted_noun
from model.words import GUARD_CONNECTORS, NUMBER_TAIL_WORDS, month_names, ordinal_spellings
from model.words import cardinal_words as cardinal_word_set

Pair = tuple[str, str]
# What may sit next to an expression in the context categories.
CONTEXT_KINDS = ("script", "emoji", "digits", "url", "markup", "odd")
# Words that may lead an expression added to a sentence that already holds one ("con doscientas
# personas", "and May third"). Never "y"/"and" straight after a number: that would read as one number.
ADDED_EXPRESSION_LEADS = {
    "es": ("", "", "con ", "y ", "de ", "para ", "en ", "el ", "hasta el "),
    "en": ("", "", "with ", "and ", "for ", "on ", "of ", "by "),
}
# The share of dated expressions that fall on 29 February of a leap year (expressions.sample_leap_day).
LEAP_DAY_SHARE = 0.06
# Training draws more of them: at 0.06 every model still wrote "29 de febrero de 1956" for a leap year
# spoken in words (which years are leap is a list learned from examples, against the common years'
# impossible 29 Februaries). Held-out splits keep LEAP_DAY_SHARE, so the test split is unchanged.
# At 0.15 a run saw about 13 spoken examples of each leap year in each language, against twice as many
# common years' 29 Februaries among the impossible dates, and wrote every spoken leap day as no date
# (2000 included); at 0.4 training holds about one leap day for two common years' 29 Februaries (0.50 and
# 0.54 over 20,000 examples), and the leap-day minimal pairs (model/drills.py) add both one to one.
LEAP_DAY_SHARE_IN_TRAINING = 0.4
# Common years' 29 Februaries, in the same places as the leap days: only the year tells one from the other.
COMMON_29_FEBRUARY_SHARE_IN_TRAINING = 0.4
# How many of training's leap days and impossible dates stand in a carrier sentence; the rest are bare.
LEAP_AND_IMPOSSIBLE_IN_CARRIER_SHARE = 0.7


def cardinal(rng: random.Random, split: str, lang: str) -> Pair:
    n = sample_number(rng, split)
    return cardinal_words(n, lang, rng), str(n)


def date(rng: random.Random, split: str, lang: str, spoken: bool) -> Pair:
    if rng.random() < (LEAP_DAY_SHARE_IN_TRAINING if split == "train" else LEAP_DAY_SHARE):
        d = sample_leap_day(rng)
        pair = date_source(d, lang, rng, spoken=spoken), d.isoformat()
        # Every split draws every leap day. Training puts most in carriers, as it does the impossible dates:
        # when training drew them only bare, every model wrote a leap day inside a sentence as no date (the
        # only 29 Februaries it had seen in sentences were the common years' impossible ones).
        return _mostly_in_carrier(rng, split, lang, pair)
    d = sample_date(rng, split)
    return date_source(d, lang, rng, spoken=spoken), d.isoformat()


# The drills' years, by first year (Spanish from 1900, English from 2000) and, for common years, parity.
_DRILL_LEAP_DAYS = {first: tuple(d for d in LEAP_DAYS if d.year >= first) for first in (1900, 2000)}
_DRILL_COMMON_YEARS = {
    (first, even): tuple(y for y in range(first, 2100) if not calendar.isleap(y) and (y % 2 == 0) == even)
    for first in (1900, 2000)
    for even in (True, False)
}


def leap_day_drill(rng: random.Random, lang: str) -> Pair:
    """29 February spoken in words, of a leap year half the time and of a common year otherwise: pairs
    that differ by their year alone (training only; model/drills.py mixes them into batches).

    Without them every model decided by the century: the impossible dates' years lean to 20xx (in English
    all of them), so "veintinueve de febrero de mil novecientos once" became a date and every "dos mil
    doce" stayed words (the leap-day probe: leap_es 57%, common_es 75%, leap_en 75%). English years are
    drawn from 2000 on, where its impossible dates are (impossible_date moves the others there)."""
    first_year = 1900 if lang == "es" else 2000
    if rng.random() < 0.5:
        day = rng.choice(_DRILL_LEAP_DAYS[first_year])
        if lang == "es":
            pair = date_source(day, lang, rng, spoken=True), day.isoformat()
        else:
            # As impossible_date reads an English year: a cardinal ("two thousand and twelve"), never
            # "twenty twelve", or the reading itself would tell the two kinds apart.
            common_form, _ = impossible_date(day.year, 2, 29, lang, rng, with_year=False)
            pair = f"{common_form}, {cardinal_words(day.year, lang, rng)}", day.isoformat()
    else:
        # Mostly even common years (1902, 2034): the model learns soon that odd years are common, and then
        # wrote every even year's 29 February as a date.
        even = rng.random() < 2 / 3
        year = rng.choice(_DRILL_COMMON_YEARS[first_year, even])
        pair = impossible_date(year, 2, 29, lang, rng, with_year=True)
    return _mostly_in_carrier(rng, "train", lang, pair)


def leap_day_minimal_pair(rng: random.Random, lang: str) -> tuple[Pair, Pair]:
    """The same 29 February twice, in the same words and the same carrier: once with a leap year, once with a
    common year one or two away ("... veintinueve de febrero de dos mil doce" -> a date, "... de dos mil
    catorce" -> none). Side by side in a batch, the only thing that tells them apart is the year's last word,
    so the gradient cannot lean on the century or the reading (training only; model/drills.py)."""
    first_year = 1900 if lang == "es" else 2000
    leap = rng.choice(_DRILL_LEAP_DAYS[first_year]).year
    offset = rng.choice((-2, -2, 2, 2, -1, 1))  # mostly even neighbours: odd years are the easy ones
    # In the leap year's century (2000's neighbours are 2001 and 2002, never 1998), so the century tells nothing.
    common = leap + offset if (leap + offset) // 100 == leap // 100 else leap - offset
    form_source, form_target = impossible_date(leap, 2, 29, lang, rng, with_year=False)
    separator = " de " if lang == "es" else ", "
    reading = rng.getstate()  # both years in the same variant ("two thousand and twelve" / "... fourteen")
    leap_words = cardinal_words(leap, lang, rng)
    rng.setstate(reading)
    common_words = cardinal_words(common, lang, rng)
    leap_pair = f"{form_source}{separator}{leap_words}", f"{leap}-02-29"
    common_pair = f"{form_source}{separator}{common_words}", f"{form_target}{separator}{common}"
    if rng.random() >= LEAP_AND_IMPOSSIBLE_IN_CARRIER_SHARE:
        return leap_pair, common_pair
    template = carrier_template(rng, "train", f"date_{lang}", "{d}")
    return (
        (template.format(d=leap_pair[0]), template.format(d=leap_pair[1])),
        (template.format(d=common_pair[0]), template.format(d=common_pair[1])),
    )


def _mostly_in_carrier(rng: random.Random, split: str, lang: str, pair: Pair) -> Pair:
    """A leap day or an impossible date: in a held-out split always in a held-out carrier (bare, the few such
    days would repeat training's sources), in training in a carrier LEAP_AND_IMPOSSIBLE_IN_CARRIER_SHARE of
    the time."""
    carried = split != "train" or rng.random() < LEAP_AND_IMPOSSIBLE_IN_CARRIER_SHARE
    return in_carrier(rng, split, f"date_{lang}", pair, "d") if carried else pair


def in_carrier(rng: random.Random, split: str, table: str, pair: Pair, slot: str) -> Pair:
    """`pair` put in place into a carrier sentence of `table` (hand-written or random words)."""
    template = carrier_template(rng, split, table, "{" + slot + "}")
    return template.format(**{slot: pair[0]}), template.format(**{slot: pair[1]})


def sentence_number(rng: random.Random, split: str, lang: str) -> Pair:
    n = sample_number(rng, split, in_sentence=True)
    form = sentence_agreement(rng) if lang == "es" else "alone"
    return in_carrier(rng, split, f"number_{lang}", (cardinal_words(n, lang, rng, form=form), str(n)), "n")


def number_noun_es(rng: random.Random, split: str) -> Pair:
    """A number agreeing with the noun it counts: "doscientas casas", "veintiún perros", "un millón de"."""
    feminine = rng.random() < 0.5
    nouns = carriers("nouns_f_es" if feminine else "nouns_m_es", "train")
    noun = rng.choice([n for n in nouns if n[-1] in "aeiou"]) + "s"
    n = sample_number(rng, split, in_sentence=True, max_digits=rng.choice((2, 3, 6, 9)))
    if rng.random() < 0.4:  # the agreement that matters most: numbers ending in one, and hundreds
        n = n - n % 100 + rng.choice((1, 21, 31, 41, 51, 61, 71, 81, 91)) if n > 100 else rng.choice((21, 31, 41, 51))
    n = round_then_one_in_training(rng, split, n)
    words = cardinal_words(n, "es", rng, form="feminine" if feminine else "masculine")
    of = " de" if n % 1_000_000 == 0 else ""  # "dos millones de casas"
    # Random words around it: the hand-written number templates already have a noun after the slot.
    carrier = random_sentence(rng, split, "es").replace("{", "(").replace("}", ")").split(" ")
    at = rng.randint(1, len(carrier))
    source = " ".join([*carrier[:at], f"{words}{of} {noun}", *carrier[at:]])
    target = " ".join([*carrier[:at], f"{n}{of} {noun}", *carrier[at:]])
    return source, target


def sentence_date(rng: random.Random, split: str, lang: str) -> Pair:
    d = sample_date(rng, split)
    return in_carrier(
        rng, split, f"date_{lang}", (date_source(d, lang, rng, spoken=rng.random() < 0.5), d.isoformat()), "d"
    )


def yearless(rng: random.Random, split: str, lang: str) -> Pair:
    month, day = sample_day_of_year(rng, split, in_sentence=True)
    return in_carrier(rng, split, f"date_{lang}", yearless_date(month, day, lang, rng), "d")


def impossible(rng: random.Random, split: str, lang: str) -> Pair:
    common_29_february = COMMON_29_FEBRUARY_SHARE_IN_TRAINING if split == "train" else 0.0
    year, month, day = sample_impossible_day(rng, split, common_29_february=common_29_february)
    # Without its year, 29 February is a date (of a leap year), rewritten as the yearless dates are:
    # left in words here it taught the model that "February twenty-ninth" stays words, and the
    # yearless English category lost almost all of its 29 Februaries. Only its common year makes it impossible.
    with_year = rng.random() < 0.6 or (month, day) == (2, 29)
    pair = impossible_date(year, month, day, lang, rng, with_year=with_year)
    return _mostly_in_carrier(rng, split, lang, pair)


def expression_sentence(rng: random.Random, split: str, lang: str) -> Pair:
    """A sentence with one expression of any kind the contract rewrites."""
    makers: list[Callable[[], Pair]] = [
        lambda: sentence_number(rng, split, lang),
        lambda: sentence_date(rng, split, lang),
        lambda: yearless(rng, split, lang),
        lambda: impossible(rng, split, lang),
    ]
    if lang == "es":
        makers.append(lambda: number_noun_es(rng, split))
    return rng.choices(makers, (4, 3, 1, 0.5, 1)[: len(makers)])[0]()


def context(rng: random.Random, split: str, lang: str) -> Pair:
    """An expression in a sentence that also holds copy-only text: digits, a URL, emoji, markup."""
    while True:
        pair = _context_once(rng, split, lang)
        if fits_one_piece(pair[0]) and fits_one_piece(pair[1]):
            return pair


def _context_once(rng: random.Random, split: str, lang: str) -> Pair:
    source, target = expression_sentence(rng, split, lang)
    kinds = rng.sample(CONTEXT_KINDS, rng.randint(1, 2))
    pieces = [
        copy_piece(rng, _words(split, lang), kind, round_amount_share=round_amount_share(split)) for kind in kinds
    ]
    if "markup" in kinds and rng.random() < 0.5:  # markup around the whole sentence: "<b>...</b>"
        mark = rng.choice((("<b>", "</b>"), ("**", "**"), ("<p>", "</p>"), ("- ", ""), ("> ", "")))
        return mark[0] + source + mark[1], mark[0] + target + mark[1]
    # The same pieces at the same word positions on both sides; the expression's words differ in count,
    # so positions are counted from the sentence's end when inserting after the expression.
    joined_source, joined_target = source, target
    for piece in pieces:
        if rng.random() < 0.5:
            joined_source, joined_target = f"{piece} {joined_source}", f"{piece} {joined_target}"
        else:
            joined_source, joined_target = f"{joined_source} {piece}", f"{joined_target} {piece}"
    return joined_source, joined_target


def multiple_expressions(rng: random.Random, split: str, lang: str) -> Pair:
    """A sentence with two or three expressions: "El once de mayo de dos mil uno llegaron doscientas
    personas." -> "El 2001-05-11 llegaron 200 personas."; short enough to be read whole."""
    while True:
        source, target = expression_sentence(rng, split, lang)
        added = 0
        for _ in range(rng.choice((1, 1, 2))):
            more = _add_expression(rng, split, lang, source, target)
            if more is not None:
                (source, target), added = more, added + 1
        if added and fits_one_piece(source) and fits_one_piece(target):
            return source, target


def _add_expression(rng: random.Random, split: str, lang: str, source: str, target: str) -> Pair | None:
    """One more expression between words that source and target share, at least one shared word away
    from what is already rewritten, so that no two expressions read as one ("treinta" + "y dos casas").
    None when the sentence has no such place."""
    source_words, target_words = source.split(" "), target.split(" ")
    shortest = min(len(source_words), len(target_words))
    prefix = 0
    while prefix < shortest and source_words[prefix] == target_words[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and source_words[-1 - suffix] == target_words[-1 - suffix]:
        suffix += 1
    # A date's month and its "de"/"of" are the same on both sides but belong to the rewritten span; in training, an
    # English day in words too. Held-out splits draw as before (test set v8), and hold no such sentence.
    in_training = split == "train"
    while prefix and _date_glue(source_words[prefix - 1], ordinals=in_training):
        prefix -= 1
    while suffix and _date_glue(source_words[-suffix], ordinals=in_training):
        suffix -= 1
    # ("start", i): before word i of the shared start; ("end", j): before the last j words of the shared end.
    places = [("start", i) for i in range(prefix)] + [("end", j) for j in range(1, suffix)]
    if suffix and source_words[-1][-1:].isalnum():
        places.append(("end", 0))
    # In training, not before "un", "una", "uno" or "one": a number before one reads as one number with it ("mil un
    # Burundi" is 1001, not "1000 un Burundi", which the edit guard rightly reverts).
    places = [
        (side, offset)
        for side, offset in places
        if not in_training
        or _may_end_a_number_before(source_words, offset if side == "start" else len(source_words) - offset)
    ]
    if not places or prefix == len(source_words):  # nothing rewritten yet: no span to keep away from
        return None
    side, offset = rng.choice(places)
    added_source, added_target = added_expression(rng, split, lang)
    for words, added in ((source_words, added_source), (target_words, added_target)):
        words.insert(offset if side == "start" else len(words) - offset, added)
    if side == "start" and offset == 0:  # the sentence now opens with the added expression
        source_words[0], target_words[0] = _capitalized(source_words[0]), _capitalized(target_words[0])
    return " ".join(source_words), " ".join(target_words)


def added_expression(rng: random.Random, split: str, lang: str) -> Pair:
    """A counted noun, a date with or without a year, or a bare cardinal, with a word that may lead it."""
    kind = rng.choices(("counted", "yearless", "dated", "cardinal"), (3, 1.5, 1.5, 1))[0]
    if kind == "counted":
        lead = rng.choice(("", "", "con ", "y ", "para ") if lang == "es" else ("", "", "with ", "and ", "for "))
        source, target = counted_noun(rng, split, lang)
    elif kind == "cardinal":
        lead = rng.choice(("", "unos ", "y ", "son ") if lang == "es" else ("", "about ", "and ", "is "))
        n = sample_number(rng, split, in_sentence=True)
        source, target = cardinal_words(n, lang, rng), str(n)
    else:
        lead = rng.choice(("", "el ", "desde el ", "hasta el ") if lang == "es" else ("", "on ", "by ", "since "))
        if kind == "yearless":
            source, target = yearless_date(*sample_day_of_year(rng, split, in_sentence=True), lang, rng)
        else:
            d = sample_date(rng, split)
            source, target = date_source(d, lang, rng, spoken=rng.random() < 0.6), d.isoformat()
    return lead + source, lead + target


def _may_end_a_number_before(words: list[str], at: int) -> bool:
    """Whether an expression inserted before words[at] may end there: not before a word that would join its number."""
    return at >= len(words) or words[at].lower() not in NUMBER_TAIL_WORDS


@functools.cache
def _date_glue_words() -> frozenset[str]:
    months = {m.lower() for lang in ("es", "en") for m in month_names(lang)}
    return frozenset(months | {"de", "del", "of", "the", "el"})


def _date_glue(word: str, *, ordinals: bool) -> bool:
    """A date's word that its rewrite may keep: a month, "de", "of", and (`ordinals`) an English day in words, which
    an impossible date keeps ("February twenty-ninth, 2031"): an expression inserted inside it left "February on the
    thirtieth of March twenty-ninth, 2031", whose "March twenty-ninth, 2031" is a real date."""
    bare = word.strip(".,;:!?¿¡«»\"'()").lower()
    return bare in _date_glue_words() or (ordinals and _is_ordinal(bare))


@functools.cache
def _is_ordinal(word: str) -> bool:
    """ "twenty-ninth", "first", "thirtieth": a word whose last part is an ordinal and no cardinal."""
    last = word.split("-")[-1]
    return last in ordinal_spellings() and last not in cardinal_word_set() and last not in GUARD_CONNECTORS


def _capitalized(word: str) -> str:
    return word[:1].upper() + word[1:]
