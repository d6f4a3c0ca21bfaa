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
from pathlib import Path

from model.carrier_text import carriers
from model.sentences_rewritten import added_expression
from model.words import GUARD_CONNECTORS, edit_guard_spec

Pair = tuple[str, str]
FREQUENT_WORDS_DIR = Path(__file__).parent / "frequent_words"
# Half of the words come from the most frequent ones (articles, prepositions, verbs), so the sentences read
# like text; the other half from the whole list, where the model meets rare words.
COMMON_WORDS = 400
# Words an expression must not touch: with them a number or date reads on ("treinta" + "y un" + noun is 31,
# "a hundred" is 100), and the target would not be the expression converted alone.
JOINING_WORDS = frozenset({"y", "e", "o", "and", "or", "un", "una", "uno", "one", "a", "an", "de", "del", "of"})
FRAME_SHARE = 0.6  # of sentences with a date-like frame: "para el puesto de fontanero", "on the eve of war"
EXPRESSION_SHARE = 0.6  # of sentences with an expression to convert; the others are copied whole
_FRAME_LEADS = {"es": ("", "para ", "en ", "desde ", "hasta ", "por "), "en": ("", "on ", "by ", "since ", "for ")}
_FRAME_ARTICLES = {"es": ("el", "la", "los", "las", "del", "al"), "en": ("the", "the", "a", "this")}
_FRAME_LINKS = {"es": ("de", "de", "del"), "en": ("of", "of", "in")}
_WORD = re.compile(r"[^\W\d_]+")
# Words of the contract's expressions in phrases that are none, copied: counts without a number ("miles de
# aficionados" came out "1000es de aficionados"), ordinals outside dates ("the first of many" came out "the 1
# of many"; "el primero de mayo" is a date), "por ciento" with no number before it. Never beside the
# sentence's expression, which they would read on from ("tres" + "millones de" is 3000000).
LOOKALIKE_SHARE = 0.3
LOOKALIKES = {
    "es": (
        "miles de", "Miles de", "cientos de", "Cientos de", "millones de", "decenas de", "docenas de",
        "centenares de", "miles y miles de", "el tanto por ciento", "por ciento", "el primero de la lista",
        "quedó primero", "la primera de la fila", "el primero de todos", "primero de todo", "el segundo de a bordo",
        "en segundo lugar", "un par de", "la tercera de sus hijas", "una de las", "uno de los",
    ),
    "en": (
        "thousands of", "Thousands of", "hundreds of", "Hundreds of", "millions of", "dozens of", "tens of",
        "a dozen", "the first of many", "the first of them", "first of all", "the second of the two",
        "in the first place", "twice", "a couple of", "one of the", "percent", "the third of his sons",
    ),
}  # fmt: skip
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
    text = (FREQUENT_WORDS_DIR / f"{lang}.txt").read_text(encoding="utf-8")
    expression_words = set(edit_guard_spec()["consumable_words"]) - set(GUARD_CONNECTORS)  # type: ignore[arg-type]
    excluded = expression_words | held_out_only_words(lang)
    return tuple(w for w in text.split() if w.lower() not in excluded)


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


def frequent_word_sentence(rng: random.Random, lang: str) -> Pair:
    """Frequent words, maybe a date-like frame, maybe one expression (converted in the target)."""
    source = [frequent_word(rng, lang) for _ in range(rng.randint(3, 14))]
    source = [w.capitalize() if rng.random() < CAPITALIZED_SHARE else w for w in source]
    if rng.random() < FRAME_SHARE:
        source.insert(rng.randint(0, len(source)), _frame(rng, lang))
    target = list(source)
    expression_at = None
    if rng.random() < EXPRESSION_SHARE:
        expression_at = at = rng.randint(0, len(source))
        # The words either side are redrawn until none joins the expression (a frame ends in a non-joining word).
        if at > 0 and source[at - 1].lower() in JOINING_WORDS:
            source[at - 1] = target[at - 1] = frequent_word(rng, lang, joining=False)
        if at < len(source) and source[at].split(" ")[0].lower() in JOINING_WORDS:
            source[at] = target[at] = frequent_word(rng, lang, joining=False)
        expression_source, expression_target = added_expression(rng, "train", lang)
        source.insert(at, expression_source)
        target.insert(at, expression_target)
    if rng.random() < LOOKALIKE_SHARE:
        # Inserting at index i puts the phrase between words i - 1 and i: never next to the expression.
        places = [
            i for i in range(len(source) + 1) if expression_at is None or i not in (expression_at, expression_at + 1)
        ]
        lookalike, at = rng.choice(LOOKALIKES[lang]), rng.choice(places)
        source.insert(at, lookalike)
        target.insert(at, lookalike)
    end = rng.choice((".", ".", ",", "?", "!", "", ":"))
    opening = {"?": "¿", "!": "¡"}.get(end, "") if lang == "es" else ""
    capitalize = rng.random() < 0.7
    texts = []
    for words in (source, target):
        text = " ".join(words)
        if capitalize:
            text = text[:1].upper() + text[1:]
        texts.append(opening + text + end)
    return texts[0], texts[1]
