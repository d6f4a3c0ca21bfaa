"""Generate Spanish/English text-normalization pairs on the fly (user pairs from TSV: model/pairs.py).

Owns the bundled task's data contract: one category per clause (CATEGORIES), each drawn from
model/expressions.py (what is rewritten), model/carrier_text.py (the sentences around it) and
model/copytext.py (what is only copied). Imports nothing from this repo but those generator modules
(num2words + Babel only).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Iterator, Sequence

from model.carrier_text import carrier_template, carriers, random_sentence
from model.copytext import copy_piece, fits_one_piece
from model.expressions import (
    SPLITS,
    cardinal_words,
    date_source,
    impossible_date,
    sample_date,
    sample_day_of_year,
    sample_impossible_day,
    sample_number,
    sentence_agreement,
    yearless_date,
)

# Re-exported: callers and tests know the generator's split rules and the pairs file by this module.
from model.expressions import VOCABULARY_NUMBERS as VOCABULARY_NUMBERS
from model.expressions import expression_split as expression_split
from model.expressions import number_split as number_split
from model.pairs import DataError as DataError
from model.pairs import Example
from model.pairs import read_pairs_tsv as read_pairs_tsv
from model.sentences_copied import _article, _copy, _lang, _ordinal, _plain, _words
from model.short_text import short_phrase

# One category per clause of the contract; held-out splits sample them uniformly.
CATEGORIES = (
    "cardinal_es",  # "mil doscientos treinta y cuatro" -> "1234", up to 999,999,999,999
    "cardinal_en",  # "one thousand, two hundred and thirty-four", "twenty-one hundred" -> "1234", "2100"
    "number_noun_es",  # agreement: "doscientas casas" -> "200 casas", "veintiún perros" -> "21 perros"
    "date_written_es",  # Babel es_ES full/long/medium -> ISO
    "date_written_en",  # Babel en_US/en_GB full/long/medium -> ISO
    "date_spoken_es",  # "veintinueve de noviembre de dos mil veintiséis" -> ISO
    "date_spoken_en",  # "November twenty-ninth, twenty twenty-six" -> ISO
    "date_yearless_es",  # "el tres de mayo" -> "el 3 de mayo"
    "date_yearless_en",  # "May third" -> "May 3"
    "date_impossible_es",  # "treinta y uno de febrero de dos mil uno" -> "31 de febrero de 2001"
    "date_impossible_en",  # "February thirtieth, two thousand and one" -> "February thirtieth, 2001"
    "sentence_number_es",  # a cardinal rewritten in place inside a carrier sentence
    "sentence_number_en",
    "sentence_date_es",  # a written or spoken date rewritten in place inside a carrier sentence
    "sentence_date_en",
    "context_es",  # an expression next to digits, URLs, markup, emoji or other scripts
    "context_en",
    "paragraph_mixed",  # several sentences and line breaks, some with expressions
    "plain_es",  # no expression: target == source
    "plain_en",
    "article_es",  # "un", "una", "uno" as articles/pronouns: target == source
    "article_en",  # "one" as a pronoun: target == source
    "ordinal_es",  # ordinals stay words: target == source
    "ordinal_en",
    "copy_script",  # Cyrillic, Greek, Arabic, CJK, ... inside a sentence: target == source
    "copy_emoji",  # emoji and symbols
    "copy_digits",  # numbers already in digits: prices, decimals, times, 12/10/1492, phones
    "copy_url",  # URLs and e-mail addresses
    "copy_markup",  # HTML, Markdown, code
    "paragraph_plain",  # several sentences and line breaks, nothing to rewrite
    "short_es",  # alone, no sentence: "doscientas personas", "el tres de mayo"; "un", "primero" stay
    "short_en",  # "twelve screws", "May third"; "one", "first" stay
)
# The categories whose target is their source: what the edit guard must keep at 100%.
COPY_ONLY_CATEGORIES = ("copy_script", "copy_emoji", "copy_digits", "copy_url", "copy_markup", "paragraph_plain")
# Training draws the categories the model finds hard more often and the solved ones less (the bare
# dates were solved by every earlier model, sentences with an expression inside were the weakest: README,
# "The bundled model"). Paragraphs are several sentences long, so raising their share makes a step slower.
# Held-out splits sample uniformly, so the test set holds the same number of examples per category.
TRAIN_CATEGORY_WEIGHTS = {
    "date_written_es": 0.25,
    "date_written_en": 0.25,
    "date_spoken_es": 0.3,
    "date_spoken_en": 0.3,
    "date_yearless_es": 0.6,
    "date_yearless_en": 0.6,
    "date_impossible_es": 0.6,
    "date_impossible_en": 0.6,
    "sentence_number_es": 2.5,
    "sentence_number_en": 2.5,
    "sentence_date_es": 1.2,
    "sentence_date_en": 1.2,
    "context_es": 1.5,
    "context_en": 1.5,
    "paragraph_mixed": 3.0,
    "plain_es": 0.7,
    "plain_en": 0.7,
    "article_es": 0.7,
    "article_en": 0.7,
    "ordinal_es": 0.6,
    "ordinal_en": 0.6,
    "paragraph_plain": 1.0,
}  # every other category: 1
# A paragraph holds 2 to PARAGRAPH_MAX_SENTENCES sentences and stops growing past PARAGRAPH_MAX_CHARS,
# which keeps almost every paragraph within the model's source limit.
PARAGRAPH_MAX_SENTENCES = 5
PARAGRAPH_MAX_CHARS = 200
# What separates sentences in a paragraph, with their odds: spaces, line breaks, blank lines.
SENTENCE_SEPARATORS = ((" ", 0.55), ("\n", 0.2), ("\n\n", 0.12), ("  ", 0.05), (" \n", 0.04), ("\r\n", 0.04))
COPY_KINDS_BY_CATEGORY = {
    "copy_script": "script",
    "copy_emoji": "emoji",
    "copy_digits": "digits",
    "copy_url": "url",
    "copy_markup": "markup",
}
# What may sit next to an expression in the context categories.
CONTEXT_KINDS = ("script", "emoji", "digits", "url", "markup", "odd")


Pair = tuple[str, str]
Maker = Callable[[random.Random, str], Pair]


# ---------------------------------------------------------------------------------------------
# Expressions, bare and in sentences


def _cardinal(rng: random.Random, split: str, lang: str) -> Pair:
    n = sample_number(rng, split)
    return cardinal_words(n, lang, rng), str(n)


def _date(rng: random.Random, split: str, lang: str, spoken: bool) -> Pair:
    d = sample_date(rng, split)
    return date_source(d, lang, rng, spoken=spoken), d.isoformat()


def _in_carrier(rng: random.Random, split: str, table: str, pair: Pair, slot: str) -> Pair:
    """`pair` put in place into a carrier sentence of `table` (hand-written or random words)."""
    template = carrier_template(rng, split, table, "{" + slot + "}")
    return template.format(**{slot: pair[0]}), template.format(**{slot: pair[1]})


def _sentence_number(rng: random.Random, split: str, lang: str) -> Pair:
    n = sample_number(rng, split, in_sentence=True)
    form = sentence_agreement(rng) if lang == "es" else "alone"
    return _in_carrier(rng, split, f"number_{lang}", (cardinal_words(n, lang, rng, form=form), str(n)), "n")


def _number_noun_es(rng: random.Random, split: str) -> Pair:
    """A number agreeing with the noun it counts: "doscientas casas", "veintiún perros", "un millón de"."""
    feminine = rng.random() < 0.5
    nouns = carriers("nouns_f_es" if feminine else "nouns_m_es", "train")
    noun = rng.choice([n for n in nouns if n[-1] in "aeiou"]) + "s"
    n = sample_number(rng, split, in_sentence=True, max_digits=rng.choice((2, 3, 6, 9)))
    if rng.random() < 0.4:  # the agreement that matters most: numbers ending in one, and hundreds
        n = n - n % 100 + rng.choice((1, 21, 31, 41, 51, 61, 71, 81, 91)) if n > 100 else rng.choice((21, 31, 41, 51))
    words = cardinal_words(n, "es", rng, form="feminine" if feminine else "masculine")
    of = " de" if n % 1_000_000 == 0 else ""  # "dos millones de casas"
    # Random words around it: the hand-written number templates already have a noun after the slot.
    carrier = random_sentence(rng, split, "es").replace("{", "(").replace("}", ")").split(" ")
    at = rng.randint(1, len(carrier))
    source = " ".join([*carrier[:at], f"{words}{of} {noun}", *carrier[at:]])
    target = " ".join([*carrier[:at], f"{n}{of} {noun}", *carrier[at:]])
    return source, target


def _sentence_date(rng: random.Random, split: str, lang: str) -> Pair:
    d = sample_date(rng, split)
    return _in_carrier(
        rng, split, f"date_{lang}", (date_source(d, lang, rng, spoken=rng.random() < 0.5), d.isoformat()), "d"
    )


def _yearless(rng: random.Random, split: str, lang: str) -> Pair:
    month, day = sample_day_of_year(rng, split)
    return _in_carrier(rng, split, f"date_{lang}", yearless_date(month, day, lang, rng), "d")


def _impossible(rng: random.Random, split: str, lang: str) -> Pair:
    year, month, day = sample_impossible_day(rng, split)
    pair = impossible_date(year, month, day, lang, rng, with_year=rng.random() < 0.6)
    # Held-out splits always use a held-out carrier: bare, the few impossible days repeat across splits.
    return _in_carrier(rng, split, f"date_{lang}", pair, "d") if split != "train" or rng.random() < 0.7 else pair


def _expression_sentence(rng: random.Random, split: str, lang: str) -> Pair:
    """A sentence with one expression of any kind the contract rewrites."""
    makers: list[Callable[[], Pair]] = [
        lambda: _sentence_number(rng, split, lang),
        lambda: _sentence_date(rng, split, lang),
        lambda: _yearless(rng, split, lang),
        lambda: _impossible(rng, split, lang),
    ]
    if lang == "es":
        makers.append(lambda: _number_noun_es(rng, split))
    return rng.choices(makers, (4, 3, 1, 0.5, 1)[: len(makers)])[0]()


def _context(rng: random.Random, split: str, lang: str) -> Pair:
    """An expression in a sentence that also holds copy-only text: digits, a URL, emoji, markup."""
    while True:
        pair = _context_once(rng, split, lang)
        if fits_one_piece(pair[0]) and fits_one_piece(pair[1]):
            return pair


def _context_once(rng: random.Random, split: str, lang: str) -> Pair:
    source, target = _expression_sentence(rng, split, lang)
    kinds = rng.sample(CONTEXT_KINDS, rng.randint(1, 2))
    pieces = [copy_piece(rng, _words(split, lang), kind) for kind in kinds]
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


def _separator(rng: random.Random) -> str:
    separators, weights = zip(*SENTENCE_SEPARATORS, strict=True)
    return rng.choices(separators, weights)[0]


def _paragraph(rng: random.Random, split: str, *, with_expressions: bool) -> Pair:
    """2-5 sentences joined by spaces and line breaks, in one language or both."""
    lang = _lang(rng)
    count = rng.randint(2, PARAGRAPH_MAX_SENTENCES)
    sources: list[str] = []
    targets: list[str] = []
    separators: list[str] = []
    while len(sources) < count and sum(map(len, sources)) < PARAGRAPH_MAX_CHARS:
        if rng.random() < 0.15:
            lang = _lang(rng)
        if with_expressions and rng.random() < 0.6:
            pair = _expression_sentence(rng, split, lang)
        else:
            kind = rng.random()
            if kind < 0.6:
                pair = _plain(rng, split, lang)
            elif kind < 0.75:
                pair = _article(rng, split, lang)
            else:
                pair = _copy(rng, split, rng.choice(tuple(COPY_KINDS_BY_CATEGORY.values())))
        sources.append(pair[0])
        targets.append(pair[1])
        separators.append(_separator(rng))
    separators[-1] = rng.choice(("", "", "", "\n"))  # sometimes a final line break
    return "".join(s + sep for s, sep in zip(sources, separators, strict=True)), "".join(
        t + sep for t, sep in zip(targets, separators, strict=True)
    )


_MAKERS: dict[str, Maker] = {
    "cardinal_es": lambda rng, split: _cardinal(rng, split, "es"),
    "cardinal_en": lambda rng, split: _cardinal(rng, split, "en"),
    "number_noun_es": _number_noun_es,
    "date_written_es": lambda rng, split: _date(rng, split, "es", False),
    "date_written_en": lambda rng, split: _date(rng, split, "en", False),
    "date_spoken_es": lambda rng, split: _date(rng, split, "es", True),
    "date_spoken_en": lambda rng, split: _date(rng, split, "en", True),
    "date_yearless_es": lambda rng, split: _yearless(rng, split, "es"),
    "date_yearless_en": lambda rng, split: _yearless(rng, split, "en"),
    "date_impossible_es": lambda rng, split: _impossible(rng, split, "es"),
    "date_impossible_en": lambda rng, split: _impossible(rng, split, "en"),
    "sentence_number_es": lambda rng, split: _sentence_number(rng, split, "es"),
    "sentence_number_en": lambda rng, split: _sentence_number(rng, split, "en"),
    "sentence_date_es": lambda rng, split: _sentence_date(rng, split, "es"),
    "sentence_date_en": lambda rng, split: _sentence_date(rng, split, "en"),
    "context_es": lambda rng, split: _context(rng, split, "es"),
    "context_en": lambda rng, split: _context(rng, split, "en"),
    "paragraph_mixed": lambda rng, split: _paragraph(rng, split, with_expressions=True),
    "plain_es": lambda rng, split: _plain(rng, split, "es"),
    "plain_en": lambda rng, split: _plain(rng, split, "en"),
    "article_es": lambda rng, split: _article(rng, split, "es"),
    "article_en": lambda rng, split: _article(rng, split, "en"),
    "ordinal_es": lambda rng, split: _ordinal(rng, split, "es"),
    "ordinal_en": lambda rng, split: _ordinal(rng, split, "en"),
    "copy_script": lambda rng, split: _copy(rng, split, "script"),
    "copy_emoji": lambda rng, split: _copy(rng, split, "emoji"),
    "copy_digits": lambda rng, split: _copy(rng, split, "digits"),
    "copy_url": lambda rng, split: _copy(rng, split, "url"),
    "copy_markup": lambda rng, split: _copy(rng, split, "markup"),
    "paragraph_plain": lambda rng, split: _paragraph(rng, split, with_expressions=False),
    "short_es": lambda rng, split: short_phrase(rng, split, "es"),
    "short_en": lambda rng, split: short_phrase(rng, split, "en"),
}


def iter_examples(*, seed: int, split: str, categories: Sequence[str] = CATEGORIES) -> Iterator[Example]:
    """An endless, deterministic stream of examples; categories weighted by TRAIN_CATEGORY_WEIGHTS in
    train, uniform in the held-out splits.

    Held-out splits are disjoint from train: expressions (numbers, dates) are assigned to a split by
    a stable hash, and carrier templates, plain sentences and held-out words are partitioned by hash
    rank, with every held-out source containing a held-out carrier or word.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    unknown = set(categories) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown categories: {sorted(unknown)}")
    rng = random.Random(f"atento:{seed}:{split}")  # str seeds are hashed with SHA-512: stable
    weights = [TRAIN_CATEGORY_WEIGHTS.get(c, 1.0) for c in categories]
    while True:
        category = rng.choices(categories, weights)[0] if split == "train" else rng.choice(categories)
        source, target = _MAKERS[category](rng, split)
        yield Example(source=source, target=target, category=category)


def generate_examples(n: int, *, seed: int, split: str) -> list[Example]:
    """`n` examples from `iter_examples`; the same (seed, split) always gives the same list."""
    stream = iter_examples(seed=seed, split=split)
    return [next(stream) for _ in range(n)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Print generated examples as source<TAB>target<TAB>category.")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=SPLITS, default="train")
    args = parser.parse_args(argv)
    for ex in generate_examples(args.n, seed=args.seed, split=args.split):
        sys.stdout.write(f"{ex.source}\t{ex.target}\t{ex.category}\n")


if __name__ == "__main__":
    main()
