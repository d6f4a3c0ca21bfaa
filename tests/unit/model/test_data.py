"""The generator emits every category, keeps held-out splits disjoint; the TSV reader fails loudly."""

from __future__ import annotations

import calendar
import datetime as dt
import difflib
import hashlib
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from babel.dates import format_date
from num2words import num2words

from model.carrier_text import carrier_template
from model.carrier_text import carriers as _carriers
from model.copytext import amount_in_digits, copy_piece, fits_one_piece, round_amount_share
from model.data import (
    CATEGORIES,
    COPY_ONLY_CATEGORIES,
    VOCABULARY_NUMBERS,
    DataError,
    Example,
    expression_split,
    generate_examples,
    iter_examples,
    number_split,
    read_pairs_tsv,
)
from model.evaluate import test_examples as held_out_examples
from model.expressions import day_of_year_split, sample_day_of_year, sample_impossible_day, sample_number
from model.pairs import read_pairs_jsonl, write_pairs_jsonl
from model.sentences_copied import _plain
from model.sentences_rewritten import multiple_expressions
from model.short_text import LIST_MARKERS, counted_noun
from model.tokenizer import Tokenizer
from model.words import cardinal_words, forbidden_words, month_names, month_numbers, number_values, pseudo_word

ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
N = 6000
EN_VALUES = {num2words(n, lang="en"): n for n in range(0, 20)} | {
    num2words(n, lang="en"): n for n in range(20, 100, 10)
}
ES_VALUES = (
    {
        w: n
        for n, w in enumerate(
            "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce".split()
        )
    }
    | {"quince": 15, "dieciséis": 16, "diecisiete": 17, "dieciocho": 18, "diecinueve": 19, "veinte": 20}
    | {"un": 1, "una": 1, "veintiún": 21, "veintiuna": 21, "veintiuno": 21, "veintidós": 22, "veintitrés": 23}
    | {"veinticuatro": 24, "veinticinco": 25, "veintiséis": 26, "veintisiete": 27, "veintiocho": 28}
    | {"veintinueve": 29, "treinta": 30, "cuarenta": 40, "cincuenta": 50, "sesenta": 60, "setenta": 70}
    | {"ochenta": 80, "noventa": 90, "cien": 100, "ciento": 100, "quinientos": 500, "quinientas": 500}
    | {"setecientos": 700, "setecientas": 700, "novecientos": 900, "novecientas": 900}
    | {
        f"{p}cient{e}s": 100 * v
        for p, v in (("dos", 2), ("tres", 3), ("cuatro", 4), ("seis", 6), ("ocho", 8))
        for e in "oa"
    }
)


def parse_english(text: str) -> int:
    """An oracle independent of the generator: the value of an English cardinal in any written form."""
    total = current = 0
    for word in text.replace("-", " ").replace(",", " ").split():
        if word == "and":
            continue
        if word == "hundred":
            current *= 100
        elif word in ("thousand", "million", "billion"):
            total += current * {"thousand": 10**3, "million": 10**6, "billion": 10**9}[word]
            current = 0
        else:
            current += EN_VALUES[word]
    return total + current


def parse_spanish(text: str) -> int:
    millions = below_million = current = 0
    for word in text.split():
        if word == "y":
            continue
        if word == "mil":
            below_million += (current or 1) * 1000
            current = 0
        elif word in ("millón", "millones"):
            millions += (below_million + current) * 10**6
            below_million = current = 0
        else:
            current += ES_VALUES[word]
    return millions + below_million + current


@pytest.fixture(scope="module")
def train() -> list[Example]:
    return generate_examples(N, seed=0, split="train")


@pytest.fixture(scope="module")
def test_split() -> list[Example]:
    return generate_examples(N, seed=0, split="test")


# sha256 of test_examples(20, 12345) as JSON lines: the generator of test set v8.
TEST_SET_V8_DIGEST = "971dae4b86228c5ae4b3f91a318e190049bde1d94563c45058dbda20a8df3c0e"


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
    for category, parse in (("cardinal_es", parse_spanish), ("cardinal_en", parse_english)):
        for ex in groups[category]:
            n = int(ex.target)
            assert ex.target == str(n) and 2 <= n <= 999_999_999_999
            assert parse(ex.source) == n, ex
    sizes = {len(ex.target) for ex in groups["cardinal_es"] + groups["cardinal_en"]}
    assert sizes == set(range(1, 13)), "small and large numbers both appear"
    english = " ".join(ex.source for ex in groups["cardinal_en"])
    assert " and " in english and re.search(r"\w+ hundred(?! and)", english) and "," in english


