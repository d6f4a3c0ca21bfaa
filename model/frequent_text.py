"""Training sentences of real words: the most frequent words of Spanish and English text
(model/frequent_words/), in the frames dates are written in, with an expression of the contract in most.

The generator's own vocabulary is a few hundred words; real text brings words the model never saw, and in
the frames where it learnt that a date follows ("para el", "the ... of") the bundled model wrote
"Hemos recibido 21 currículos para el 1 puesto de fontanero.": "para el puesto de fontanero" read as "para
el primero de mayo". These sentences put thousands of real words in those frames, copied.

Training only: the held-out splits keep their generator (the test set's digest is pinned), and the words of
held-out carrier templates never appear here, so a held-out sentence still holds words never trained on.
"""

from __future__ import annotations

import functools
import random
import re

from model.carrier_text import carriers
from model.copytext import amount_in_digits
from model.count_phrases import count_range, count_with_unit
from model.expressions import cardinal_words, spoken_year_en
from model.sentences_rewritten import added_expression
from model.words import GUARD_CONNECTORS, OTHER_LANGUAGES_NUMBER_WORDS, edit_guard_spec, ranked_frequent_words

Pair = tuple[str, str]
# Half of the words come from the most frequent ones (articles, prepositions, verbs), so the sentences read
# like text; the other half from the whole list, where the model meets rare words.
COMMON_WORDS = 400
# Words an expression must not touch: with them a number or date reads on ("treinta" + "y un" + noun is 31,
# "a hundred" is 100), and the target would not be the expression converted alone.
JOINING_WORDS = frozenset({"y", "e", "o", "and", "or", "un", "una", "uno", "one", "a", "an", "de", "del", "of"})
FRAME_SHARE = 0.6  # of sentences with a date-like frame: "para el puesto de fontanero", "on the eve of war"
EXPRESSION_SHARE = 0.6  # of sentences with an expression to convert; the others are copied whole
SECOND_EXPRESSION_SHARE = 0.25  # of those with a second one ("about six hours, not the ten they advertise")
# Of the expressions, a count from two to twelve: the numbers real text writes in words most (the generator
# draws them one time in forty), and those the model left in words after the first expression of a review
# ("within ten working days", "after eleven months", "Dos estrellas.").
SMALL_COUNT_SHARE = 0.4
SMALL_COUNTS = tuple(range(2, 13))
_SMALL_COUNT_WEIGHTS = tuple(1 / n for n in SMALL_COUNTS)  # "dos" far more often than "doce"
# Of the English expressions, a year spoken alone after a word that leads one: "in twenty twenty-three" -> "in
# 2023" (the models wrote "in 23": they met spoken years only inside dates).
SPOKEN_YEAR_SHARE = 0.1
YEAR_LEADS = ("in ", "in ", "since ", "by ", "until ", "from ", "of ", "In ")
# Of the small counts, those written in title case, as headings and names are: "Chapter Twelve", "Room Nine" (left
# in words by the models, which met capitals only on a sentence's first word).
TITLE_CASE_SHARE = 0.1
TEXT_SHARE = 0.35  # of drills two or three sentences long
SENTENCE_ENDS = (".", ".", ",", "?", "!", "", ":")
# What people write around a number or a word: brackets, quotes, emphasis, exclamations, a table's cells, a comma
# after. The drills wrote expressions between spaces only, and the bundled model left "(tres) manzanas", "| Sillas |
# doce |", '"Twenty-five," she said' and "¡veinte!" in words. Plain words get the same marks, so that no mark says
# that an expression is inside.
_MARKS_AROUND = (("(", ")"), ('"', '"'), ("“", "”"), ("*", "*"), ("[", "]"), ("| ", " |"))
_MARKS_AFTER = (("", ","), ("", ";"), ("", ":"), ("", "..."))
PUNCTUATION_AROUND = {
    "es": (*_MARKS_AROUND, *_MARKS_AFTER, ("«", "»"), ("¡", "!"), ("¿", "?")),
    "en": (*_MARKS_AROUND, *_MARKS_AFTER, ("'", "'"), ("**", "**"), ("", "!")),
}
# HTML around a number or a word, inline and block: the bundled model of 2026-12-06 left "<td>quince</td>",
# "<li>Dos tazas de arroz</li>" and "Quedan <strong>tres</strong> días." in words, having met markup only in
# copied text.
MARKUP_AROUND = (
    ("<b>", "</b>"),
    ("<strong>", "</strong>"),
    ("<em>", "</em>"),
    ("<i>", "</i>"),
    ("<u>", "</u>"),
    ("<mark>", "</mark>"),
    ("<span>", "</span>"),
    ('<span class="num">', "</span>"),
    ('<a href="#">', "</a>"),
    ("<td>", "</td>"),
    ("<th>", "</th>"),
    ("<li>", "</li>"),
    ("<p>", "</p>"),
    ("<br>", ""),
    ("", "<br>"),
    ("", "<br/>"),
)
MARKUP_BLOCKS = (("<p>", "</p>"), ("<li>", "</li>"), ("<td>", "</td>"), ("<h2>", "</h2>"), ("<div>", "</div>"))
TEXT_SENTENCE_ENDS = (".", ".", ".", "?", "!")  # between sentences, always: "diez" + "Y" would read on
_FRAME_LEADS = {"es": ("", "para ", "en ", "desde ", "hasta ", "por "), "en": ("", "on ", "by ", "since ", "for ")}
_FRAME_ARTICLES = {"es": ("el", "la", "los", "las", "del", "al"), "en": ("the", "the", "a", "this")}
_FRAME_LINKS = {"es": ("de", "de", "del"), "en": ("of", "of", "in")}
_WORD = re.compile(r"[^\W\d_]+")
# Words of the contract's expressions in phrases that are none, copied: counts without a number ("miles de
# aficionados" came out "1000es de aficionados"), ordinals outside dates ("the first of many" came out "the 1
# of many"; "el primero de mayo" is a date), "por ciento" with no number before it; weekdays with no date after
# them (a fine-tune that drew dates' frames more wrote "Is Dr. Patel available on Thursday?" as "... on 10sday?"),
# Thursday left out, and "a couple of" is "a pair of": held-out carriers' words stay unseen in training. Never
# beside the sentence's expression, which they would read on from ("tres" + "millones de" is 3000000).
LOOKALIKE_SHARE = 0.3
LOOKALIKES = {
    "es": (
        "miles de", "Miles de", "cientos de", "Cientos de", "millones de", "decenas de", "docenas de",
        "centenares de", "miles y miles de", "el tanto por ciento", "por ciento", "el primero de la lista",
        "quedó primero", "la primera de la fila", "el primero de todos", "primero de todo", "el segundo de a bordo",
        "en segundo lugar", "un par de", "la tercera de sus hijas", "una de las", "uno de los",
        "el lunes", "los martes", "cada miércoles", "el próximo jueves", "este viernes", "el sábado",
        "hasta el domingo",
    ),
    "en": (
        "thousands of", "Thousands of", "hundreds of", "Hundreds of", "millions of", "dozens of", "tens of",
        "a dozen", "the first of many", "the first of them", "first of all", "the second of the two",
        "in the first place", "twice", "a pair of", "one of the", "percent", "the third of his sons",
        "on Monday", "every Tuesday", "on Wednesday", "next Friday", "on Saturday", "last Sunday", "by Friday",
    ),
}  # fmt: skip
# Of sentences, those with a round amount in digits, copied (copytext.amount_in_digits), and of those, the amount
# followed by its words in brackets, converted: "1.250.000 € (un millón doscientos cincuenta mil euros)" came
# out "1.250.00 € (un millón 250000 euros)".
AMOUNT_SHARE = 0.2
AMOUNT_IN_WORDS_SHARE = 0.3
CAPITALIZED_SHARE = 0.08  # of words written with a capital, as names and titles are ("Neil" came out "1000")


