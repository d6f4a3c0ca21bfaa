"""Counts that open a later sentence: "... de la playa. Tiene dos piscinas." -> "... de la playa. Tiene 2 piscinas."

The generator's carriers never open with their slot (model/carrier_text.py), so in its paragraphs no sentence
after the first starts with a number or with the few words that lead to one. People write them all the time, and
the bundled model of 2026-12-05 left them in words or dropped the word before them: "Tiene dos piscinas y un
gimnasio." after a first sentence came out "2 piscinas y un gimnasio.", "Eighteen of them are new." and "Veinte
años atrás eran menos." were copied (tests/integration/real_text_probe_fresh.jsonl, written before this drill).

A drill text is one or two of training's own sentences, then a hand-written number carrier (training's) cut so that
its count, or the one or two words before it, opens the sentence, capitalized; sometimes one more sentence after.
Training only: it draws from the training split's carriers and numbers and nothing in the held-out splits changes.
"""

from __future__ import annotations

import random
import re

from model.carrier_text import carriers
from model.expressions import cardinal_words, sample_number, sentence_agreement
from model.copytext import fits_one_piece
from model.sentences_rewritten import expression_sentence, sentence_number

Pair = tuple[str, str]
# How many of the carrier's words before its count stay ("tiene {n}" -> "Tiene dos"), and their odds.
LEAD_WORDS_KEPT = ((0, 0.5), (1, 0.35), (2, 0.15))
# Digit counts of the opening count: mostly the small counts people open a sentence with ("Nine points").
COUNT_DIGITS = (2, 2, 2, 3, 4, 6)
# What the sentences around the opening one are: a copied carrier, or one with an expression of its own.
LEADING_KINDS = (("plain", 0.5), ("number", 0.3), ("expression", 0.2))
# Between sentences, with their odds: most texts people write run on with a space.
SEPARATORS = ((" ", 0.75), ("\n", 0.2), ("\n\n", 0.05))
FOLLOWING_SENTENCE_SHARE = 0.4
SENTENCE_END = re.compile(r"[.!?…][»\"”')]*$")
OPENING_MARKS = ("«", "“", '"', "(", "[", "¿", "¡", "—")


def _weighted(rng: random.Random, choices: tuple[tuple[object, float], ...]) -> object:
    values, weights = zip(*choices, strict=True)
    return rng.choices(values, weights)[0]


def capitalized(text: str) -> str:
    """The first letter upper-cased, after any opening mark ("¿tiene" -> "¿Tiene", "«dos" -> "«Dos"); a text that
    opens with digits stays as it is ("40 tickets")."""
    for i, character in enumerate(text):
        if character.isalpha():
            return text[:i] + character.upper() + text[i + 1 :]
        if character.isdigit():
            return text
    return text


def opening_count_sentence(rng: random.Random, lang: str) -> Pair:
    """A training number carrier from its count on, or from one or two words before it, capitalized:
    "El pueblo tiene {n} habitantes según el censo." -> "Tiene ocho habitantes según el censo."."""
    while True:
        template = rng.choice([t for t in carriers(f"number_{lang}", "train") if t.count("{n}") == 1])
        before, after = template.split("{n}")
        lead = before.split()
        kept = min(int(_weighted(rng, LEAD_WORDS_KEPT)), len(lead))  # type: ignore[call-overload]
        cut, kept_words = lead[: len(lead) - kept], lead[len(lead) - kept :]
        if not any(mark in word for word in cut for mark in OPENING_MARKS):  # a quote cut open is no sentence
            break
    n = sample_number(rng, "train", in_sentence=True, max_digits=rng.choice(COUNT_DIGITS))
    words = cardinal_words(n, lang, rng, form=sentence_agreement(rng) if lang == "es" else "alone")
    source = " ".join([*kept_words, words]) + after
    target = " ".join([*kept_words, str(n)]) + after
    return capitalized(source), capitalized(target)


def _surrounding_sentence(rng: random.Random, lang: str) -> Pair:
    """A sentence of training's, ended: a bare expression ("the thirty-first of November") gets a full stop, so
    that the count after it opens a sentence rather than reading on from it."""
    kind = _weighted(rng, LEADING_KINDS)
    if kind == "plain":
        sentence = rng.choice(carriers(f"plain_{lang}", "train"))
        return sentence, sentence
    source, target = sentence_number(rng, "train", lang) if kind == "number" else expression_sentence(rng, "train", lang)
    if not SENTENCE_END.search(source):
        source, target = source + ".", target + "."
    return source, target


def opening_count_text(rng: random.Random, lang: str) -> Pair:
    """One or two sentences, then one that opens with its count, then maybe one more; short enough for one
    piece of the service's segmentation."""
    while True:
        sentences = [_surrounding_sentence(rng, lang) for _ in range(rng.choice((1, 1, 2)))]
        sentences.append(opening_count_sentence(rng, lang))
        if rng.random() < FOLLOWING_SENTENCE_SHARE:
            sentences.append(_surrounding_sentence(rng, lang))
        source, target = sentences[0]
        for next_source, next_target in sentences[1:]:
            separator = str(_weighted(rng, SEPARATORS))
            source, target = source + separator + next_source, target + separator + next_target
        if fits_one_piece(source) and fits_one_piece(target):
            return source, target