def test_spanish_numbers_agree_with_their_noun(train: list[Example]) -> None:
    for ex in by_category(train)["number_noun_es"]:
        number = next(
            m
            for m in re.finditer(r"\d+", ex.target)
            if ex.source.startswith(ex.target[: m.start()]) and ex.source.endswith(ex.target[m.end() :])
        )
        prefix, suffix = ex.target[: number.start()], ex.target[number.end() :]
        words = ex.source[len(prefix) : len(ex.source) - len(suffix)]
        assert ex.source.startswith(prefix) and ex.source.endswith(suffix), ex
        assert parse_spanish(words.removesuffix(" de")) == int(number.group()), ex
        noun = suffix.split()[0] if not suffix.startswith(" de ") else suffix.split()[1]
        if noun[:-1] in _carriers("nouns_f_es", "train"):
            assert not re.search(r"\b(uno|un|veintiún|\w+ientos)\b", words.split("mil")[-1]), ex
        else:
            assert not re.search(r"\b(una|uno|veintiuna|veintiuno|\w+ientas)\b", words), ex


def _bare_date(ex: Example) -> tuple[str, dt.date]:
    """The date's source words and its date; a leap day may stand in a carrier sentence (the test split's
    always do), whose words around it the target repeats unchanged."""
    iso = ISO.search(ex.target)
    assert iso, ex
    prefix, suffix = ex.target[: iso.start()], ex.target[iso.end() :]
    if prefix or suffix:
        assert iso.group().endswith("-02-29") and ex.source.startswith(prefix) and ex.source.endswith(suffix), ex
    return ex.source[len(prefix) : len(ex.source) - len(suffix)], dt.date.fromisoformat(iso.group())


def test_dates_become_iso_and_match_babel_or_spoken_form(train: list[Example]) -> None:
    groups = by_category(train)
    seen_formats = set()
    for ex in groups["date_written_es"] + groups["date_written_en"]:
        source, d = _bare_date(ex)
        assert dt.date(1900, 1, 1) <= d <= dt.date(2099, 12, 31)
        locales = ("es_ES",) if ex.category.endswith("_es") else ("en_US", "en_GB")
        forms = {(loc, f): format_date(d, format=f, locale=loc) for loc in locales for f in ("full", "long", "medium")}
        assert source in forms.values(), ex
        seen_formats.update(key for key, value in forms.items() if value == source)
    assert {loc for loc, _ in seen_formats} == {"es_ES", "en_US", "en_GB"}
    assert {f for _, f in seen_formats} == {"full", "long", "medium"}
    for ex in groups["date_spoken_es"]:
        source, d = _bare_date(ex)
        assert parse_spanish(source.rsplit(" de ", 1)[1]) == d.year, ex
        assert not re.search(r"\d", source)
    for ex in groups["date_spoken_en"]:
        source, d = _bare_date(ex)
        assert num2words(d.day, lang="en", to="ordinal") in source, ex
        assert not re.search(r"\d", source)
    assert any(ex.source.startswith("the ") for ex in groups["date_spoken_en"])
    assert any(re.search(r", twenty [a-z]", ex.source) for ex in groups["date_spoken_en"])  # 20xx read in pairs
    spoken_es = iter_examples(seed=2, split="train", categories=("date_spoken_es",))
    assert any(next(spoken_es).source.startswith("primero de") for _ in range(2000))


def test_sentences_rewrite_in_place(train: list[Example]) -> None:
    groups = by_category(train)
    for ex in groups["sentence_date_es"] + groups["sentence_date_en"]:
        prefix, suffix = ex.target.split(iso_in(ex))
        assert ex.source.startswith(prefix) and ex.source.endswith(suffix) and ex.source != ex.target
    for ex in groups["sentence_number_es"] + groups["sentence_number_en"]:
        parse = parse_spanish if ex.category.endswith("_es") else parse_english
        # Random carriers may hold digits of their own: one digit run, written out, gives the source.
        assert any(
            ex.source.startswith(ex.target[: m.start()])
            and ex.source.endswith(ex.target[m.end() :])
            and parse(ex.source[m.start() : len(ex.source) - len(ex.target) + m.end()]) == int(m.group())
            for m in re.finditer(r"\d+", ex.target)
            if m.group() not in ex.source.split()
        ), ex