@functools.cache
def held_out_only_words(lang: str) -> frozenset[str]:
    """The words of held-out (valid, test) carrier templates, nouns and words that no training one holds."""
    tables = (f"number_{lang}", f"date_{lang}", f"plain_{lang}", f"article_{lang}", f"words_{lang}")
    tables += ("nouns_m_es", "nouns_f_es") if lang == "es" else ("nouns_en",)

    def words_of(split: str) -> set[str]:
        return {w.lower() for table in tables for item in carriers(table, split) for w in _WORD.findall(item)}

    return frozenset((words_of("valid") | words_of("test")) - words_of("train"))


@functools.cache
def frequent_words(lang: str) -> tuple[str, ...]:
    """Most frequent first, without the words an expression is made of (number words, ordinals, months,
    weekdays: a weekday before a date belongs to it) and without held-out words."""
    expression_words = set(edit_guard_spec()["consumable_words"]) - set(GUARD_CONNECTORS)  # type: ignore[arg-type]
    # The other language's expression words stay (model.words.OTHER_LANGUAGES_NUMBER_WORDS): the guard allows
    # them, being a union of both languages, and the models wrote "I've only been there once" as "... there 11".
    excluded = (expression_words - OTHER_LANGUAGES_NUMBER_WORDS[lang]) | held_out_only_words(lang)
    return tuple(w for w in ranked_frequent_words(lang) if w.lower() not in excluded)


