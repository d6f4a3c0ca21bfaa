"""Carrier text for the task generator: the hand-written sentences and random word salads that
expressions are put into, partitioned so that held-out splits hold carriers and words never trained on.

Imports nothing from this repo but its sibling generator modules (num2words + Babel only).
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Sequence
from pathlib import Path

from model.carriers import (
    NAMES,
    NOUNS_EN,
    NOUNS_F_ES,
    NOUNS_M_ES,
    ODD_TOKENS,
    WORDS_EN,
    WORDS_ES,
)
from model.expressions import stable_hash
from model.words import (
    NUMBER_TAIL_WORDS,
    cldr_words,
    forbidden_words,
    month_names,
    near_miss_word,
    pseudo_word,
)

# The hand-written carrier sentences, one file per table: "{n}" is a cardinal slot, "{d}" a date slot,
# "{nm}"/"{nf}"/"{noun}" a noun slot (model/carriers.py's nouns). Slots never open a sentence.
SENTENCES_DIR = Path(__file__).parent / "sentences"
# Share of carrier templates and words held out for each of valid and test (by hash rank).
HELD_OUT_FRACTION = 0.1
# Share of sentence carriers taken from the hand-written templates; the rest is random words.
TEMPLATE_CARRIER_SHARE = 0.5
# Share of random-sentence words replaced by pronounceable nonsense, which can only be copied.
PSEUDO_WORD_SHARE = 0.12
# Share of random-sentence words that merely resemble a number word ("milk", "tresco"): copied as is,
# so the model learns that only whole number words are numbers.
NEAR_MISS_SHARE = 0.03
# Share of random-sentence words with punctuation stuck to them ("—¿Vienes?", "(casa)", "dijo:"), so
# the model copies any mark next to any word, not only where the templates put them.
ATTACHED_PUNCTUATION_SHARE = 0.05
LEADING_MARKS = ("—", "¿", "¡", "(", "«", "“", "'", "-", "[")
TRAILING_MARKS = (")", "»", "”", "?", "!", ":", ";", "…", "'s", "]", ".")
# Share of random-sentence words taken from CLDR's names of countries, languages, currencies and
# scripts in that language (Babel's data, ~1,500 words each): rare real words to copy.
CLDR_WORD_SHARE = 0.12
# Chance that a plain random sentence holds a bare month name, which alone is not a date: copied.
BARE_MONTH_SHARE = 0.15


def partition(items: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Split carrier items by hash rank: the lowest-ranked HELD_OUT_FRACTION go to test, the next to valid."""
    ranked = sorted(dict.fromkeys(items), key=lambda s: (stable_hash("carrier:" + s), s))
    k = max(1, round(len(ranked) * HELD_OUT_FRACTION))
    return {"test": tuple(ranked[:k]), "valid": tuple(ranked[k : 2 * k]), "train": tuple(ranked[2 * k :])}


@functools.cache
def sentences(name: str) -> tuple[str, ...]:
    """The hand-written carrier sentences of `model/sentences/{name}.txt`, one per non-empty line."""
    text = (SENTENCES_DIR / f"{name}.txt").read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line.strip())


@functools.cache
def plain_words(lang: str) -> tuple[str, ...]:
    forbidden = forbidden_words()
    words = WORDS_ES if lang == "es" else WORDS_EN
    return tuple(w for w in dict.fromkeys(words + NAMES) if w.lower() not in forbidden)


@functools.cache
def carriers(name: str, split: str) -> tuple[str, ...]:
    tables: dict[str, Sequence[str]] = {
        "number_es": sentences("number_es"),
        "number_en": sentences("number_en"),
        "date_es": sentences("date_es"),
        "date_en": sentences("date_en"),
        "plain_es": sentences("plain_es"),
        "plain_en": sentences("plain_en"),
        "article_es": sentences("article_es"),
        "article_en": sentences("article_en"),
        "nouns_m_es": NOUNS_M_ES,
        "nouns_f_es": NOUNS_F_ES,
        "nouns_en": NOUNS_EN,
        "words_es": plain_words("es"),
        "words_en": plain_words("en"),
        "cldr_es": cldr_words("es"),
        "cldr_en": cldr_words("en"),
    }
    return partition(tables[name])[split]


