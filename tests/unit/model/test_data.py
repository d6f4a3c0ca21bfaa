"""The generator emits every category, keeps held-out splits disjoint; the TSV reader fails loudly."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from babel.dates import format_date
from num2words import num2words

from model.data import (
    CATEGORIES,
    VOCABULARY_NUMBERS,
    DataError,
    Example,
    _carriers,
    expression_split,
    generate_examples,
    number_split,
    read_pairs_tsv,
)
from model.words import forbidden_words, month_names

ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
N = 4000


@pytest.fixture(scope="module")
def train() -> list[Example]:
    return generate_examples(N, seed=0, split="train")


@pytest.fixture(scope="module")
def test_split() -> list[Example]:
    return generate_examples(N, seed=0, split="test")


def by_category(examples: list[Example]) -> dict[str, list[Example]]:
    groups: dict[str, list[Example]] = defaultdict(list)
    for ex in examples:
        groups[ex.category].append(ex)
    return groups


def iso_in(ex: Example) -> str:
    match = ISO.search(ex.target)
    assert match, ex
    return match.group()


@pytest.mark.parametrize("split", ["train", "valid", "test"])
def test_every_category_is_emitted(split: str) -> None:
    examples = generate_examples(N, seed=1, split=split)
    assert set(by_category(examples)) == set(CATEGORIES)


def test_cardinals_become_their_digits(train: list[Example]) -> None:
    groups = by_category(train)
    for category, lang in (("cardinal_es", "es"), ("cardinal_en", "en")):
        for ex in groups[category]:
            n = int(ex.target)
            assert ex.target == str(n) and 2 <= n <= 999_999_999
            assert ex.source == num2words(n, lang=lang)
    sizes = {len(ex.target) for ex in groups["cardinal_es"] + groups["cardinal_en"]}
    assert sizes == set(range(1, 10)), "small and large numbers both appear"


def test_dates_become_iso_and_match_babel_or_spoken_form(train: list[Example]) -> None:
    groups = by_category(train)
    seen_formats = set()
    for ex in groups["date_written_es"] + groups["date_written_en"]:
        assert re.fullmatch(ISO, ex.target), ex
        d = dt.date.fromisoformat(ex.target)
        assert dt.date(1900, 1, 1) <= d <= dt.date(2099, 12, 31)
        locales = ("es_ES",) if ex.category.endswith("_es") else ("en_US", "en_GB")
        forms = {(loc, f): format_date(d, format=f, locale=loc) for loc in locales for f in ("full", "long", "medium")}
        assert ex.source in forms.values(), ex
        seen_formats.update(key for key, value in forms.items() if value == ex.source)
    assert {loc for loc, _ in seen_formats} == {"es_ES", "en_US", "en_GB"}
    assert {f for _, f in seen_formats} == {"full", "long", "medium"}
    for ex in groups["date_spoken_es"]:
        d = dt.date.fromisoformat(ex.target)
        assert ex.source.endswith(f" de {num2words(d.year, lang='es')}"), ex
        assert not re.search(r"\d", ex.source)
    for ex in groups["date_spoken_en"]:
        d = dt.date.fromisoformat(ex.target)
        assert num2words(d.day, lang="en", to="ordinal") in ex.source, ex
        assert not re.search(r"\d", ex.source)
    assert any(ex.source.startswith("the ") for ex in groups["date_spoken_en"])
    assert any("twenty twenty" in ex.source for ex in groups["date_spoken_en"])
    assert any(
        ex.source.startswith("primero de")
        for ex in generate_examples(20000, seed=2, split="train")
        if ex.category == "date_spoken_es"
    )


def test_sentences_rewrite_in_place(train: list[Example]) -> None:
    groups = by_category(train)
    for ex in groups["sentence_date_es"] + groups["sentence_date_en"]:
        prefix, suffix = ex.target.split(iso_in(ex))
        assert ex.source.startswith(prefix) and ex.source.endswith(suffix) and ex.source != ex.target
    for ex in groups["sentence_number_es"] + groups["sentence_number_en"]:
        lang = ex.category[-2:]
        # Random carriers may hold digits of their own: one digit run, written out, gives the source.
        rewritten = (
            ex.target[: m.start()] + num2words(int(m.group()), lang=lang) + ex.target[m.end() :]
            for m in re.finditer(r"\d+", ex.target)
        )
        assert ex.source in rewritten, ex


def test_plain_and_article_text_is_unchanged(train: list[Example]) -> None:
    groups = by_category(train)
    for category in ("plain_es", "plain_en", "article_es", "article_en"):
        assert groups[category]
        assert all(ex.source == ex.target for ex in groups[category])
    assert all(re.search(r"\b([Uu]n|[Uu]na|[Uu]no)\b", ex.source) for ex in groups["article_es"])
    assert all(re.search(r"one", ex.source, re.IGNORECASE) for ex in groups["article_en"])


def test_plain_word_lists_hold_no_number_or_month_words() -> None:
    forbidden = forbidden_words()
    assert {"uno", "dos", "mil", "thousand", "november", "nov", "first"} <= forbidden
    for lang in ("es", "en"):
        for split in ("train", "valid", "test"):
            assert not {w.lower() for w in _carriers(f"words_{lang}", split)} & forbidden


@pytest.mark.parametrize("lang", ["es", "en"])
def test_carrier_sentences_hold_nothing_to_rewrite_but_their_slot(lang: str) -> None:
    """A number word or date outside the slot would be copied in some examples and rewritten in
    others; a month name next to digits is a date. Articles may hold un/una/uno/one, plain text a
    bare month."""
    forbidden = forbidden_words()
    months = {m.lower() for m in month_names("es") + month_names("en")}
    articles = {"es": {"un", "una", "uno"}, "en": {"one"}}[lang]
    for kind, slot in (("number", "{n}"), ("date", "{d}"), ("plain", None), ("article", None)):
        lines = [line for split in ("train", "valid", "test") for line in _carriers(f"{kind}_{lang}", split)]
        assert len(lines) >= 100 and len(set(lines)) == len(lines), kind
        for line in lines:
            body = line
            for placeholder in ("{n}", "{d}", "{nm}", "{nf}", "{noun}"):
                body = body.replace(placeholder, " ")
            found = re.findall(r"[^\W\d_]+", body)
            words = {w.lower() for w in found if not (lang == "en" and w in ("march", "may"))}  # verbs, lowercase
            allowed = articles if kind == "article" else months if kind == "plain" else set()
            assert not (words & forbidden) - allowed, line
            if slot is not None:
                assert line.count(slot) == 1 and not line.startswith(slot), line
                assert not re.search(r"\d", body), line
            if kind == "plain":
                assert not (words & months and re.search(r"\d", body)), line


def test_training_draws_the_hard_categories_more_often_and_held_out_splits_uniformly(
    train: list[Example], test_split: list[Example]
) -> None:
    counts = Counter(ex.category for ex in train)
    assert counts["sentence_number_es"] > 6 * counts["date_written_es"]  # weights 2.5 and 0.25
    assert counts["sentence_number_en"] > counts["sentence_date_en"] > counts["plain_en"] > counts["date_spoken_en"]
    held_out = Counter(ex.category for ex in test_split)
    assert set(held_out) == set(CATEGORIES) and max(held_out.values()) < 1.3 * min(held_out.values())


def test_held_out_splits_are_disjoint_from_train(train: list[Example], test_split: list[Example]) -> None:
    valid = generate_examples(N, seed=0, split="valid")
    train_sources = {ex.source for ex in train}
    assert not train_sources & {ex.source for ex in test_split}
    assert not train_sources & {ex.source for ex in valid}
    for held_out, name in ((test_split, "test"), (valid, "valid")):
        for ex in held_out:
            if ex.category.startswith("cardinal"):
                assert expression_split(f"num:{ex.target}") == name
            elif "date" in ex.category:
                assert expression_split(f"date:{iso_in(ex)}") == name
    for table in ("number_es", "date_en", "plain_es", "article_en", "words_es"):
        parts = [set(_carriers(table, split)) for split in ("train", "valid", "test")]
        assert all(parts) and not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])


def test_number_words_are_never_held_out(train: list[Example], test_split: list[Example]) -> None:
    """Bare, the vocabulary numbers ("trece", "quinientos") are train's; inside a held-out sentence they
    appear too, since a word never seen in training cannot be learned."""
    assert all(number_split(n) == "train" for n in VOCABULARY_NUMBERS)
    assert [n for n in range(2, 100) if expression_split(f"num:{n}") == "test"]  # what the rule overrides
    bare_in_train = {int(ex.target) for ex in train if ex.category.startswith("cardinal")}
    assert len(bare_in_train & VOCABULARY_NUMBERS) > 50
    sentence_numbers = {
        int(n)
        for ex in test_split
        if ex.category.startswith("sentence_number")
        for n in set(re.findall(r"\d+", ex.target)) - set(re.findall(r"\d+", ex.source))  # the rewritten one
    }
    assert sentence_numbers & VOCABULARY_NUMBERS
    assert not {int(ex.target) for ex in test_split if ex.category.startswith("cardinal")} & VOCABULARY_NUMBERS


def test_generation_is_deterministic_by_seed() -> None:
    assert generate_examples(300, seed=7, split="train") == generate_examples(300, seed=7, split="train")
    assert generate_examples(300, seed=7, split="train") != generate_examples(300, seed=8, split="train")


def test_unknown_split_is_rejected() -> None:
    with pytest.raises(ValueError, match="split"):
        generate_examples(1, seed=0, split="dev")


def test_read_pairs_tsv(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text("dos\t2\nel 3 de mayo de 2001\t2001-05-03\tdate\ncopia\tcopia\n", encoding="utf-8")
    assert read_pairs_tsv(path) == [
        Example("dos", "2", "tsv"),
        Example("el 3 de mayo de 2001", "2001-05-03", "date"),
        Example("copia", "copia", "tsv"),
    ]


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        (b"a\tb\nno tab here\n", 2, "no tab"),
        (b"a\tb\nc\td\te\tf\n", 2, "at most 3"),
        (b"\tb\n", 1, "empty source"),
        (b"a\tb\nc\td\n\xff\xfe\tx\n", 3, "UTF-8"),
        (b"a\tb\n\nc\td\n", 2, "no tab"),
    ],
)
def test_read_pairs_tsv_errors_name_file_and_line(tmp_path: Path, content: bytes, line: int, reason: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_bytes(content)
    with pytest.raises(DataError, match=rf"bad\.tsv:{line}: .*{reason}"):
        read_pairs_tsv(path)