def frequent_word(rng: random.Random, lang: str, *, joining: bool = True) -> str:
    """Half the time one of the COMMON_WORDS, otherwise any; with `joining` False, none of JOINING_WORDS."""
    words = frequent_words(lang)
    while True:
        word = rng.choice(words[:COMMON_WORDS] if rng.random() < 0.5 else words)
        if joining or word not in JOINING_WORDS:
            return word


def _frame(rng: random.Random, lang: str) -> str:
    """'para el puesto de fontanero', 'since the end of summer': a date's frame around words."""
    return (
        f"{rng.choice(_FRAME_LEADS[lang])}{rng.choice(_FRAME_ARTICLES[lang])} {frequent_word(rng, lang)} "
        f"{rng.choice(_FRAME_LINKS[lang])} {frequent_word(rng, lang, joining=False)}"
    )


def _marks(rng: random.Random, lang: str, markup_share: float) -> tuple[str, str]:
    """The marks around a word or an expression: HTML tags `markup_share` of the time, else punctuation (no
    draw for the tags when the share is 0, so that runs without markup draw as before)."""
    if markup_share and rng.random() < markup_share:
        return rng.choice(MARKUP_AROUND)
    return rng.choice(PUNCTUATION_AROUND[lang])


def _punctuated(rng: random.Random, lang: str, word: str, markup_share: float = 0.0) -> str:
    opening, closing = _marks(rng, lang, markup_share)
    return f"{opening}{word}{closing}"


def small_count(rng: random.Random, lang: str) -> Pair:
    """'ten minutes', 'Dos estrellas' -> '10 minutes', '2 estrellas': a count from two to twelve, the smaller
    ones more often, before a real word."""
    n = rng.choices(SMALL_COUNTS, weights=_SMALL_COUNT_WEIGHTS)[0]
    word = frequent_word(rng, lang, joining=False)
    spoken = cardinal_words(n, lang, rng)
    if rng.random() < TITLE_CASE_SHARE:
        spoken = spoken.title()
    return f"{spoken} {word}", f"{n} {word}"


def spoken_year(rng: random.Random) -> Pair:
    """'in nineteen eighty-four', 'since twenty twenty-six' -> 'in 1984', 'since 2026'."""
    year, lead = rng.randint(1900, 2099), rng.choice(YEAR_LEADS)
    return f"{lead}{spoken_year_en(year, rng)}", f"{lead}{year}"