def test_dates_without_a_year_keep_the_month_and_impossible_dates_are_no_dates(train: list[Example]) -> None:
    groups = by_category(train)
    months = {m.lower() for m in month_names("es") + month_names("en")}
    for ex in groups["date_yearless_es"] + groups["date_yearless_en"]:
        day = re.search(r"\b(\d{1,2}) (de \w+)|(\w+) (\d{1,2})\b|the (\d{1,2}) of (\w+)", ex.target)
        assert day and not ISO.search(ex.target), ex
        assert any(w.lower() in months for w in re.findall(r"\w+", ex.target)), ex
    impossible = groups["date_impossible_es"] + groups["date_impossible_en"]
    short_months = {"febrero": 2, "abril": 4, "junio": 6, "septiembre": 9, "noviembre": 11}
    for ex in groups["date_impossible_es"]:
        found = re.search(r"(\d{1,2}) de (febrero|abril|junio|septiembre|noviembre)(?: de (\d{4}))?", ex.target)
        assert found and not ISO.search(ex.target), ex
        # Without its year, 29 February of a common year reads as a real day: the output is the same.
        last = calendar.monthrange(int(found.group(3) or 2001), short_months[found.group(2)])[1]
        assert int(found.group(1)) > last, ex
    for ex in groups["date_impossible_en"]:
        month = "(February|April|June|September|November)"
        found = re.search(
            rf"{month} (twenty-ninth|thirtieth|thirty-first)|the (twenty-ninth|thirtieth|thirty-first) of {month}",
            ex.target,
        )
        assert found and not ISO.search(ex.target), ex
        # Without a year "February twenty-ninth" is a date (a yearless one: "February 29"), never left in words.
        if "twenty-ninth" in ex.target and "February" in ex.target:
            assert re.search(r", 20\d\d", ex.target), ex
    assert any(re.search(r" de (19|20)\d\d", ex.target) for ex in impossible)
    assert any(re.search(r", 20\d\d", ex.target) for ex in impossible)


def test_copy_only_text_is_unchanged_and_holds_no_number_word(train: list[Example]) -> None:
    groups = by_category(train)
    forbidden = forbidden_words()
    for category in (*COPY_ONLY_CATEGORIES, "ordinal_es", "ordinal_en"):
        assert groups[category] and all(ex.source == ex.target for ex in groups[category]), category
    for category in COPY_ONLY_CATEGORIES:
        for ex in groups[category]:
            words = {w.lower() for w in re.findall(r"[^\W\d_]+", ex.source)} - months_lower()
            assert not words & forbidden - {"uno", "one"}, ex  # articles and pronouns stay words
    assert all(re.search(r"[^\x00-\u024f]", ex.source) for ex in groups["copy_script"])
    # An emoji, a symbol, or an odd character (the byte-fallback drill: any printable one, "Ơ" included)
    emoji_or_symbol = re.compile(r"[^\x00-\xff]|[$%]|[^\w\x00-\x7f]")
    assert all(emoji_or_symbol.search(ex.source) for ex in groups["copy_emoji"])
    assert all(re.search(r"\d", ex.source) for ex in groups["copy_digits"])
    assert all(re.search(r"[@.]\w", ex.source) for ex in groups["copy_url"])
    markup = re.compile(r"[<>*`#|_\[=(;&$~]|(^|\s)(\d+\.|-) ")  # tags, code, Markdown (~~, lists)
    assert all(markup.search(ex.source) for ex in groups["copy_markup"])
    paragraphs = groups["paragraph_plain"] + groups["paragraph_mixed"]
    assert any("\n" in ex.source for ex in paragraphs) and any("\n\n" in ex.source for ex in paragraphs)
    mixed = groups["paragraph_mixed"]
    assert sum(ex.source != ex.target for ex in mixed) > len(mixed) / 2
    assert all(ex.source.count("\n") == ex.target.count("\n") for ex in mixed)


def months_lower() -> set[str]:
    return {m.lower() for m in month_names("es") + month_names("en")}


def test_plain_and_article_text_is_unchanged(train: list[Example]) -> None:
    groups = by_category(train)
    for category in ("plain_es", "plain_en", "article_es", "article_en"):
        assert groups[category]
        assert all(ex.source == ex.target for ex in groups[category])
    assert all(re.search(r"\b([Uu]n|[Uu]na|[Uu]no)\b", ex.source) for ex in groups["article_es"])
    assert all(re.search(r"one", ex.source, re.IGNORECASE) for ex in groups["article_en"])