def carrier_template(rng: random.Random, split: str, name: str, insert: str) -> str:
    """A hand-written carrier sentence half of the time, otherwise random words around the slot, so
    the model learns to copy any text around an expression rather than memorize the templates."""
    if rng.random() < TEMPLATE_CARRIER_SHARE:
        return rng.choice(carriers(name, split))
    words = random_sentence(rng, split, name.rsplit("_", 1)[1]).replace("{", "(").replace("}", ")").split(" ")
    at = rng.randint(1, len(words))
    if split == "train" and at < len(words) and _bare_word(words[at]) in NUMBER_TAIL_WORDS:
        # "doscientos un íjodycu" is 201 íjodycu, not "200 un íjodycu" (which the edit guard rightly reverts). Held-out
        # splits draw as before (test set v8), and hold no such sentence.
        del words[at]
    words.insert(at, insert)
    return " ".join(words)


def _bare_word(word: str) -> str:
    """The word's letters without the marks random_sentence attaches to it: "un" of "un's", "¡Una"."""
    letters = re.match(r"\W*(\w*)", word)
    return letters.group(1).lower() if letters else ""


def random_sentence(rng: random.Random, split: str, lang: str, *, bare_months: bool = False) -> str:
    """A random word salad with varied casing and punctuation; held-out splits always use a held-out word.

    With `bare_months`, sometimes a month name on its own ("antes de diciembre"), never next to a
    number, so it cannot form a date."""
    pool = carriers(f"words_{lang}", "train")
    held_out = carriers(f"words_{lang}", split) if split != "train" else ()
    words = [rng.choice(pool) for _ in range(rng.randint(2, 14))]
    if held_out:
        words[rng.randrange(len(words))] = rng.choice(held_out)
    for i in range(len(words)):
        r = rng.random()
        if r < PSEUDO_WORD_SHARE:
            words[i] = pseudo_word(rng)
        elif r < PSEUDO_WORD_SHARE + 0.04:
            words[i] = str(rng.randint(0, 99999))
        elif r < PSEUDO_WORD_SHARE + 0.07:
            words[i] = rng.choice(ODD_TOKENS)
        elif r < PSEUDO_WORD_SHARE + 0.09:
            words[i] = words[i].upper()
        elif r < PSEUDO_WORD_SHARE + 0.14:
            words[i] += ","
        elif r < PSEUDO_WORD_SHARE + 0.16:
            words[i] = f"«{words[i]}»" if lang == "es" else f'"{words[i]}"'
        elif r < PSEUDO_WORD_SHARE + 0.16 + NEAR_MISS_SHARE:
            words[i] = near_miss_word(rng, lang)
        elif r < PSEUDO_WORD_SHARE + 0.16 + NEAR_MISS_SHARE + CLDR_WORD_SHARE:
            words[i] = rng.choice(carriers(f"cldr_{lang}", "train"))
        if rng.random() < ATTACHED_PUNCTUATION_SHARE:
            for _ in range(1 if rng.random() < 0.8 else 2):  # sometimes two marks: "—¿", "?!"
                if rng.random() < 0.5:
                    words[i] = rng.choice(LEADING_MARKS) + words[i]
                else:
                    words[i] += rng.choice(TRAILING_MARKS)
    if bare_months and rng.random() < BARE_MONTH_SHARE:
        slots = [i for i in range(len(words)) if not any(c.isdigit() for w in words[max(0, i - 1) : i + 2] for c in w)]
        if slots:
            month = rng.choice(month_names(lang))
            words[rng.choice(slots)] = month.lower() if lang == "es" and rng.random() < 0.8 else month
    if rng.random() < 0.8:
        words[0] = words[0][:1].upper() + words[0][1:]
    text = " ".join(words)
    end = rng.choice((".", ".", ".", "?", "!", "…", "", ";"))
    if lang == "es" and end in ("?", "!"):
        text = ("¿" if end == "?" else "¡") + text
    return text + end