def drill_expression(rng: random.Random, lang: str, range_share: float = 0.0, unit_share: float = 0.0) -> Pair:
    """The expression a drill converts: two counts as a range (`range_share`, model/count_phrases.py), a count
    before a unit (`unit_share`, model/count_phrases.py; no draw for either at 0, so that runs without them draw as
    before), a small count (SMALL_COUNT_SHARE), an English year spoken alone (SPOKEN_YEAR_SHARE) or any of the
    generator's."""
    if range_share and rng.random() < range_share:
        return count_range(rng, lang, frequent_word(rng, lang, joining=False))
    if unit_share and rng.random() < unit_share:
        return count_with_unit(rng, lang)
    if rng.random() < SMALL_COUNT_SHARE:
        return small_count(rng, lang)
    if lang == "en" and rng.random() < SPOKEN_YEAR_SHARE:
        return spoken_year(rng)
    return added_expression(rng, "train", lang)


def _places_apart(words: list[str], taken: list[int]) -> list[int]:
    """Where a phrase may be inserted into `words` without touching an expression: inserting at index i puts it
    between words i - 1 and i, beside the expression at t when i is t or t + 1."""
    return [i for i in range(len(words) + 1) if all(i not in (t, t + 1) for t in taken)]


def _insert_expression(
    rng: random.Random,
    lang: str,
    source: list[str],
    target: list[str],
    taken: list[int],
    punctuated_share: float,
    *,
    first: bool = False,
    markup_share: float = 0.0,
    range_share: float = 0.0,
    unit_share: float = 0.0,
) -> None:
    """An expression inserted into `source` and its conversion into `target` (first with `first`), never beside
    one of `taken` (indices of the expressions already in; updated), the words either side redrawn until none
    joins it."""
    places = _places_apart(source, taken)
    at = 0 if first and 0 in places else rng.choice(places)
    if at > 0 and source[at - 1].lower() in JOINING_WORDS:
        source[at - 1] = target[at - 1] = frequent_word(rng, lang, joining=False)
    if at < len(source) and source[at].split(" ")[0].lower() in JOINING_WORDS:
        source[at] = target[at] = frequent_word(rng, lang, joining=False)
    expression_source, expression_target = drill_expression(rng, lang, range_share, unit_share)
    if punctuated_share and rng.random() < punctuated_share:
        opening, closing = _marks(rng, lang, markup_share)  # the same marks around both sides
        expression_source = f"{opening}{expression_source}{closing}"
        expression_target = f"{opening}{expression_target}{closing}"
    _place(source, target, taken, at, (expression_source, expression_target), converted=True)


def _place(source: list[str], target: list[str], taken: list[int], at: int, pair: Pair, *, converted: bool) -> None:
    """`pair` inserted at `at` on both sides; the indices of the expressions in `taken` follow it, and with
    `converted` it is one of them."""
    source.insert(at, pair[0])
    target.insert(at, pair[1])
    taken[:] = [t + 1 if t >= at else t for t in taken] + ([at] if converted else [])


def _insert_amount(rng: random.Random, lang: str, source: list[str], target: list[str], taken: list[int]) -> None:
    """A round amount in digits, copied, never beside an expression; some followed by their words in brackets."""
    digits, value = amount_in_digits(rng)
    at = rng.choice(_places_apart(source, taken))
    in_words = rng.random() < AMOUNT_IN_WORDS_SHARE
    pair = (f"{digits} ({cardinal_words(value, lang, rng)})", f"{digits} ({value})") if in_words else (digits, digits)
    _place(source, target, taken, at, pair, converted=in_words)