def test_training_varies_the_iso_date_a_plain_sentence_holds() -> None:
    """A fixed "2026-11-29" in a plain sentence made 2026 training's commonest ISO year; training draws it."""
    rng = random.Random(3)
    meetings = [s for s, _ in (_plain(rng, "train", "en") for _ in range(12000)) if s.startswith("The meeting is on ")]
    dates = {re.search(r"\d{4}-\d{2}-\d{2}", s).group() for s in meetings}
    assert len(meetings) > 5 and len(dates) == len(meetings)
    assert all(dt.date.fromisoformat(d) for d in dates)


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
    assert counts["sentence_number_es"] > 5 * counts["date_written_es"]  # weights 2 and 0.25
    assert counts["paragraph_mixed"] > counts["sentence_number_en"] > counts["sentence_date_en"] > counts["plain_en"]
    assert counts["plain_en"] > counts["date_spoken_en"]
    held_out = Counter(ex.category for ex in test_split)
    assert set(held_out) == set(CATEGORIES) and max(held_out.values()) < 1.7 * min(
        held_out.values()
    )  # 32 categories of ~190 (seed 0 draws 133 to 215)


def test_held_out_splits_are_disjoint_from_train(train: list[Example], test_split: list[Example]) -> None:
    valid = generate_examples(N, seed=0, split="valid")
    train_sources = {ex.source for ex in train}
    assert not train_sources & {ex.source for ex in test_split}
    assert not train_sources & {ex.source for ex in valid}
    for held_out, name in ((test_split, "test"), (valid, "valid")):
        for ex in held_out:
            if ex.category.startswith("cardinal"):
                assert expression_split(f"num:{ex.target}") == name
            elif ex.category.startswith("date_") and ISO.search(ex.target) and "-02-29" not in ex.target:
                # (a leap day is every split's: expressions.sample_leap_day)
                assert expression_split(f"date:{iso_in(ex)}") == name
    for table in ("number_es", "date_en", "plain_es", "article_en", "words_es"):
        parts = [set(_carriers(table, split)) for split in ("train", "valid", "test")]
        assert all(parts) and not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])


def test_number_words_are_never_held_out(train: list[Example], test_split: list[Example]) -> None:
    """Bare, the vocabulary numbers ("trece", "quinientos") are train's; inside a held-out sentence they
    appear too, since a word never seen in training cannot be learned."""
    assert all(number_split(n) == "train" for n in VOCABULARY_NUMBERS)
    assert [n for n in range(2, 100) if expression_split(f"num:{n}") == "test"]  # what the rule overrides
    bare_in_train = {
        int(ex.target) for ex in generate_examples(3 * N, seed=3, split="train") if ex.category.startswith("cardinal")
    }
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


