"""Frequent-word sentences: real words, in the frames dates are written in, with no word an expression is
made of and no held-out word; an expression, when there is one, is the only thing the target changes, and
nothing beside it could join it."""

from __future__ import annotations

import random
import re

import pytest
from num2words import num2words

from model import frequent_text
from model.data import generate_examples
from model.drills import FREQUENT_WORD_CATEGORY, mix_in_frequent_word_drills
from model.frequent_text import (
    JOINING_WORDS,
    LOOKALIKES,
    SMALL_COUNTS,
    frequent_word_sentence,
    frequent_word_text,
    frequent_words,
    held_out_only_words,
    small_count,
    spoken_year,
)
from model.words import GUARD_CONNECTORS, OTHER_LANGUAGES_NUMBER_WORDS, edit_guard_spec, month_names
from service.engine.edit_guard import EditGuard

EXPRESSION_WORDS = frozenset(edit_guard_spec()["consumable_words"]) - frozenset(GUARD_CONNECTORS)  # type: ignore[arg-type]


@pytest.fixture
def marked_expressions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every expression drawn as the marker "EXPR" -> "CONVERTED", to find where it went, and no amounts in digits
    (their words in brackets convert too)."""
    monkeypatch.setattr(
        frequent_text, "drill_expression", lambda rng, lang, range_share=0.0, unit_share=0.0: ("EXPR", "CONVERTED")
    )
    monkeypatch.setattr(frequent_text, "AMOUNT_SHARE", 0.0)


def test_the_lists_hold_real_words_but_no_expression_word_and_no_held_out_word() -> None:
    for lang, known in (("es", {"puerta", "gobierno", "trabajo"}), ("en", {"government", "window", "because"})):
        words = frequent_words(lang)
        assert len(words) > 7000 and known <= set(words)
        assert set(words) & EXPRESSION_WORDS == OTHER_LANGUAGES_NUMBER_WORDS[lang]
        assert held_out_only_words(lang) and not set(words) & held_out_only_words(lang)
    assert {"once", "ago"} <= set(frequent_words("en")) and "ten" in frequent_words("es")
    # The held-out carrier "Hemos recibido {n} currículos para el puesto de fontanero." keeps its words unseen.
    assert {"puesto", "fontanero", "currículos"} <= held_out_only_words("es")
    assert {"lunes", "mayo", "veinte", "primero"}.isdisjoint(frequent_words("es"))
    assert {"monday", "may", "twenty", "first"}.isdisjoint(frequent_words("en"))
    # Words of the other language's expressions only: Spanish eleven, August's abbreviation, English ten.
    assert num2words(11, lang="es") == "once" and "ago" in {m.lower() for m in month_names("es")}
    assert num2words(10, lang="en") == "ten" and not {"once", "ago"} & {num2words(n, lang="en") for n in range(100)}


def test_every_pair_passes_the_edit_guard_and_most_are_framed() -> None:
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(3)
    copied = framed = 0
    for _ in range(1500):
        source, target = frequent_word_sentence(rng, rng.choice(("es", "en")))
        assert guard.apply(source, target).text == target, (source, target)
        assert source == target or re.search(r"\d", target), (source, target)
        text_source, text_target = frequent_word_text(rng, rng.choice(("es", "en")))
        assert guard.apply(text_source, text_target).text == text_target, (text_source, text_target)
        copied += source == target
        framed += bool(re.search(r"\b(el|la|los|las|del|al|the|a|this) \w+ (de|del|of|in) \w+", source))
    assert 0.3 < copied / 1500 < 0.5 and framed > 600


def test_nothing_beside_an_expression_joins_it(marked_expressions: None) -> None:
    # A marker for the expression, to find where it went: the words either side must not read on into it.
    rng = random.Random(4)
    placed = twice = 0
    for _ in range(3000):
        source, target = frequent_word_sentence(rng, rng.choice(("es", "en")))
        words = source.strip("¿¡.,?!:").split(" ")
        if "EXPR" not in words:
            assert source == target
            continue
        placed += 1
        twice += words.count("EXPR") == 2
        assert target == source.replace("EXPR", "CONVERTED")
        for at in (i for i, word in enumerate(words) if word == "EXPR"):
            for neighbour in words[at - 1 : at] + words[at + 1 : at + 2]:
                assert neighbour != "EXPR" and neighbour.lower() not in JOINING_WORDS, source
    assert placed > 1500 and 0.2 < twice / placed < 0.3


def test_mix_in_replaces_the_middle_of_the_batch_and_is_seeded() -> None:
    batch = generate_examples(64, seed=3, split="train")
    mixed = mix_in_frequent_word_drills(batch, random.Random(5), 0.125)
    assert len(mixed) == 64 and mixed[:32] == batch[:32] and mixed[40:] == batch[40:]
    assert [e.category for e in mixed[32:40]] == [FREQUENT_WORD_CATEGORY] * 8
    assert mixed == mix_in_frequent_word_drills(batch, random.Random(5), 0.125)


def test_lookalike_phrases_are_copied_and_never_beside_the_expression(
    marked_expressions: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(frequent_text, "LOOKALIKES", {"es": ("LOOK",), "en": ("LOOK",)})
    rng = random.Random(5)
    with_lookalike = 0
    for _ in range(3000):
        source, target = frequent_word_sentence(rng, rng.choice(("es", "en")))
        words = source.strip("¿¡.,?!:").split(" ")
        if "LOOK" not in words:
            continue
        with_lookalike += 1
        assert target == source.replace("EXPR", "CONVERTED")
        assert "EXPR LOOK" not in source and "LOOK EXPR" not in source, source
    assert 0.25 < with_lookalike / 3000 < 0.35
    # The real phrases: their words are the contract's, but no expression.
    assert {"miles de", "the first of many", "por ciento", "on Monday"} <= set(LOOKALIKES["es"] + LOOKALIKES["en"])


def test_lookalike_phrases_hold_no_held_out_word() -> None:
    for lang in ("es", "en"):
        words = {w.lower() for phrase in LOOKALIKES[lang] for w in phrase.split(" ")}
        assert not words & held_out_only_words(lang), lang


def test_amounts_in_digits_are_copied_and_their_words_in_brackets_converted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        frequent_text, "drill_expression", lambda rng, lang, range_share=0.0, unit_share=0.0: ("EXPR", "CONVERTED")
    )
    monkeypatch.setattr(frequent_text, "AMOUNT_SHARE", 1.0)
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(8)
    in_words = 0
    for _ in range(1500):
        source, target = frequent_word_sentence(rng, rng.choice(("es", "en")))
        amount = re.search(r"\d[\d,.' ]*\d", target)
        assert amount and amount.group() in source, (source, target)
        assert re.search(r"(\d)\1", amount.group().replace(",", "").replace(".", "")), amount.group()  # a run
        value = re.search(r"\d[\d,.' ]*\d(?:,00|\.00)?(?: [A-Z€$£¥]+)? \((\d+)\)", target)
        if value:
            in_words += 1
            digits = re.sub(r"\D", "", amount.group())
            assert digits.removesuffix("00") == value.group(1) or digits == value.group(1), target
        plain = source.replace("EXPR", "CONVERTED")
        assert guard.apply(plain, target).text == target, (plain, target)
    assert 0.2 < in_words / 1500 < 0.4


def test_lookalikes_stay_apart_from_expressions_placed_after_an_amount(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        frequent_text, "drill_expression", lambda rng, lang, range_share=0.0, unit_share=0.0: ("EXPR", "CONVERTED")
    )
    monkeypatch.setattr(frequent_text, "AMOUNT_SHARE", 1.0)
    monkeypatch.setattr(frequent_text, "AMOUNT_IN_WORDS_SHARE", 0.0)
    monkeypatch.setattr(frequent_text, "LOOKALIKE_SHARE", 1.0)
    monkeypatch.setattr(frequent_text, "LOOKALIKES", {"es": ("LOOK",), "en": ("LOOK",)})
    rng = random.Random(14)
    for _ in range(2000):
        source, _ = frequent_word_sentence(rng, rng.choice(("es", "en")))
        assert "EXPR LOOK" not in source and "LOOK EXPR" not in source, source


def test_spoken_years_alone_convert_and_pass_the_guard() -> None:
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(10)
    forms = set()
    for _ in range(500):
        source, target = spoken_year(rng)
        lead, year = target.rsplit(" ", 1)
        assert source.startswith(lead + " ") and 1900 <= int(year) <= 2099
        assert guard.apply(source, target).text == target, (source, target)
        forms.add(" oh" in source or "twenty twenty" in source or "thousand" in source)
    assert forms == {True, False}


def test_small_counts_are_two_to_twelve_the_smaller_more_often() -> None:
    rng = random.Random(6)
    counts = []
    titled = 0
    for _ in range(2000):
        lang = rng.choice(("es", "en"))
        source, target = small_count(rng, lang)
        number, word = target.split(" ")
        assert source.endswith(" " + word) and word.lower() not in JOINING_WORDS
        counts.append(int(number))
        titled += source[0].isupper()
    assert set(counts) == set(SMALL_COUNTS)
    assert 0.06 < titled / 2000 < 0.14  # "Chapter Twelve", "Room Nine"
    assert counts.count(2) > 2 * counts.count(12)
    assert small_count(random.Random(0), "es")[0].split(" ")[0] in EXPRESSION_WORDS


def test_texts_of_several_sentences_convert_every_sentence(marked_expressions: None) -> None:
    rng = random.Random(7)
    several = with_break = later_expression = 0
    for _ in range(2000):
        source, target = frequent_word_text(rng, rng.choice(("es", "en")))
        assert target == source.replace("EXPR", "CONVERTED")
        sentences = re.split(r"(?<=[.?!])[ \n]", source)
        if len(sentences) == 1:
            continue
        several += 1
        with_break += "\n" in source
        later_expression += any("EXPR" in s for s in sentences[1:])
        assert 2 <= len(sentences) <= 3 and all(s[-1] in ".?!" for s in sentences), source
    assert 0.3 < several / 2000 < 0.4 and with_break > 0.2 * several and later_expression > 0.5 * several


def test_punctuated_expressions_keep_their_marks_in_the_target(marked_expressions: None) -> None:
    rng = random.Random(8)
    expressions = marked = marked_words = 0
    for _ in range(2000):
        lang = rng.choice(("es", "en"))
        source, target = frequent_word_text(rng, lang, punctuated_share=0.3)
        assert target == source.replace("EXPR", "CONVERTED")
        for found in re.finditer(r"(\S*)EXPR(\S*)", source):
            expressions += 1
            before, after = found.group(1).lstrip("¿¡"), found.group(2).rstrip(".?!")
            marked += (before, after) in frequent_text.PUNCTUATION_AROUND[lang] and (before or after) != ""
        marked_words += len(re.findall(r"[(“«\[*]\w+[)”»\]*]", source.replace("EXPR", "")))
    assert 0.2 < marked / expressions < 0.4 and marked_words > 200
    # Without the share nothing is marked: the sentences are drawn as before it existed.
    plain = [frequent_word_text(random.Random(seed), "es") for seed in range(200)]
    assert plain == [frequent_word_text(random.Random(seed), "es", punctuated_share=0.0) for seed in range(200)]
    assert not any(re.search(r"[(“«\[*|]", source) for source, _ in plain)


def test_markup_marks_expressions_and_wraps_texts_in_html(marked_expressions: None) -> None:
    rng = random.Random(9)
    tagged_expressions = blocks = 0
    for _ in range(2000):
        source, target = frequent_word_text(rng, rng.choice(("es", "en")), punctuated_share=0.3, markup_share=0.4)
        assert target == source.replace("EXPR", "CONVERTED")
        tagged_expressions += len(re.findall(r"<[a-z]+[^>]*>EXPR|EXPR</?[a-z]+/?>", source))
        blocks += any(source.startswith(a) and source.endswith(b) for a, b in frequent_text.MARKUP_BLOCKS)
    assert tagged_expressions > 50 and 0.15 < blocks / 2000 < 0.3
    # Without markup the marks are drawn exactly as before it existed.
    for seed in range(200):
        shares = {"punctuated_share": 0.3, "opening_share": 0.25}
        assert frequent_word_text(random.Random(seed), "es", **shares) == frequent_word_text(
            random.Random(seed), "es", markup_share=0.0, **shares
        )
        assert "<" not in frequent_word_text(random.Random(seed), "en", **shares)[0]


def test_opening_expressions_open_their_sentences_capitalized(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        frequent_text, "drill_expression", lambda rng, lang, range_share=0.0, unit_share=0.0: ("eXPR", "cONVERTED")
    )
    monkeypatch.setattr(frequent_text, "AMOUNT_SHARE", 0.0)  # amounts in words convert too
    rng = random.Random(9)
    sentences = opened = 0
    for _ in range(1000):
        lang = rng.choice(("es", "en"))
        source, target = frequent_word_text(rng, lang, opening_share=1.0)
        assert target == source.replace("EXPR", "CONVERTED").replace("eXPR", "cONVERTED")
        for sentence in re.split(r"(?<=[.?!])[ \n]", source):
            if "XPR" in sentence:
                sentences += 1
                opened += sentence.lstrip("¿¡").startswith("EXPR")  # first, and written with a capital
    assert sentences > 500 and opened == sentences
    # Without the share the drills are drawn as before it existed; with half of it, about half open.
    plain = [frequent_word_text(random.Random(seed), "en") for seed in range(200)]
    assert plain == [frequent_word_text(random.Random(seed), "en", opening_share=0.0) for seed in range(200)]
    # (47% over 20,000 seeds: a text's expression may be in a later sentence, which it does not open.)
    halves = [frequent_word_text(random.Random(seed), "en", opening_share=0.5)[0] for seed in range(6000)]
    with_expression = [s for s in halves if "XPR" in s]
    assert 0.43 < sum(s.startswith("EXPR") for s in with_expression) / len(with_expression) < 0.6