def frequent_word_sentence(
    rng: random.Random,
    lang: str,
    *,
    most_words: int = 14,
    ends: tuple[str, ...] = SENTENCE_ENDS,
    punctuated_share: float = 0.0,
    opening_share: float = 0.0,
    markup_share: float = 0.0,
    range_share: float = 0.0,
    unit_share: float = 0.0,
) -> Pair:
    """Frequent words, maybe a date-like frame, maybe one or two expressions (converted in the target); with
    `punctuated_share`, that share of the expressions and of the sentences' words marked (PUNCTUATION_AROUND;
    `markup_share` of those marks HTML tags, MARKUP_AROUND; `range_share` of the expressions two counts, a range,
    `unit_share` a count before a unit);
    with `opening_share`, that share of the sentences with an expression open with it, capitalized: the models
    left counts opening a later sentence in words ("Two bedrooms, one bathroom.", "Nine points from their last
    three games."), which the drills placed first one time in seven."""
    source = [frequent_word(rng, lang) for _ in range(rng.randint(3, most_words))]
    source = [w.capitalize() if rng.random() < CAPITALIZED_SHARE else w for w in source]
    if punctuated_share:
        # Not the last word: the sentence's own end follows it.
        marked = [
            _punctuated(rng, lang, w, markup_share) if rng.random() < punctuated_share / 4 else w for w in source[:-1]
        ]
        source = [*marked, source[-1]]
    if rng.random() < FRAME_SHARE:
        source.insert(rng.randint(0, len(source)), _frame(rng, lang))
    target = list(source)
    taken: list[int] = []
    opens_with_expression = False
    if rng.random() < EXPRESSION_SHARE:
        opens_with_expression = bool(opening_share) and rng.random() < opening_share
        shapes = {"markup_share": markup_share, "range_share": range_share, "unit_share": unit_share}
        _insert_expression(rng, lang, source, target, taken, punctuated_share, first=opens_with_expression, **shapes)
        if rng.random() < SECOND_EXPRESSION_SHARE:
            _insert_expression(rng, lang, source, target, taken, punctuated_share, **shapes)
    if rng.random() < AMOUNT_SHARE:
        _insert_amount(rng, lang, source, target, taken)
    if rng.random() < LOOKALIKE_SHARE:
        # Never next to an expression, which a lookalike would read on from ("tres" + "millones de").
        lookalike, at = rng.choice(LOOKALIKES[lang]), rng.choice(_places_apart(source, taken))
        source.insert(at, lookalike)
        target.insert(at, lookalike)
    end = rng.choice(ends)
    opening = {"?": "¿", "!": "¡"}.get(end, "") if lang == "es" else ""
    capitalize = rng.random() < 0.7 or opens_with_expression
    texts = []
    for words in (source, target):
        text = " ".join(words)
        if capitalize:
            text = text[:1].upper() + text[1:]
        texts.append(opening + text + end)
    return texts[0], texts[1]


def frequent_word_text(
    rng: random.Random,
    lang: str,
    *,
    punctuated_share: float = 0.0,
    opening_share: float = 0.0,
    markup_share: float = 0.0,
    range_share: float = 0.0,
    unit_share: float = 0.0,
) -> Pair:
    """One frequent-word sentence, or (TEXT_SHARE) two or three, each ended by its punctuation, as a review or
    an e-mail is written: the expressions of the later sentences are converted as well as the first's. With
    `markup_share`, half that share of the texts inside an HTML block ("<li>Dos tazas de arroz.</li>")."""
    if markup_share and rng.random() < markup_share / 2:
        opening, closing = rng.choice(MARKUP_BLOCKS)
        shares = {"opening_share": opening_share, "markup_share": markup_share, "range_share": range_share}
        shares["unit_share"] = unit_share
        source, target = frequent_word_text(rng, lang, punctuated_share=punctuated_share, **shares)
        return opening + source + closing, opening + target + closing
    shares = {
        "punctuated_share": punctuated_share,
        "opening_share": opening_share,
        "markup_share": markup_share,
        "range_share": range_share,
        "unit_share": unit_share,
    }
    if rng.random() >= TEXT_SHARE:
        return frequent_word_sentence(rng, lang, **shares)
    count = rng.randint(2, 3)
    sentences = [
        frequent_word_sentence(rng, lang, most_words=9, ends=TEXT_SENTENCE_ENDS, **shares) for _ in range(count)
    ]
    breaks = [rng.choice((" ", " ", " ", "\n")) for _ in sentences[1:]]
    source, target = sentences[0]
    for space, (next_source, next_target) in zip(breaks, sentences[1:], strict=True):
        source, target = source + space + next_source, target + space + next_target
    return source, target