def test_jsonl_pairs_round_trip_any_text(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    examples = [Example("dos\nlíneas\ty tab", "2\nlíneas\ty tab", "paragraph"), Example("😀 \r\n", "😀 \r\n", "emoji")]
    write_pairs_jsonl(path, examples)
    assert read_pairs_jsonl(path) == examples
    path.write_text('{"source": "a", "target": "b"}\n[1]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"pairs\.jsonl:2: expected an object"):
        read_pairs_jsonl(path)


def test_short_inputs_stand_alone_and_held_out_ones_are_all_rewrites(
    train: list[Example], test_split: list[Example]
) -> None:
    """ "doscientas personas", "el tres de mayo", "May third" alone; "un", "one", "primero" stay words alone."""
    for examples in (train, test_split):
        short = [ex for ex in examples if ex.category.startswith("short_")]
        assert len(short) > 100
        for ex in short:
            assert "\n" not in ex.source and len(ex.source.split()) <= 24, ex  # a 10-digit number is 17 words
            marker = next((m for m in LIST_MARKERS if ex.source.startswith(m)), "")  # "1. Dos tazas de arroz"
            source, target = ex.source.removeprefix(marker), ex.target.removeprefix(marker)
            if source == target:
                assert not re.search(r"\d", source), ex
            else:
                assert re.search(r"\d", target) and not re.search(r"\d", source), ex
    stays = {ex.source.lower() for ex in train if ex.category.startswith("short_") and ex.source == ex.target}
    assert {"un", "one"} <= stays
    assert all(ex.source != ex.target for ex in test_split if ex.category.startswith("short_"))
    assert any(re.fullmatch(r"(el )?\d+ de \w+", ex.target) for ex in train if ex.category == "short_es")
    # List items, a capitalized number among them: "- Seis huevos" -> "- 6 huevos".
    items = [ex for ex in test_split if ex.category.startswith("short_") and ex.source.startswith(LIST_MARKERS)]
    assert items and any(re.match(r"\W*\d*[.)]? ?[A-Z]", ex.source) for ex in items)


def test_copied_sentences_fit_the_source_limit(train: list[Example]) -> None:
    """One sentence the service cannot split must fit the model whole (the two 413s of the last model)."""
    for ex in train:
        if ex.category.startswith(("copy_", "context_")):
            assert fits_one_piece(ex.source), ex
    assert not fits_one_piece("뾪격즂먐꽲 좣쳿셉겦걒 뮃층춊싲 쵶뭌퓖횢훹 拚坱釅瓝蒜崛鲛虢 ฬฒบฏฒฮยบขฝดญมวซวซ")


def test_sentences_with_several_expressions_rewrite_each_apart(train: list[Example], test_split: list[Example]) -> None:
    """Two or three expressions in one sentence ("El once de mayo de dos mil uno llegaron doscientas
    personas."), each rewritten where it stands, with words between them that stay."""
    for ex in by_category(train)["sentence_multiple_es"] + by_category(test_split)["sentence_multiple_en"]:
        words, target = ex.source.split(" "), ex.target.split(" ")
        # Aligned as written, "11" in "el 11 jun 1909 ... once manzanas" can match the "11" that "once" became
        # and cut the spans wrong; with the source's digits masked, a number copied as is ("93544") cannot
        # match at all. One of the two alignments must show each expression rewritten apart.
        masked = ["<digits>" if any(c.isdigit() for c in word) else word for word in words]
        assert any(_each_rewritten_apart(source, target) for source in (words, masked)), ex
        assert fits_one_piece(ex.source), ex


def _each_rewritten_apart(source: list[str], target: list[str]) -> bool:
    """At least two differing spans, each of which writes digits."""
    rewritten = [
        target[j1:j2]
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=source, b=target, autojunk=False).get_opcodes()
        if tag != "equal"
    ]
    return len(rewritten) >= 2 and all(any(c.isdigit() for c in " ".join(new)) for new in rewritten)


def test_the_last_days_of_a_month_are_trains_and_held_out_sentences_use_them() -> None:
    """Whether October has a 31st is a fact to learn, not a pattern: the days from 29 on are never held out
    alone, and held-out sentences still hold them (in held-out carriers)."""
    assert all(day_of_year_split(month, day) == "train" for month in range(1, 13) for day in (29, 30, 31))
    assert any(day_of_year_split(month, day) == "test" for month in range(1, 13) for day in range(1, 29))
    held_out_days = {
        int(found.group(1) or found.group(2))
        for ex in generate_examples(3 * N, seed=5, split="test")
        if ex.category.startswith("date_yearless")
        for found in [re.search(r"\b(\d{1,2}) de |[A-Z][a-z]+ (\d{1,2})\b|the (\d{1,2}) of", ex.target)]
        if found and (found.group(1) or found.group(2))
    }
    assert {29, 30, 31} <= held_out_days


def test_counts_of_thousands_and_millions_are_drawn_whole() -> None:
    """ "mil millones", "dos millones", "cien mil": round counts of a scale, which the earlier models wrote
    with a zero too few."""
    rng = random.Random(0)
    drawn = {sample_number(rng, "train") for _ in range(20_000)}
    assert {10**3, 10**6, 10**9} <= drawn
    assert any(n % 10**9 == 0 and 1 < n // 10**9 < 10 for n in drawn)


def test_long_numbers_in_training_often_hold_a_small_group_and_held_out_ones_do_not() -> None:
    """380 003 676 ("three hundred and eighty million, three thousand, ...") has zeros written nowhere; a
    make-train model wrote it "38003676". Training draws a group under ten inside a long number that is not
    round several times as often as the held-out splits, which draw as before (the test set's checksum)."""

    def small_group_share(split: str) -> float:
        rng = random.Random(3)
        drawn = (sample_number(rng, split) for _ in range(20_000))
        long_numbers = [n for n in drawn if n >= 10**6 and n % 1000 != 0]
        small = [n for n in long_numbers if any(n // 1000**k % 1000 < 10 for k in range(len(str(n)) // 3))]
        return len(small) / len(long_numbers)

    assert small_group_share("train") > 0.1
    assert small_group_share("test") < 0.05


def test_no_training_expression_is_drawn_before_a_word_that_would_join_it() -> None:
    """ "doscientos un íjodycu" is 201 íjodycu and "mil un Burundi" 1001: a training sentence with a number right
    before "un", "una", "uno" or "one" taught "200 un íjodycu" (the edit guard reverts it). Nor is an expression
    drawn inside an English impossible date, which keeps its month and day: "February on the thirtieth of March
    twenty-ninth, 2031" holds the real date "March twenty-ninth, 2031", which a target may not."""
    rng = random.Random(11)
    for _ in range(3000):
        carrier = carrier_template(rng, "train", "number_es", "{n}")
        assert not re.search(r"\{n\} [«¿¡(]*(?:un|una|uno)\b", carrier, re.IGNORECASE), carrier
    values, months = number_values(), month_numbers()
    number_word = "|".join(sorted(cardinal_words(), key=len, reverse=True))
    said_before_tail = re.compile(rf"\b(?:{number_word}) (?:un|una|uno|one)\b", re.IGNORECASE)
    kept_date = re.compile(r"\b([A-Z][a-z]+) ([a-z]+(?:-[a-z]+)?), (\d{4})\b")
    for lang in ("es", "en"):
        for _ in range(3000):
            source, target = multiple_expressions(rng, "train", lang)
            converted_before_tail = re.search(r"\d (?:un|una|uno|one)\b", target, re.IGNORECASE)
            assert not (converted_before_tail and said_before_tail.search(source)), (source, target)
            for month, day, year in kept_date.findall(target):
                if month.lower() in months and all(part in values for part in day.split("-")):
                    day_value = sum(values[part] for part in day.split("-"))
                    with pytest.raises(ValueError):
                        dt.date(int(year), months[month.lower()], day_value)


def test_nonsense_words_never_spell_a_number_word() -> None:
    """Syllables can spell "ocho", "tres" or "four": a copy sentence holding one taught the model to leave a
    number word alone (a copy_markup test example kept "four")."""
    rng = random.Random(1)
    forbidden = forbidden_words()
    assert not {pseudo_word(rng).lower() for _ in range(50_000)} & forbidden


def test_the_last_days_of_a_month_are_drawn_often_enough_to_learn_the_calendar() -> None:
    """ "February twenty-ninth" or "April thirtieth" are dates, "April thirty-first" is not: drawn uniformly
    the last days were 1 in 12 of the days and stayed words."""
    rng = random.Random(2)
    days = [sample_day_of_year(rng, "train")[1] for _ in range(20_000)]
    assert 0.15 < sum(day >= 29 for day in days) / len(days) < 0.3
    february = [day for month, day in (sample_day_of_year(rng, "train") for _ in range(20_000)) if month == 2]
    assert february.count(29) > 3 * len(february) / 29


def test_every_line_of_a_paragraph_fits_the_bundled_model(train: list[Example], test_split: list[Example]) -> None:
    """The service splits at every line break but not always between two sentences (a word salad without a
    final stop runs into the next), so a paragraph's line must fit whole: two test paragraphs were 413s.
    Counted with the bundled model's tokenizer, EOS included (the generator's bound is an estimate)."""
    tokenizer = Tokenizer.from_file(Path(__file__).parents[3] / "models" / "normalize" / "1" / "tokenizer.json")
    for ex in train + test_split:
        if ex.category.startswith("paragraph_"):
            assert all(len(tokenizer.encode(line.strip())) + 1 <= 128 for line in ex.source.split("\n")), ex


def test_leap_days_are_dates_and_29_february_of_common_years_none(
    train: list[Example], test_split: list[Example]
) -> None:
    """ "veintinueve de febrero de dos mil veinte" -> "2020-02-29"; of a common year it stays no date."""
    for examples, split in ((train, "train"), (test_split, "test")):
        leap = [
            m for ex in examples if ex.category.startswith("date_") and (m := re.search(r"(\d{4})-02-29", ex.target))
        ]
        assert len(leap) >= 5 and all(calendar.isleap(int(m[1])) for m in leap), split
    for pattern in (
        r"\b29 de febrero de (\d{4})",
        r"February twenty-ninth, (\d{4})",
        r"twenty-ninth of February, (\d{4})",
    ):
        common = [m for ex in train if (m := re.search(pattern, ex.target))]
        assert common and all(not calendar.isleap(int(m[1])) for m in common), pattern


def test_training_draws_leap_days_about_half_as_often_as_common_years_29_february(train: list[Example]) -> None:
    """Which years are leap is learned from examples of both: at a 15% leap share a run saw many more common
    years' 29 Februaries (impossible dates) than leap days and wrote every spoken leap day as no date; with
    common years' 29 Februaries rare among the impossible dates, a run wrote most of them as dates. Over every
    category the generator draws about one leap day for two of them (0.50 and 0.54 over 20,000 examples of
    seeds 0 and 1; this test once counted only the spoken categories' leap days, 0.41-0.43, and passed on
    seed 0's luck); the minimal-pair drills (model/drills.py) add both one to one."""
    leap = sum(len(re.findall(r"\d{4}-02-29", ex.target)) for ex in train)
    common_years = (
        r"\b29 de febrero de \d{4}|February twenty-ninth, \d{4}|twenty-ninth of February, \d{4}"
        r"|29 February \d{4}|February 29, \d{4}"
    )
    common = sum(len(re.findall(common_years, ex.target)) for ex in train)
    assert common > 60 and 0.35 < leap / common < 0.8, (leap, common)


def test_training_puts_leap_days_in_sentences_as_it_does_common_years_29_february(train: list[Example]) -> None:
    """The test split has its leap days inside sentences; when training drew them only bare, every model wrote
    a leap day in a sentence as no date: the only 29 Februaries it had seen in sentences were impossible ones."""
    leap_targets = [ex.target for ex in train if re.search(r"\d{4}-02-29", ex.target)]
    in_sentences = [t for t in leap_targets if not re.fullmatch(r"\d{4}-02-29", t)]
    assert len(leap_targets) > 20 and 0.5 < len(in_sentences) / len(leap_targets) < 0.9, (
        len(in_sentences),
        len(leap_targets),
    )


def test_common_years_29_february_drawn_on_request_and_held_out_splits_draw_as_before() -> None:
    """Training asks for common years' 29 Februaries (only the year tells them from leap days); a held-out
    split asks for none and must consume the same random numbers as before, or the test set would change."""
    drawn = [sample_impossible_day(random.Random(seed), "train", common_29_february=1.0) for seed in range(200)]
    assert all(month == 2 and day == 29 and not calendar.isleap(year) for year, month, day in drawn)
    assert len({year for year, _, _ in drawn}) > 50
    # Two in three of an even year (a third of common years are): the leap days are all even.
    assert 0.55 < sum(year % 2 == 0 for year, _, _ in drawn) / len(drawn) < 0.8
    for seed in range(50):
        plain, asked_none = random.Random(seed), random.Random(seed)
        assert sample_impossible_day(plain, "test") == sample_impossible_day(asked_none, "test", common_29_february=0.0)
        assert plain.random() == asked_none.random()


def test_the_leap_day_probe_holds_every_years_29_february_in_both_languages(tmp_path: Path) -> None:
    from model.evaluate import leap_day_probe, main

    probe = leap_day_probe()
    # The leap years are 1904-2096, 49 of them: 1900 is common, 2000 leap.
    assert Counter(ex.category for ex in probe) == {"leap_es": 49, "leap_en": 49, "common_es": 151, "common_en": 151}
    for ex in probe:
        year = int(re.search(r"\d{4}", ex.target).group())
        assert calendar.isleap(year) == ex.category.startswith("leap") and not re.search(r"\d", ex.source), ex
        assert (ex.target == f"{year}-02-29") == calendar.isleap(year), ex
    assert main(["--write-leap-probe", str(tmp_path / "probe.jsonl")]) == 0
    assert read_pairs_jsonl(tmp_path / "probe.jsonl") == probe


def test_the_leap_day_carrier_probe_splits_common_years_by_parity_inside_sentences(tmp_path: Path) -> None:
    from model.evaluate import leap_day_carrier_probe, main

    probe = leap_day_carrier_probe(per_year=1)
    # Spanish 1900-2099 (49 leap years, 1900 common and even), English 2000-2099 (25 leap years from 2000).
    assert Counter(ex.category for ex in probe) == {
        "leap_es": 49,
        "common_es_even": 51,
        "common_es_odd": 100,
        "leap_en": 25,
        "common_en_even": 25,
        "common_en_odd": 50,
    }
    for ex in probe:
        year = int(re.search(r"\b(19|20)\d\d\b", ex.target).group())
        assert (ex.target.count(f"{year}-02-29") == 1) == calendar.isleap(year), ex
        assert ex.category.endswith("odd") == (year % 2 == 1), ex
        # In a sentence: the carrier's words stand around the expression, the same in source and target.
        assert len(ex.source.split()) > len(ex.target.split()) > 1, ex
    assert main(["--write-leap-carrier-probe", str(tmp_path / "carriers.jsonl")]) == 0
    assert len(read_pairs_jsonl(tmp_path / "carriers.jsonl")) == 2 * len(probe)


AFTER_A_ROUND_NUMBER = re.compile(r"(\bciento|\bmil|cientos|cientas) una? [a-zá-ú]")


def test_training_counts_nouns_with_one_after_a_round_number(train: list[Example]) -> None:
    """ "ciento un dálmatas", "mil una noches": a model that saw them about once in a thousand counts wrote
    "mil un años" as "1000 un años" and "ciento un dálmatas" as "10 un dálmatas"."""
    counted = [ex for ex in train if ex.category == "number_noun_es"]
    after_round = [ex for ex in counted if AFTER_A_ROUND_NUMBER.search(ex.source)]
    assert len(after_round) > 0.08 * len(counted), (len(after_round), len(counted))
    rng = random.Random(0)
    bare = [counted_noun(rng, "train", "es")[0] for _ in range(2000)]
    assert sum(bool(AFTER_A_ROUND_NUMBER.search(source)) for source in bare) > 0.08 * len(bare)


def test_the_published_test_set_is_unchanged(tmp_path: Path) -> None:
    """Training's draws may change; the held-out test set (v8, README "The bundled model") may not, or the
    figures of every model before stop being comparable. A deliberate change publishes a new version
    (README, the test set's name) and this digest."""
    written = tmp_path / "test-set.jsonl"
    write_pairs_jsonl(written, held_out_examples(20, 12345))
    assert hashlib.sha256(written.read_bytes()).hexdigest() == TEST_SET_V8_DIGEST


def test_a_larger_sample_of_one_category_is_drawn_from_the_same_held_out_split() -> None:
    """`python -m model.evaluate --categories paragraph_mixed --per-category 1000`: 300 examples cannot tell 97.7%
    from 98.0%; the larger sample comes from the test split and only holds the categories asked for."""
    sample = held_out_examples(40, 777, ["paragraph_mixed", "ordinal_en"])
    assert [ex.category for ex in sample] == ["paragraph_mixed"] * 40 + ["ordinal_en"] * 40
    whole = held_out_examples(40, 777)
    assert [ex for ex in whole if ex.category == "ordinal_en"] == sample[40:]
    with pytest.raises(ValueError, match="unknown categories"):
        held_out_examples(5, 777, ["paragraphs"])


def test_the_larger_sample_is_written_without_a_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from model.evaluate import main

    written = tmp_path / "paragraphs.jsonl"
    argv = ["--checkpoint", str(tmp_path / "none"), "--categories", "paragraph_mixed, paragraph_mixed"]
    assert (
        main([*argv, "--per-category", "12", "--seed", "4242", "--write-test-set", str(written), "--no-evaluate"]) == 0
    )
    assert [json.loads(line)["category"] for line in written.read_text().splitlines()] == ["paragraph_mixed"] * 12
    for refused in (["--no-evaluate"], ["--data", str(written), "--write-test-set", str(written), "--no-evaluate"]):
        with pytest.raises(SystemExit):
            main([*argv, *refused])
    assert "--write-test-set" in capsys.readouterr().err


def test_training_numbers_in_digits_are_often_round_amounts_and_held_out_ones_as_before() -> None:
    """Runs of one digit ("$2,500,000") are what the models lost count in; only training draws them more."""
    run = re.compile(r"(\d)[,.' ]?\1[,.' ]?\1")

    def share_with_runs(split: str) -> float:
        rng = random.Random(12)
        share = round_amount_share(split)
        pieces = [copy_piece(rng, ["casa"], "digits", round_amount_share=share) for _ in range(2000)]
        return sum(bool(run.search(p)) for p in pieces) / len(pieces)

    assert round_amount_share("valid") == round_amount_share("test") == 0.0
    assert share_with_runs("train") > share_with_runs("test") + 0.3
    rng = random.Random(13)
    for _ in range(500):
        text, value = amount_in_digits(rng)
        digits = re.sub(r"\D", "", text)
        assert digits in (str(value), f"{value}00") and re.search(r"(\d)\1", digits) and value < 10**12, text
