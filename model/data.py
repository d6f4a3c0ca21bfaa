"""Generate Spanish/English text-normalization pairs on the fly, and read user pairs from TSV.

Owns the bundled task's data contract. Imports nothing from this repo (num2words + Babel only).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import hashlib
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from babel.dates import format_date
from num2words import num2words

from model.carriers import (
    NAMES,
    NOUNS_EN,
    NOUNS_F_ES,
    NOUNS_M_ES,
    ODD_TOKENS,
    WORDS_EN,
    WORDS_ES,
)
from model.words import (
    babel_locale,
    cldr_words,
    forbidden_words,
    month_names,
    near_miss_word,
    pseudo_word,
)

# The hand-written carrier sentences, one file per table: "{n}" is a cardinal slot, "{d}" a date slot,
# "{nm}"/"{nf}"/"{noun}" a noun slot (model/carriers.py's nouns). Slots never open a sentence.
SENTENCES_DIR = Path(__file__).parent / "sentences"
# One category per clause of the contract; generation samples them uniformly.
CATEGORIES = (
    "cardinal_es",  # "mil doscientos treinta y cuatro" -> "1234"
    "cardinal_en",  # "one thousand, two hundred and thirty-four" -> "1234"
    "date_written_es",  # Babel es_ES full/long/medium -> ISO
    "date_written_en",  # Babel en_US/en_GB full/long/medium -> ISO
    "date_spoken_es",  # "veintinueve de noviembre de dos mil veintiséis" -> ISO
    "date_spoken_en",  # "November twenty-ninth, twenty twenty-six" -> ISO
    "sentence_number_es",  # a cardinal rewritten in place inside a carrier sentence
    "sentence_number_en",
    "sentence_date_es",  # a written or spoken date rewritten in place inside a carrier sentence
    "sentence_date_en",
    "plain_es",  # no expression: target == source
    "plain_en",
    "article_es",  # "un", "una", "uno" as articles/pronouns: target == source
    "article_en",  # "one" as a pronoun: target == source
)
# Training draws the categories the model finds hard more often and the solved ones less (model v5 on
# the test split: the four bare-date categories 100%, sentences with an expression inside 91-95%; v7,
# with sentences with a number at 2 and bare dates at 0.5, still had sentence_number_es at 96.3%).
# Sentences are about three times as long as dates, so raising their share makes a step slower.
# Held-out splits sample uniformly, so the test set stays 300 examples of every category.
TRAIN_CATEGORY_WEIGHTS = {
    "date_written_es": 0.25,
    "date_written_en": 0.25,
    "date_spoken_es": 0.25,
    "date_spoken_en": 0.25,
    "sentence_number_es": 2.5,
    "sentence_number_en": 2.5,
    "sentence_date_es": 1.5,
    "sentence_date_en": 1.5,
}  # every other category: 1
SPLITS = ("train", "valid", "test")
# Percent buckets of the stable expression hash: [0, 90) train, [90, 95) valid, [95, 100) test.
SPLIT_BUCKETS = {"train": range(0, 90), "valid": range(90, 95), "test": range(95, 100)}
# Share of carrier templates and words held out for each of valid and test (by hash rank).
HELD_OUT_FRACTION = 0.1

MIN_NUMBER, MAX_NUMBER = 2, 999_999_999
# The words numbers are made of: 2-99 and the hundreds are single words in Spanish or English
# ("trece", "veintitrés", "quinientos"). A model cannot learn a word it never sees, so these are not
# held out as expressions: bare, they belong to train; inside a sentence they appear in every split
# (a held-out sentence is held out by its carrier template or word).
VOCABULARY_NUMBERS = frozenset([*range(2, 100), *range(100, 1000, 100)])
MIN_DATE, MAX_DATE = dt.date(1900, 1, 1), dt.date(2099, 12, 31)
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
# Share of sampled numbers made round ("forty million", "seiscientos mil"), whose zeros are easy to miscount.
ROUND_NUMBER_SHARE = 0.35
# Phrases spliced into a random carrier for the article categories: article or pronoun uses.
ARTICLE_PHRASES = {
    "es": ("un {nm}", "una {nf}", "uno de ellos", "una de ellas", "cada uno", "con uno", "un {nm} y una {nf}"),
    "en": ("one of them", "this one", "that one", "the other one", "no one", "one by one", "one {noun}"),
}
BABEL_FORMATS = ("full", "long", "medium")  # "short" is numeric: no month name, outside the contract


class DataError(ValueError):
    """A pairs file is malformed; the message names the file and the 1-based line number."""


@dataclass(frozen=True)
class Example:
    source: str
    target: str
    category: str


# ---------------------------------------------------------------------------------------------
# Stable split assignment


def _stable_hash(key: str) -> int:
    """A process-independent 64-bit hash (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def number_split(n: int) -> str:
    """The split that owns the bare cardinal n (the vocabulary numbers belong to train)."""
    return "train" if n in VOCABULARY_NUMBERS else expression_split(f"num:{n}")


def expression_split(key: str) -> str:
    """The split that owns a normalized expression key such as "num:1234" or "date:2026-11-29"."""
    bucket = _stable_hash(key) % 100
    return next(split for split, buckets in SPLIT_BUCKETS.items() if bucket in buckets)


def _partition(items: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Split carrier items by hash rank: the lowest-ranked HELD_OUT_FRACTION go to test, the next to valid."""
    ranked = sorted(dict.fromkeys(items), key=lambda s: (_stable_hash("carrier:" + s), s))
    k = max(1, round(len(ranked) * HELD_OUT_FRACTION))
    return {"test": tuple(ranked[:k]), "valid": tuple(ranked[k : 2 * k]), "train": tuple(ranked[2 * k :])}


@functools.cache
def _sentences(name: str) -> tuple[str, ...]:
    """The hand-written carrier sentences of `model/sentences/{name}.txt`, one per non-empty line."""
    text = (SENTENCES_DIR / f"{name}.txt").read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line.strip())


@functools.cache
def _plain_words(lang: str) -> tuple[str, ...]:
    forbidden = forbidden_words()
    words = WORDS_ES if lang == "es" else WORDS_EN
    return tuple(w for w in dict.fromkeys(words + NAMES) if w.lower() not in forbidden)


@functools.cache
def _carriers(name: str, split: str) -> tuple[str, ...]:
    tables: dict[str, Sequence[str]] = {
        "number_es": _sentences("number_es"),
        "number_en": _sentences("number_en"),
        "date_es": _sentences("date_es"),
        "date_en": _sentences("date_en"),
        "plain_es": _sentences("plain_es"),
        "plain_en": _sentences("plain_en"),
        "article_es": _sentences("article_es"),
        "article_en": _sentences("article_en"),
        "nouns_m_es": NOUNS_M_ES,
        "nouns_f_es": NOUNS_F_ES,
        "nouns_en": NOUNS_EN,
        "words_es": _plain_words("es"),
        "words_en": _plain_words("en"),
        "cldr_es": cldr_words("es"),
        "cldr_en": cldr_words("en"),
    }
    return _partition(tables[name])[split]


# ---------------------------------------------------------------------------------------------
# Expressions


def _sample_number(rng: random.Random, split: str, *, in_sentence: bool = False) -> int:
    """Log-uniform over digit counts, with some round numbers ("cien mil", "un millón").

    Inside a sentence the vocabulary numbers may appear in any split (see VOCABULARY_NUMBERS)."""
    while True:
        digits = rng.randint(1, 9)
        n = rng.randint(max(MIN_NUMBER, 10 ** (digits - 1)), 10**digits - 1)
        if rng.random() < ROUND_NUMBER_SHARE and digits > 2:
            scale = 10 ** rng.randint(2, digits - 1)
            n = max(scale, n - n % scale)
        if number_split(n) == split or (in_sentence and n in VOCABULARY_NUMBERS):
            return n


def _sample_date(rng: random.Random, split: str) -> dt.date:
    span = (MAX_DATE - MIN_DATE).days
    while True:
        d = MIN_DATE + dt.timedelta(days=rng.randint(0, span))
        if expression_split(f"date:{d.isoformat()}") == split:
            return d


def cardinal_words(n: int, lang: str) -> str:
    """The spoken form of a cardinal, exactly as num2words writes it (never capitalized)."""
    return num2words(n, lang=lang)


def written_date(d: dt.date, *, locale: str, fmt: str) -> str:
    return format_date(d, format=fmt, locale=babel_locale(locale))


def spoken_date_es(d: dt.date, rng: random.Random) -> str:
    day = rng.choice(("uno", "primero")) if d.day == 1 else num2words(d.day, lang="es")
    month = str(babel_locale("es_ES").months["format"]["wide"][d.month])
    return f"{day} de {month} de {num2words(d.year, lang='es')}"


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


def spoken_date_en(d: dt.date, rng: random.Random) -> str:
    month = str(babel_locale("en_US").months["format"]["wide"][d.month])
    day = num2words(d.day, lang="en", to="ordinal")
    year = spoken_year_en(d.year, rng)
    if rng.random() < 0.5:
        return f"{month} {day}, {year}"
    return f"the {day} of {month}, {year}"


def _date_source(d: dt.date, lang: str, rng: random.Random, *, spoken: bool) -> str:
    if spoken:
        return spoken_date_es(d, rng) if lang == "es" else spoken_date_en(d, rng)
    locale = "es_ES" if lang == "es" else rng.choice(("en_US", "en_GB"))
    return written_date(d, locale=locale, fmt=rng.choice(BABEL_FORMATS))


# ---------------------------------------------------------------------------------------------
# Categories


def _cardinal(rng: random.Random, split: str, lang: str, *, in_sentence: bool = False) -> tuple[str, str]:
    n = _sample_number(rng, split, in_sentence=in_sentence)
    return cardinal_words(n, lang), str(n)


def _date(rng: random.Random, split: str, lang: str, spoken: bool) -> tuple[str, str]:
    d = _sample_date(rng, split)
    return _date_source(d, lang, rng, spoken=spoken), d.isoformat()


def _carrier_template(rng: random.Random, split: str, name: str, insert: str) -> str:
    """A hand-written carrier sentence half of the time, otherwise random words around the slot, so
    the model learns to copy any text around an expression rather than memorize the templates."""
    if rng.random() < TEMPLATE_CARRIER_SHARE:
        return rng.choice(_carriers(name, split))
    words = _random_sentence(rng, split, name.rsplit("_", 1)[1]).replace("{", "(").replace("}", ")").split(" ")
    words.insert(rng.randint(1, len(words)), insert)
    return " ".join(words)


def _sentence_number(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    template = _carrier_template(rng, split, f"number_{lang}", "{n}")
    words, digits = _cardinal(rng, split, lang, in_sentence=True)
    return template.format(n=words), template.format(n=digits)


def _sentence_date(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    template = _carrier_template(rng, split, f"date_{lang}", "{d}")
    d = _sample_date(rng, split)
    source = _date_source(d, lang, rng, spoken=rng.random() < 0.5)
    return template.format(d=source), template.format(d=d.isoformat())


def _random_sentence(rng: random.Random, split: str, lang: str, *, bare_months: bool = False) -> str:
    """A random word salad with varied casing and punctuation; held-out splits always use a held-out word.

    With `bare_months`, sometimes a month name on its own ("antes de diciembre"), never next to a
    number, so it cannot form a date."""
    pool = _carriers(f"words_{lang}", "train")
    held_out = _carriers(f"words_{lang}", split) if split != "train" else ()
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
            words[i] = rng.choice(_carriers(f"cldr_{lang}", "train"))
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


def _plain(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    if rng.random() < 0.3:
        text = rng.choice(_carriers(f"plain_{lang}", split))
    else:
        text = _random_sentence(rng, split, lang, bare_months=True)
    return text, text


def _article(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    template = _carrier_template(rng, split, f"article_{lang}", rng.choice(ARTICLE_PHRASES[lang]))
    if lang == "es":
        text = template.format(
            nm=rng.choice(_carriers("nouns_m_es", "train")), nf=rng.choice(_carriers("nouns_f_es", "train"))
        )
    else:
        text = template.format(noun=rng.choice(_carriers("nouns_en", "train")))
    return text, text


_MAKERS: dict[str, Callable[[random.Random, str], tuple[str, str]]] = {
    "cardinal_es": lambda rng, split: _cardinal(rng, split, "es"),
    "cardinal_en": lambda rng, split: _cardinal(rng, split, "en"),
    "date_written_es": lambda rng, split: _date(rng, split, "es", False),
    "date_written_en": lambda rng, split: _date(rng, split, "en", False),
    "date_spoken_es": lambda rng, split: _date(rng, split, "es", True),
    "date_spoken_en": lambda rng, split: _date(rng, split, "en", True),
    "sentence_number_es": lambda rng, split: _sentence_number(rng, split, "es"),
    "sentence_number_en": lambda rng, split: _sentence_number(rng, split, "en"),
    "sentence_date_es": lambda rng, split: _sentence_date(rng, split, "es"),
    "sentence_date_en": lambda rng, split: _sentence_date(rng, split, "en"),
    "plain_es": lambda rng, split: _plain(rng, split, "es"),
    "plain_en": lambda rng, split: _plain(rng, split, "en"),
    "article_es": lambda rng, split: _article(rng, split, "es"),
    "article_en": lambda rng, split: _article(rng, split, "en"),
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


# ---------------------------------------------------------------------------------------------
# User-supplied pairs


def read_pairs_tsv(path: str | Path) -> list[Example]:
    """Read `source<TAB>target[<TAB>category]` lines (category defaults to "tsv").

    Raises:
        DataError: on a line without a tab, with more than three columns, with an empty source,
            or that is not UTF-8. The message names the file and the 1-based line number.
    """
    path = Path(path)
    raw_lines = path.read_bytes().split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # a final newline ends the last line; it is not an empty line
    examples = []
    for lineno, raw in enumerate(raw_lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}:{lineno}: not valid UTF-8 ({exc.reason})") from exc
        line = line.removesuffix("\r")
        columns = line.split("\t")
        if len(columns) < 2:
            raise DataError(f"{path}:{lineno}: expected source<TAB>target, found no tab")
        if len(columns) > 3:
            raise DataError(f"{path}:{lineno}: expected at most 3 tab-separated columns, found {len(columns)}")
        if not columns[0]:
            raise DataError(f"{path}:{lineno}: empty source")
        category = columns[2] if len(columns) == 3 and columns[2] else "tsv"
        examples.append(Example(source=columns[0], target=columns[1], category=category))
    return examples


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
