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
from collections.abc import Callable, Iterator, Mapping, Sequence

from model.copytext import fits_one_piece
from model.expressions import SPLITS

# Re-exported: callers and tests know the generator's split rules and the pairs file by this module.
from model.expressions import VOCABULARY_NUMBERS as VOCABULARY_NUMBERS
from model.expressions import expression_split as expression_split
from model.expressions import number_split as number_split
from model.pairs import DataError as DataError
from model.pairs import Example
from model.pairs import read_pairs_tsv as read_pairs_tsv
from model.sentences_copied import _article, _copy, _lang, _ordinal, _plain
from model.sentences_rewritten import (
    cardinal,
    context,
    date,
    expression_sentence,
    impossible,
    multiple_expressions,
    number_noun_es,
    sentence_date,
    sentence_number,
    yearless,
)
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
    "sentence_multiple_es",  # two or three expressions in one sentence: "El once de mayo ... doscientas personas."
    "sentence_multiple_en",
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
    "sentence_multiple_es": 2.0,
    "sentence_multiple_en": 2.0,
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


Pair = tuple[str, str]
Maker = Callable[[random.Random, str], Pair]
# Share of a paragraph's expression sentences that hold two or three expressions.
PARAGRAPH_MULTIPLE_SHARE = 0.25


def _separator(rng: random.Random) -> str:
    separators, weights = zip(*SENTENCE_SEPARATORS, strict=True)
    return rng.choices(separators, weights)[0]


def _line_fits(sources: Sequence[str], separators: Sequence[str], sentence: str) -> bool:
    """Whether `sentence`, joined to the paragraph so far by its last separator, leaves the line it ends on
    within one piece: the service splits at every line break, but not always between two sentences
    (a word salad without a final stop runs into the next one)."""
    text = "".join(s + sep for s, sep in zip(sources, separators, strict=True)) + sentence
    return fits_one_piece(text.rsplit("\n", 1)[-1])


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
            several = rng.random() < PARAGRAPH_MULTIPLE_SHARE
            pair = (multiple_expressions if several else expression_sentence)(rng, split, lang)
        else:
            kind = rng.random()
            if kind < 0.6:
                pair = _plain(rng, split, lang)
            elif kind < 0.75:
                pair = _article(rng, split, lang)
            else:
                pair = _copy(rng, split, rng.choice(tuple(COPY_KINDS_BY_CATEGORY.values())))
        if sources and not _line_fits(sources, separators, pair[0]):
            separators[-1] = "\n"  # the segmenter may not split between these two sentences: a line must fit
        sources.append(pair[0])
        targets.append(pair[1])
        separators.append(_separator(rng))
    separators[-1] = rng.choice(("", "", "", "\n"))  # sometimes a final line break
    return "".join(s + sep for s, sep in zip(sources, separators, strict=True)), "".join(
        t + sep for t, sep in zip(targets, separators, strict=True)
    )


_MAKERS: dict[str, Maker] = {
    "cardinal_es": lambda rng, split: cardinal(rng, split, "es"),
    "cardinal_en": lambda rng, split: cardinal(rng, split, "en"),
    "number_noun_es": number_noun_es,
    "date_written_es": lambda rng, split: date(rng, split, "es", False),
    "date_written_en": lambda rng, split: date(rng, split, "en", False),
    "date_spoken_es": lambda rng, split: date(rng, split, "es", True),
    "date_spoken_en": lambda rng, split: date(rng, split, "en", True),
    "date_yearless_es": lambda rng, split: yearless(rng, split, "es"),
    "date_yearless_en": lambda rng, split: yearless(rng, split, "en"),
    "date_impossible_es": lambda rng, split: impossible(rng, split, "es"),
    "date_impossible_en": lambda rng, split: impossible(rng, split, "en"),
    "sentence_number_es": lambda rng, split: sentence_number(rng, split, "es"),
    "sentence_number_en": lambda rng, split: sentence_number(rng, split, "en"),
    "sentence_multiple_es": lambda rng, split: multiple_expressions(rng, split, "es"),
    "sentence_multiple_en": lambda rng, split: multiple_expressions(rng, split, "en"),
    "sentence_date_es": lambda rng, split: sentence_date(rng, split, "es"),
    "sentence_date_en": lambda rng, split: sentence_date(rng, split, "en"),
    "context_es": lambda rng, split: context(rng, split, "es"),
    "context_en": lambda rng, split: context(rng, split, "en"),
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


def iter_examples(
    *,
    seed: int,
    split: str,
    categories: Sequence[str] = CATEGORIES,
    weights: Mapping[str, float] | None = None,
) -> Iterator[Example]:
    """An endless, deterministic stream of examples; categories weighted by TRAIN_CATEGORY_WEIGHTS in
    train (`weights` replaces some of them, for a training stage that drills the weak categories),
    uniform in the held-out splits.

    Held-out splits are disjoint from train: expressions (numbers, dates) are assigned to a split by
    a stable hash, and carrier templates, plain sentences and held-out words are partitioned by hash
    rank, with every held-out source containing a held-out carrier or word.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    unknown = set(categories) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown categories: {sorted(unknown)}")
    unknown = set(weights or {}) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown categories in weights: {sorted(unknown)}")
    chosen_weights = {**TRAIN_CATEGORY_WEIGHTS, **(weights or {})}
    if any(w < 0 for w in chosen_weights.values()) or not any(chosen_weights.get(c, 1.0) > 0 for c in categories):
        raise ValueError("category weights must be non-negative and leave some category drawn")
    rng = random.Random(f"atento:{seed}:{split}")  # str seeds are hashed with SHA-512: stable
    category_weights = [chosen_weights.get(c, 1.0) for c in categories]
    while True:
        category = rng.choices(categories, category_weights)[0] if split == "train" else rng.choice(categories)
        source, target = _MAKERS[category](rng, split)
        yield Example(source=source, target=target, category=category)


def generate_examples(n: int, *, seed: int, split: str, weights: Mapping[str, float] | None = None) -> list[Example]:
    """`n` examples from `iter_examples`; the same (seed, split, weights) always gives the same list."""
    stream = iter_examples(seed=seed, split=split, weights=weights)
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
